// Small CUDA utilities of the device module: error mapping, a device guard, and owning wrappers
// for device buffers, page-locked buffers, streams and events. Nothing here throws: failures
// become flcc_result codes.
#pragma once

#include "flcc.h"

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

namespace flcc::device {

// An allocation failure is recoverable (FLCC_ALLOC_FAILED); anything else is a device error.
// The runtime's last error is cleared so the next call starts clean.
inline flcc_result to_result(cudaError_t e)
{
    if (e == cudaSuccess) return FLCC_SUCCESS;
    cudaGetLastError();
    return e == cudaErrorMemoryAllocation ? FLCC_ALLOC_FAILED : FLCC_DEVICE_ERROR;
}

#define FLCC_CUDA_TRY(expr)                                                                   \
    do {                                                                                      \
        const flcc_result flcc_try_r_ = ::flcc::device::to_result(expr);                      \
        if (flcc_try_r_ != FLCC_SUCCESS) return flcc_try_r_;                                  \
    } while (0)

// Returns the flcc_result of `expr` when it is a failure.
#define FLCC_TRY(expr)                                                                        \
    do {                                                                                      \
        const flcc_result flcc_try_code_ = (expr);                                            \
        if (flcc_try_code_ != FLCC_SUCCESS) return flcc_try_code_;                            \
    } while (0)

// Makes `ordinal` current for the guard's lifetime (-1: leave the current device), restoring the
// caller's device afterwards: the library never changes the caller's current device.
class DeviceGuard {
public:
    explicit DeviceGuard(int ordinal)
    {
        cudaGetDevice(&previous_);
        if (ordinal >= 0 && ordinal != previous_) {
            ok_ = cudaSetDevice(ordinal) == cudaSuccess;
            switched_ = ok_;
        }
        if (!ok_) cudaGetLastError();
    }
    ~DeviceGuard()
    {
        if (switched_) cudaSetDevice(previous_);
    }
    bool ok() const { return ok_; }
    DeviceGuard(const DeviceGuard&) = delete;
    DeviceGuard& operator=(const DeviceGuard&) = delete;

private:
    int previous_ = 0;
    bool ok_ = true, switched_ = false;
};

// An owning device (or page-locked host) allocation.
template <bool Pinned>
class Buffer {
public:
    Buffer() = default;
    Buffer(Buffer&& o) noexcept : p_(std::exchange(o.p_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
    Buffer& operator=(Buffer&& o) noexcept
    {
        std::swap(p_, o.p_);
        std::swap(bytes_, o.bytes_);
        return *this;
    }
    ~Buffer() { reset(); }

    flcc_result allocate(size_t bytes)
    {
        reset();
        if (bytes == 0) return FLCC_SUCCESS;
        const cudaError_t e = Pinned ? cudaHostAlloc(&p_, bytes, cudaHostAllocPortable) : cudaMalloc(&p_, bytes);
        if (e != cudaSuccess) {
            p_ = nullptr;
            return to_result(e);
        }
        bytes_ = bytes;
        return FLCC_SUCCESS;
    }
    void reset()
    {
        if (p_ != nullptr) Pinned ? cudaFreeHost(p_) : cudaFree(p_);
        p_ = nullptr;
        bytes_ = 0;
    }
    template <class T>
    T* as() const { return static_cast<T*>(p_); }
    size_t bytes() const { return bytes_; }

private:
    void* p_ = nullptr;
    size_t bytes_ = 0;
};
using DeviceBuffer = Buffer<false>;
using PinnedBuffer = Buffer<true>;

class Stream {
public:
    Stream() = default;
    ~Stream()
    {
        if (s_ != nullptr) cudaStreamDestroy(s_);
    }
    // A failed create can leave its output unset: the handle is kept only on success, so the
    // destructor never destroys a handle the runtime did not make.
    flcc_result create()
    {
        cudaStream_t s = nullptr;
        FLCC_CUDA_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        s_ = s;
        return FLCC_SUCCESS;
    }
    cudaStream_t get() const { return s_; }
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;

private:
    cudaStream_t s_ = nullptr;
};

class Event {
public:
    Event() = default;
    ~Event()
    {
        if (e_ != nullptr) cudaEventDestroy(e_);
    }
    // As Stream::create: the handle is kept only on success.
    flcc_result create()
    {
        cudaEvent_t e = nullptr;
        FLCC_CUDA_TRY(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
        e_ = e;
        return FLCC_SUCCESS;
    }
    cudaEvent_t get() const { return e_; }
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;

private:
    cudaEvent_t e_ = nullptr;
};

}  // namespace flcc::device
