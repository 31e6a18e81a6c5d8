// What every GPU executor shares: the device it runs on, its streams, the non-finite status
// flag, binding to a caller's stream, and the pipeline that streams host frames through the GPU.
//
// Device frames are enqueued in one go on the plan's stream (or the caller's). Host frames are
// streamed: frame i+1 uploads on one stream while frame i computes on another and frame i-1
// downloads on a third, through two device buffers each way (FLCC 1.3's scheme), so the time per
// frame approaches the PCIe transfer time when compute is faster.
#pragma once

#include "device/cuda_util.h"
#include "plan/solver.h"

#include <memory>
#include <new>
#include <utility>

namespace flcc::device {

class DeviceExecutor : public Executor, public DeviceControl {
public:
    flcc_result execute(const float* image, float* out, int64_t count, MemorySpace space) final;
    int64_t memory_bytes() const override;
    DeviceControl* device() final { return this; }

    flcc_result follow_legacy_stream() final;
    flcc_result set_stream(void* stream) final;
    flcc_result synchronize() final;
    // Executors that prepare device templates on the device override both.
    bool prepares_device_templates() const override { return false; }
    flcc_result set_device_template(const float*) override { return FLCC_INVALID_PLATFORM; }

protected:
    explicit DeviceExecutor(const Problem& p) : p_(p) {}
    // Streams, the status flag, and (for host-resident plans) the pipeline buffers. Called by
    // the derived executor's create.
    flcc_result init();
    // Enqueues `count` frames of device memory on `stream`, reporting non-finite input into
    // status(). Must not synchronise.
    virtual flcc_result enqueue(const float* image, float* out, int64_t count, cudaStream_t stream) = 0;
    // The non-finite flag, in page-locked memory: under unified addressing the kernels write it
    // directly (plain stores of 1), so reading it costs no copy, only the synchronisation.
    int* status() const { return status_.as<int>(); }
    // Waits for the plan's enqueued work (its own streams and a bound caller's stream), so
    // that template buffers can be rewritten safely.
    flcc_result quiesce();
    // The stream device work goes on: the caller's when bound, else the plan's own. Template
    // uploads queued here (from page-locked memory, after quiesce) precede the next frames'
    // kernels without a synchronisation: a new template costs microseconds, not round trips.
    cudaStream_t work_stream() const { return user_ != nullptr ? user_ : compute_.get(); }

    Problem p_;

private:
    flcc_result pipeline_buffers();
    flcc_result stream_host_frames(const float* image, float* out, int64_t count);
    // Reads and clears the status flag after `stream` finished.
    flcc_result collect(cudaStream_t stream);

    PinnedBuffer status_;
    Stream compute_, upload_, download_;
    Event legacy_done_;   // the legacy stream's work so far (follow_legacy_stream)
    Event uploaded_[2], computed_[2], downloaded_[2];
    DeviceBuffer in_[2], out_[2];
    cudaStream_t user_ = nullptr;
};

// A GPU solver's estimate for its problem's memory: device-resident frames as computed,
// host-resident ones at least their transfers (image in, output out) over PCIe, which the
// pipeline above overlaps with the computation (~25 GB/s each way: a conservative share of the
// pinned PCIe rate).
inline double with_host_transfers(const Problem& p, double compute_seconds)
{
    if (p.device_resident) return compute_seconds;
    const double bytes = 4.0 * double(p.image_elems() + p.out_elems());
    return compute_seconds > bytes / 25e9 ? compute_seconds : bytes / 25e9;
}

// Makes a GPU executor and runs its create() (streams, buffers, kernels), for a Solver's
// create: an allocation failure, thrown or returned, comes back as a result code.
template <class E, class... Args>
flcc_result make_device_executor(std::unique_ptr<Executor>& out, const Problem& p, Args&&... args)
{
    try {
        auto ex = std::make_unique<E>(p, std::forward<Args>(args)...);
        const flcc_result r = ex->create();
        if (r != FLCC_SUCCESS) return r;
        out = std::move(ex);
        return FLCC_SUCCESS;
    } catch (const std::bad_alloc&) {
        return FLCC_ALLOC_FAILED;
    }
}

}  // namespace flcc::device
