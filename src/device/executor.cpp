#include "device/executor.h"

namespace flcc::device {

flcc_result DeviceExecutor::init()
{
    DeviceGuard guard(p_.device);
    if (!guard.ok()) return FLCC_NO_DEVICE;
    flcc_result r;
    if ((r = compute_.create()) != FLCC_SUCCESS) return r;
    if ((r = upload_.create()) != FLCC_SUCCESS) return r;
    if ((r = download_.create()) != FLCC_SUCCESS) return r;
    if ((r = legacy_done_.create()) != FLCC_SUCCESS) return r;
    for (int b = 0; b < 2; ++b) {
        if ((r = uploaded_[b].create()) != FLCC_SUCCESS) return r;
        if ((r = computed_[b].create()) != FLCC_SUCCESS) return r;
        if ((r = downloaded_[b].create()) != FLCC_SUCCESS) return r;
    }
    if ((r = status_.allocate(sizeof(int))) != FLCC_SUCCESS) return r;
    *status_.as<int>() = 0;
    // A plan for host data gets its pipeline now, so that exec allocates nothing.
    if (!p_.device_resident) return pipeline_buffers();
    return FLCC_SUCCESS;
}

flcc_result DeviceExecutor::pipeline_buffers()
{
    if (in_[0].bytes() != 0) return FLCC_SUCCESS;
    const size_t in = size_t(p_.image_elems()) * sizeof(float), out = size_t(p_.out_elems()) * sizeof(float);
    for (int b = 0; b < 2; ++b) {
        flcc_result r;
        if ((r = in_[b].allocate(in)) != FLCC_SUCCESS || (r = out_[b].allocate(out)) != FLCC_SUCCESS) {
            for (DeviceBuffer* d : {&in_[0], &in_[1], &out_[0], &out_[1]}) d->reset();
            return r;
        }
        // Zeroed once: a frame refused on the GPU (non-finite input) writes no outputs, and its
        // download then copies what is there (the output is undefined then, but not uninitialised
        // memory that compute-sanitizer's initcheck reports).
        FLCC_CUDA_TRY(cudaMemsetAsync(out_[b].as<char>(), 0, out, compute_.get()));
    }
    return FLCC_SUCCESS;
}

int64_t DeviceExecutor::memory_bytes() const
{
    return int64_t(in_[0].bytes() + in_[1].bytes() + out_[0].bytes() + out_[1].bytes());
}

flcc_result DeviceExecutor::follow_legacy_stream()
{
    if (user_ != nullptr) return FLCC_SUCCESS;
    DeviceGuard guard(p_.device);
    if (!guard.ok()) return FLCC_DEVICE_ERROR;
    FLCC_CUDA_TRY(cudaEventRecord(legacy_done_.get(), cudaStreamLegacy));
    FLCC_CUDA_TRY(cudaStreamWaitEvent(compute_.get(), legacy_done_.get(), 0));
    return FLCC_SUCCESS;
}

flcc_result DeviceExecutor::set_stream(void* stream)
{
    // Work queued on the old stream (a template upload included) finishes first.
    DeviceGuard guard(p_.device);
    if (!guard.ok()) return FLCC_DEVICE_ERROR;
    const flcc_result r = quiesce();
    if (r != FLCC_SUCCESS) return r;
    user_ = static_cast<cudaStream_t>(stream);
    return FLCC_SUCCESS;
}

flcc_result DeviceExecutor::collect(cudaStream_t stream)
{
    // One synchronisation in all; the kernels wrote the flag straight into host memory, and no
    // kernel that could write it is running once the stream is done.
    FLCC_CUDA_TRY(cudaStreamSynchronize(stream));
    volatile int* flag = status_.as<int>();
    const int found = *flag;
    *flag = 0;
    return found != 0 ? FLCC_NONFINITE_INPUT : FLCC_SUCCESS;
}

flcc_result DeviceExecutor::quiesce()
{
    if (user_ != nullptr) FLCC_CUDA_TRY(cudaStreamSynchronize(user_));
    FLCC_CUDA_TRY(cudaStreamSynchronize(compute_.get()));
    return FLCC_SUCCESS;
}

flcc_result DeviceExecutor::synchronize()
{
    DeviceGuard guard(p_.device);
    if (!guard.ok()) return FLCC_DEVICE_ERROR;
    return collect(work_stream());
}

flcc_result DeviceExecutor::execute(const float* image, float* out, int64_t count, MemorySpace space)
{
    DeviceGuard guard(p_.device);
    if (!guard.ok()) return FLCC_DEVICE_ERROR;
    if (space == MemorySpace::device) {
        const cudaStream_t s = work_stream();
        const flcc_result r = enqueue(image, out, count, s);
        if (r != FLCC_SUCCESS) return r;
        // Bound to the caller's stream: asynchronous; flcc_plan_synchronize reports the status.
        return user_ != nullptr ? FLCC_SUCCESS : collect(s);
    }
    const flcc_result r = stream_host_frames(image, out, count);
    if (r != FLCC_SUCCESS) {
        cudaDeviceSynchronize();   // leave no transfer running on the caller's buffers
        cudaGetLastError();
        return r;
    }
    return collect(compute_.get());
}

flcc_result DeviceExecutor::stream_host_frames(const float* image, float* out, int64_t count)
{
    flcc_result r = pipeline_buffers();
    if (r != FLCC_SUCCESS) return r;
    const size_t in_bytes = in_[0].bytes(), out_bytes = out_[0].bytes();
    // Work already queued on the caller's stream comes first.
    if (user_ != nullptr) {
        FLCC_CUDA_TRY(cudaEventRecord(computed_[0].get(), user_));
        FLCC_CUDA_TRY(cudaStreamWaitEvent(upload_.get(), computed_[0].get(), 0));
    }
    for (int64_t f = 0; f < count; ++f) {
        const int b = int(f & 1);
        // Upload frame f once the kernel of frame f-2 has read buffer b.
        if (f >= 2) FLCC_CUDA_TRY(cudaStreamWaitEvent(upload_.get(), computed_[b].get(), 0));
        FLCC_CUDA_TRY(cudaMemcpyAsync(in_[b].as<float>(), image + f * p_.image_elems(), in_bytes,
                                      cudaMemcpyHostToDevice, upload_.get()));
        FLCC_CUDA_TRY(cudaEventRecord(uploaded_[b].get(), upload_.get()));
        // Compute once uploaded, and once frame f-2's result left buffer b.
        FLCC_CUDA_TRY(cudaStreamWaitEvent(compute_.get(), uploaded_[b].get(), 0));
        if (f >= 2) FLCC_CUDA_TRY(cudaStreamWaitEvent(compute_.get(), downloaded_[b].get(), 0));
        if ((r = enqueue(in_[b].as<float>(), out_[b].as<float>(), 1, compute_.get())) != FLCC_SUCCESS)
            return r;
        FLCC_CUDA_TRY(cudaEventRecord(computed_[b].get(), compute_.get()));
        // Download when computed.
        FLCC_CUDA_TRY(cudaStreamWaitEvent(download_.get(), computed_[b].get(), 0));
        FLCC_CUDA_TRY(cudaMemcpyAsync(out + f * p_.out_elems(), out_[b].as<float>(), out_bytes,
                                      cudaMemcpyDeviceToHost, download_.get()));
        FLCC_CUDA_TRY(cudaEventRecord(downloaded_[b].get(), download_.get()));
    }
    FLCC_CUDA_TRY(cudaStreamSynchronize(download_.get()));
    return FLCC_SUCCESS;
}

}  // namespace flcc::device
