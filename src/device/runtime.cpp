// The CUDA runtime services of the device backend (plan/backend.h's DeviceRuntime): is a
// device usable, where a pointer lives, copies, device memory and page-locked host memory for
// flcc_malloc. A machine without a GPU or driver is normal: every query answers "no" and
// nothing is printed.
#include "device/runtime.h"

#include <cuda_runtime.h>

namespace flcc::device {

namespace {

// Number of usable devices, probed once (the probe initialises the runtime).
int device_count()
{
    static const int count = [] {
        int n = 0;
        if (cudaGetDeviceCount(&n) != cudaSuccess) {
            cudaGetLastError();   // clear the error so later calls start clean
            return 0;
        }
        return n;
    }();
    return count;
}

}  // namespace

bool CudaRuntime::available(int ordinal) const
{
    const int n = device_count();
    if (n == 0) return false;
    if (ordinal < 0) {
        int current = 0;
        if (cudaGetDevice(&current) != cudaSuccess) {
            cudaGetLastError();
            return false;
        }
        ordinal = current;
    }
    return ordinal < n;
}

void* CudaRuntime::pinned_alloc(size_t bytes) const
{
    if (device_count() == 0) return nullptr;
    void* p = nullptr;
    if (cudaHostAlloc(&p, bytes, cudaHostAllocPortable) != cudaSuccess) {
        cudaGetLastError();
        return nullptr;
    }
    return p;
}

void CudaRuntime::pinned_free(void* p) const { cudaFreeHost(p); }

MemorySpace CudaRuntime::memory_space(const void* p) const
{
    if (device_count() == 0 || p == nullptr) return MemorySpace::host;
    cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        cudaGetLastError();
        return MemorySpace::host;
    }
    // Managed memory is usable from the device; page-locked host memory counts as host.
    return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged ? MemorySpace::device
                                                                             : MemorySpace::host;
}

bool CudaRuntime::copy_to_host(void* dst, const void* src, size_t bytes) const
{
    if (cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost) == cudaSuccess) return true;
    cudaGetLastError();
    return false;
}

bool CudaRuntime::copy_to_device(void* dst, const void* src, size_t bytes) const
{
    // From pageable memory cudaMemcpy may return before its DMA ends, on the legacy stream that
    // the plans' non-blocking streams do not wait for: the copy is complete on return.
    if (cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice) == cudaSuccess &&
        cudaStreamSynchronize(cudaStreamLegacy) == cudaSuccess)
        return true;
    cudaGetLastError();
    return false;
}

void* CudaRuntime::device_alloc(size_t bytes, int ordinal) const
{
    if (!available(ordinal)) return nullptr;
    int previous = 0;
    cudaGetDevice(&previous);
    if (ordinal >= 0) cudaSetDevice(ordinal);
    void* p = nullptr;
    if (cudaMalloc(&p, bytes) != cudaSuccess) {
        cudaGetLastError();
        p = nullptr;
    }
    cudaSetDevice(previous);
    return p;
}

void CudaRuntime::device_free(void* p) const { cudaFree(p); }

std::string gpu_signature()
{
    int dev = 0;
    cudaDeviceProp prop;
    if (cudaGetDevice(&dev) == cudaSuccess && cudaGetDeviceProperties(&prop, dev) == cudaSuccess)
        return std::string(" gpu=") + prop.name + " sm" + std::to_string(prop.major * 10 + prop.minor);
    cudaGetLastError();
    return std::string();
}

}  // namespace flcc::device
