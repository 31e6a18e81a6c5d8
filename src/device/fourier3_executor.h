// What the executors of the whole-frame 3D GPU Fourier solvers (device.fourier3.planes, .rows
// and .slabs) share: the frame slot their kernels read the frame's pointers from, the LCC
// statistics, modes and recompute list (kernels/fourier3_frame.cuh), the page-locked staging of
// template uploads, the frame's CUDA graph, the problem's fields of the kernels' parameters,
// and the start of a template change. Included by the three solvers' CUDA units only.
#pragma once

#include "device/cufft_util.h"
#include "device/executor.h"
#include "device/kernels/fourier3_frame.cuh"
#include "plan/template.h"

#include <cstdint>
#include <vector>

namespace flcc::device {

// The statistics count and the recompute list index in int: image and output within it.
inline bool fourier3_indexable(const Problem& p)
{
    return p.image_elems() < (int64_t(1) << 31) && p.out_elems() < (int64_t(1) << 31);
}

class Fourier3Executor : public DeviceExecutor {
public:
    int64_t memory_bytes() const override
    {
        return DeviceExecutor::memory_bytes() + int64_t(tmpl_.bytes() + lcc_.redo.bytes());
    }

protected:
    explicit Fourier3Executor(const Problem& p)
        : DeviceExecutor(p), T0(int(p.templ[0])), T1(int(p.templ[1])), T2(int(p.templ[2])), tap_row_((T2 + 3) / 4 * 4)
    {
    }

    // On the plan's device (the caller's DeviceGuard, after DeviceExecutor::init): the frame
    // slot, `block` bytes of template block (rows and slabs; template_block_bytes), `staged`
    // bytes of staging for template uploads and (LCC) the statistics and recompute list.
    flcc_result open(size_t block, size_t staged)
    {
        flcc_result r;
        if ((r = slot_.allocate(sizeof(FrameSlot))) != FLCC_SUCCESS ||
            (block != 0 && (r = tmpl_.allocate(block)) != FLCC_SUCCESS) || (r = staged_.allocate(staged)) != FLCC_SUCCESS)
            return r;
        if (p_.op == Op::lcorr && (r = lcc_.allocate(p_.out_elems())) != FLCC_SUCCESS) return r;
        return FLCC_SUCCESS;
    }

    // The kernels' parameters every family fills alike: the frame slot, the problem, the taps
    // (rows of tap_row_), their sum and prefix sums, the status flag, and (LCC) the statistics,
    // modes and recompute list, emptied.
    flcc_result bind(PlanesParams& q, const float* taps, const double* tap_sum, const double* prefix)
    {
        q.frame = slot_.as<FrameSlot>();
        set_problem(q, p_);
        q.taps = taps;
        q.tap_row = tap_row_;
        q.tap_sum = tap_sum;
        q.prefix = prefix;
        if (p_.op == Op::lcorr) {
            const flcc_result r = lcc_.bind(q, work_stream());
            if (r != FLCC_SUCCESS) return r;
        }
        q.status = status();
        return FLCC_SUCCESS;
    }

    // A template change's start: the prepared template (normalised, or flipped), once the
    // frames before are done with the staging buffer and the template's device copies. The
    // caller holds a DeviceGuard of the plan's device.
    flcc_result prepare(const float* templ, bool constant, std::vector<float>& prepared)
    {
        prepared.resize(size_t(p_.templ_elems()));
        prepare_template(p_.op == Op::lcorr, templ, p_.templ_elems(), constant, prepared.data());
        return quiesce();
    }

    // Rows and slabs keep the template in one device buffer (tmpl_), staged as it is held:
    // `spectra` bytes of the template's spectra, then the taps, their sum and their prefix
    // sums (stage_recompute_taps).
    size_t template_block_bytes(size_t spectra) const
    {
        return spectra + recompute_taps_bytes(T0, T1, T2, tap_row_);
    }
    // The template block's taps, and their sum (the prefix sums follow it).
    float* block_taps(size_t spectra) const { return reinterpret_cast<float*>(tmpl_.as<char>() + spectra); }
    double* block_tap_sum(size_t spectra) const
    {
        return reinterpret_cast<double*>(tmpl_.as<char>() + spectra + size_t(T0) * T1 * tap_row_ * sizeof(float));
    }
    // Binds q to the template block's taps, sums and prefix sums (bind).
    flcc_result bind_template_block(PlanesParams& q, size_t spectra)
    {
        return bind(q, block_taps(spectra), block_tap_sum(spectra), block_tap_sum(spectra) + 1);
    }
    // Stages the prepared template's recompute taps after `spectra` bytes of spectra already
    // staged, and uploads the block in one copy on the work stream.
    flcc_result upload_template_block(const std::vector<float>& prepared, size_t spectra)
    {
        stage_recompute_taps(prepared.data(), T0, T1, T2, tap_row_, staged_.as<char>() + spectra);
        FLCC_CUDA_TRY(cudaMemcpyAsync(tmpl_.as<char>(), staged_.as<char>(), tmpl_.bytes(), cudaMemcpyHostToDevice,
                                      work_stream()));
        return FLCC_SUCCESS;
    }

    // `count` frames, each replaying the graph captured from enqueue_frame(stream).
    template <class Enqueue>
    flcc_result launch_frames(const float* image, float* out, int64_t count, cudaStream_t s, Enqueue&& enqueue_frame)
    {
        return graph_.launch_frames(slot_.as<FrameSlot>(), image, p_.image_elems(), out, p_.out_elems(), count, s,
                                    enqueue_frame);
    }

    const int T0, T1, T2;   // the template's extents
    const int tap_row_;     // >= T2, a multiple of 4
    DeviceBuffer slot_;
    DeviceBuffer tmpl_;     // rows and slabs: the template block (bind_template_block)
    LccBuffers lcc_;        // LCC: statistics, modes, the outputs to recompute
    PinnedBuffer staged_;   // template uploads
    FrameGraph graph_;
};

}  // namespace flcc::device
