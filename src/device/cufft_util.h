// What the cuFFT-based GPU solvers share: cuFFT's result codes as flcc_result, an owning plan
// handle, a per-frame CUDA graph captured once, and launches that overlap the previous kernel.
// (Their fast transform sizes are geometry/fft_size.h's, shared with the host.)
#pragma once

#include "device/cuda_util.h"
#include "device/device_properties.h"
#include "device/kernels/frame_slot.cuh"

#include <cufft.h>

#include <algorithm>
#include <vector>

namespace flcc::device {

inline flcc_result to_result(cufftResult r)
{
    if (r == CUFFT_SUCCESS) return FLCC_SUCCESS;
    cudaGetLastError();
    return r == CUFFT_ALLOC_FAILED ? FLCC_ALLOC_FAILED : FLCC_DEVICE_ERROR;
}

#define FLCC_CUFFT_TRY(expr)                                                                  \
    do {                                                                                      \
        const flcc_result flcc_cufft_r_ = ::flcc::device::to_result(expr);                    \
        if (flcc_cufft_r_ != FLCC_SUCCESS) return flcc_cufft_r_;                              \
    } while (0)

struct CufftPlan {
    cufftHandle h = 0;
    bool made = false;
    CufftPlan() = default;
    CufftPlan(const CufftPlan&) = delete;
    CufftPlan& operator=(const CufftPlan&) = delete;
    ~CufftPlan()
    {
        if (made) cufftDestroy(h);
    }
};

// A frame's kernels and transforms as one CUDA graph, captured on first use from `enqueue(s)`
// (which must only enqueue on s) and replayed after: per frame one launch instead of ~10.
class FrameGraph {
public:
    FrameGraph() = default;
    FrameGraph(const FrameGraph&) = delete;
    FrameGraph& operator=(const FrameGraph&) = delete;
    ~FrameGraph()
    {
        if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
        if (graph_ != nullptr) cudaGraphDestroy(graph_);
    }

    bool captured() const { return exec_ != nullptr; }

    template <class Enqueue>
    flcc_result launch(cudaStream_t s, Enqueue&& enqueue)
    {
        if (exec_ == nullptr) {
            if (capture_.get() == nullptr) {
                const flcc_result r = capture_.create();
                if (r != FLCC_SUCCESS) return r;
            }
            cudaGraph_t g = nullptr;
            launches_.clear();   // any of a failed capture
            FLCC_CUDA_TRY(cudaStreamBeginCapture(capture_.get(), cudaStreamCaptureModeThreadLocal));
            const flcc_result r = enqueue(capture_.get());
            const cudaError_t e = cudaStreamEndCapture(capture_.get(), &g);
            if (r != FLCC_SUCCESS) {
                if (g != nullptr) cudaGraphDestroy(g);
                return r;
            }
            FLCC_CUDA_TRY(e);
            const cudaError_t ie = cudaGraphInstantiate(&exec_, g, 0);
            if (ie != cudaSuccess) {
                exec_ = nullptr;
                cudaGraphDestroy(g);
            } else {
                graph_ = g;   // its nodes are the launches set_arguments changes
            }
            FLCC_CUDA_TRY(ie);
        }
        FLCC_CUDA_TRY(cudaGraphLaunch(exec_, s));
        return FLCC_SUCCESS;
    }

    // During the capture on s: the launch just enqueued there is `kernel`'s, whose arguments
    // set_arguments may change (one launch per kernel).
    flcc_result name_last(cudaStream_t s, const void* kernel)
    {
        for (const Launch& l : launches_)
            if (l.params.func == kernel) return FLCC_INTERNAL_ERROR;
        cudaStreamCaptureStatus status{};
        const cudaGraphNode_t* last = nullptr;
        size_t count = 0;
#if CUDART_VERSION >= 13000
        FLCC_CUDA_TRY(cudaStreamGetCaptureInfo(s, &status, nullptr, nullptr, &last, nullptr, &count));
#else
        FLCC_CUDA_TRY(cudaStreamGetCaptureInfo(s, &status, nullptr, nullptr, &last, &count));
#endif
        if (status != cudaStreamCaptureStatusActive || count != 1) return FLCC_INTERNAL_ERROR;
        Launch l{last[0], {}};
        FLCC_CUDA_TRY(cudaGraphKernelNodeGetParams(l.node, &l.params));
        if (l.params.func != kernel) return FLCC_INTERNAL_ERROR;
        launches_.push_back(l);
        return FLCC_SUCCESS;
    }

    // Gives the captured launch of `kernel` (named by name_last) new arguments for the replays
    // that follow; replays already enqueued keep theirs. `args` as cudaLaunchKernel's, copied
    // here: a frame's pointers reach the graph without a kernel of their own.
    flcc_result set_arguments(const void* kernel, void** args)
    {
        for (const Launch& l : launches_) {
            if (l.params.func != kernel) continue;
            cudaKernelNodeParams p = l.params;
            p.kernelParams = args;
            p.extra = nullptr;
            FLCC_CUDA_TRY(cudaGraphExecKernelNodeSetParams(exec_, l.node, &p));
            return FLCC_SUCCESS;
        }
        return FLCC_INTERNAL_ERROR;
    }

    // `count` frames stored back to back: for each, the slot gets its pointers, then the graph
    // replays.
    template <class Enqueue>
    flcc_result launch_frames(FrameSlot* slot, const float* image, int64_t image_elems, float* out,
                              int64_t out_elems, int64_t count, cudaStream_t s, Enqueue&& enqueue)
    {
        for (int64_t f = 0; f < count; ++f) {
            set_frame<<<1, 1, 0, s>>>(slot, image + f * image_elems, out + f * out_elems);
            FLCC_CUDA_TRY(cudaGetLastError());
            const flcc_result r = launch(s, enqueue);
            if (r != FLCC_SUCCESS) return r;
        }
        return FLCC_SUCCESS;
    }

private:
    struct Launch {
        cudaGraphNode_t node;
        cudaKernelNodeParams params;
    };

    Stream capture_;
    cudaGraph_t graph_ = nullptr;
    cudaGraphExec_t exec_ = nullptr;
    std::vector<Launch> launches_;
};

// Raises a kernel's dynamic shared memory limit (per function, shared by every plan) to the
// device's maximum less the kernel's static shared memory, when `bytes` needs more than the
// default 48 KB.
template <typename Kernel>
flcc_result raise_shared_limit(Kernel kernel, size_t bytes)
{
    const size_t most = device_properties(-1).shared_optin;
    cudaFuncAttributes attributes{};
    FLCC_CUDA_TRY(cudaFuncGetAttributes(&attributes, kernel));
    const size_t dynamic = size_t(most) - std::min(size_t(most), attributes.sharedSizeBytes);
    if (bytes > dynamic) return FLCC_METHOD_NOT_APPLICABLE;
    FLCC_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(dynamic)));
    return FLCC_SUCCESS;
}

// Launches `kernel` as a programmatic dependent of the kernel before it on `s` (the frame graphs
// capture it as such an edge): its blocks may start once every block of that kernel has called
// cudaTriggerProgrammaticLaunchCompletion() or exited, on the multiprocessors it leaves free, and
// run what does not read that kernel's results; each thread calls cudaGridDependencySynchronize()
// (which waits for that kernel's completion and its writes) before it does. This hides the
// launch between two kernels of a frame, and the tail of the first.
template <typename... Params, typename... Args>
flcc_result launch_dependent(void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared, cudaStream_t s,
                             Args&&... args)
{
    cudaLaunchAttribute dependent{};
    dependent.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    dependent.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t config{};
    config.gridDim = grid;
    config.blockDim = block;
    config.dynamicSmemBytes = shared;
    config.stream = s;
    config.attrs = &dependent;
    config.numAttrs = 1;
    FLCC_CUDA_TRY(cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...));
    return FLCC_SUCCESS;
}

}  // namespace flcc::device
