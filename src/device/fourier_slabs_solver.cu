// device.fourier3.slabs: 3D convolution and LCC for templates up to 8 x 8 x 8 by one kernel
// per frame that marches along the planes (kernels/fourier_slabs.cuh): 2D transforms of 32 x 32
// image tiles, the sum over the template's planes per frequency bin, 2D inverse transforms,
// no frame-sized intermediate. LCC frames run the image statistics and modes of
// device.fourier3.planes first, slab_frame's numerators, then slab_window (kernels/slab_window.cuh:
// the window sums, factors and coefficients in place), and its recompute list after. The
// template planes' spectra are made on the host when a host template changes, or on the device by
// the next frame's first kernel for a device template. Per frame that kernel (slab_head: the
// frame's slot, its statistics, a new device template) is launched, then the rest replays as one
// CUDA graph, whose LCC kernels after slab_frame start as dependents of the one before them
// (launch_dependent: their launches and first steps hidden behind its tail).
#include "device/fourier3_executor.h"
#include "device/kernels/fourier_slabs.cuh"
#include "device/kernels/slab_window.cuh"
#include "plan/registry.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

namespace flcc::device {

namespace {

constexpr size_t kSlabTapBytes = size_t(kSlabMaxT) * kSlabSlots * sizeof(float4);

// A grid of blocks that each own a tile of `tile` x `tile` outputs along x and y and a chunk of
// output planes: as many chunks as `slots` resident blocks leave room for, at most `most`, so
// that the grid is about one wave and each block marches as far as it can.
struct SlabGrid {
    int tiles_x, tiles_y, chunk, chunks;
};

SlabGrid tile_grid(const Problem& p, int tile, int64_t slots, int64_t most)
{
    SlabGrid g;
    g.tiles_x = int((p.out[2] + tile - 1) / tile);
    g.tiles_y = int((p.out[1] + tile - 1) / tile);
    const int64_t tiles = int64_t(g.tiles_x) * g.tiles_y, planes = p.out[0];
    const int64_t chunks = std::min<int64_t>(most, std::max<int64_t>(1, slots / tiles));
    g.chunk = int((planes + chunks - 1) / chunks);
    g.chunks = int((planes + g.chunk - 1) / g.chunk);
    return g;
}

// slab_frame's blocks: one per multiprocessor, a step of 16 planes per chunk at least.
SlabGrid slab_grid(const Problem& p, int sms)
{
    return tile_grid(p, kSlabOut, sms, std::max<int64_t>(1, (p.out[0] + kSlabPlanes - 1) / kSlabPlanes));
}

// slab_window's blocks: `resident` per multiprocessor, at least 16 planes a chunk (each chunk
// first sums T0 planes afresh).
SlabGrid window_grid(const Problem& p, int sms, int resident)
{
    return tile_grid(p, kWinOut, int64_t(sms) * resident, std::max<int64_t>(1, p.out[0] / 16));
}

class SlabsExecutor final : public Fourier3Executor {
public:
    // `sms` and `grid`: the candidate's layout (the device's multiprocessors, slab_grid).
    SlabsExecutor(const Problem& p, int sms, const SlabGrid& grid) : Fourier3Executor(p), sms_(sms), grid_(grid) {}

    flcc_result create()
    {
        flcc_result r = init();
        if (r != FLCC_SUCCESS) return r;
        DeviceGuard guard(p_.device);
        const bool lcorr = p_.op == Op::lcorr;
        const size_t all = template_block_bytes(kSlabTapBytes);
        if ((r = open(all, all)) != FLCC_SUCCESS) return r;
        if ((r = lcorr ? raise_shared_limit(slab_frame<true>, kSlabSharedBytes)
                       : raise_shared_limit(slab_frame<false>, kSlabSharedBytes)) != FLCC_SUCCESS)
            return r;
        if (lcorr) {
            window_ = T1 == kSlabMaxT && T2 == kSlabMaxT ? slab_window<true> : slab_window<false>;
            int resident = 0;
            if ((r = raise_shared_limit(window_, kWinSharedBytes)) != FLCC_SUCCESS) return r;
            FLCC_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, window_, kWinThreads, kWinSharedBytes));
            window_grid_ = window_grid(p_, sms_, std::max(1, resident));
        }

        SlabParams& sp = params_;
        PlanesParams& q = sp.g;
        q.guard = slab_window_guard(T0, T1, T2, window_grid_.chunk);
        if ((r = bind_template_block(q, kSlabTapBytes)) != FLCC_SUCCESS) return r;
        sp.tiles_x = grid_.tiles_x;
        sp.chunk = grid_.chunk;

        // The template block: the planes' spectra, then the taps in T0 x T1 rows of tap_row_,
        // their sum and the prefix sums; slab_head's template blocks write them for a device
        // template.
        SlabTemplateWork& w = template_work_;
        w.T0 = T0;
        w.T1 = T1;
        w.T2 = T2;
        w.lcorr = lcorr;
        w.check_finite = p_.check_finite;
        w.spectra = tmpl_.as<float4>();
        w.taps = block_taps(kSlabTapBytes);
        w.tap_row = tap_row_;
        w.tap_sum = block_tap_sum(kSlabTapBytes);
        w.status = status();
        return FLCC_SUCCESS;
    }

    flcc_result set_template(const float* templ, bool constant) override
    {
        DeviceGuard guard(p_.device);
        std::vector<float> prepared;
        const flcc_result qr = prepare(templ, constant, prepared);   // the staging buffer and the spectra may be in use
        if (qr != FLCC_SUCCESS) return qr;
        // Staged in page-locked memory as tmpl_ holds them: the planes' spectra, then what the
        // recomputed windows and the padding's share read; one upload.
        slab_template_spectra(prepared.data(), T0, T1, T2, staged_.as<float>());
        const flcc_result r = upload_template_block(prepared, kSlabTapBytes);
        if (r != FLCC_SUCCESS) return r;
        device_template_ = nullptr;   // a device template set before, never executed, is replaced
        return FLCC_SUCCESS;
    }

    // A template in device memory: prepared, transformed and summed on the device by blocks of the
    // next frame's first kernel, beside its statistics (enqueue, slab_head): no host round trip,
    // no wait, and no comparison with the last one (preparing costs the frame no more).
    bool prepares_device_templates() const override { return true; }

    flcc_result set_device_template(const float* templ) override
    {
        device_template_ = templ;
        return FLCC_SUCCESS;
    }

private:
    // One frame's work after its statistics (the frame in the slot), on `s`: the captured graph.
    // LCC: slab_window and recompute_listed start as dependents of the kernel before them.
    flcc_result enqueue_frame(cudaStream_t s)
    {
        const PlanesParams& q = params_.g;
        const dim3 grid(unsigned(grid_.tiles_x * grid_.tiles_y), unsigned(grid_.chunks));
        if (!q.lcorr) {
            slab_frame<false><<<grid, kSlabThreads, kSlabSharedBytes, s>>>(params_, tmpl_.as<float4>());
            FLCC_CUDA_TRY(cudaGetLastError());
            return FLCC_SUCCESS;
        }
        slab_frame<true><<<grid, kSlabThreads, kSlabSharedBytes, s>>>(params_, tmpl_.as<float4>());
        FLCC_CUDA_TRY(cudaGetLastError());
        const SlabGrid& w = window_grid_;
        const flcc_result r = launch_dependent(window_, dim3(unsigned(w.tiles_x * w.tiles_y), unsigned(w.chunks)),
                                               dim3(kWinThreads), kWinSharedBytes, s, q, w.tiles_x, w.chunk);
        if (r != FLCC_SUCCESS) return r;
        return launch_dependent(recompute_listed, dim3(256), dim3(128), 0, s, q);
    }

    // Per frame: slab_head (the slot; LCC the statistics; the first frame after
    // set_device_template that template's taps, spectra and prefix sums), then the graph.
    flcc_result enqueue(const float* image, float* out, int64_t count, cudaStream_t s) override
    {
        SlabTemplateWork w = template_work_;
        w.user = device_template_;
        const PlanesParams& q = params_.g;
        const int stats = q.lcorr ? stats_blocks(p_.image_elems()) : 0;
        for (int64_t f = 0; f < count; ++f) {
            const int templ = f == 0 && device_template_ != nullptr ? kSlabTemplateBlocks : 0;
            slab_head<<<unsigned(std::max(1, templ + stats)), kStatsThreads, 0, s>>>(
                q, p_.image_elems(), stats, templ, slot_.as<FrameSlot>(), image + f * p_.image_elems(),
                out + f * p_.out_elems(), w);
            FLCC_CUDA_TRY(cudaGetLastError());
            device_template_ = nullptr;
            const flcc_result r = graph_.launch(s, [this](cudaStream_t c) { return enqueue_frame(c); });
            if (r != FLCC_SUCCESS) return r;
        }
        return FLCC_SUCCESS;
    }

    int sms_;                          // the device's multiprocessors
    SlabGrid grid_, window_grid_{};    // slab_frame's blocks, slab_window's (LCC)
    void (*window_)(PlanesParams, int, int) = nullptr;   // LCC: slab_window, for the template's width
    const float* device_template_ = nullptr;   // set_device_template's, until its first frame
    SlabParams params_{};
    SlabTemplateWork template_work_{};   // all but the device template (create)
};

class SlabsCandidate final : public Candidate {
public:
    SlabsCandidate(const Problem& p, int sms) : p_(p), sms_(sms), grid_(slab_grid(p, sms)) {}

    // Cost model of an H100-class device (docs/performance.md describes the fit), its waves of
    // blocks counted on the plan's device's multiprocessors: slab_frame ~11 us per step of 16
    // input planes per wave of blocks, LCC and convolution alike; LCC adds slab_window, ~2.6 us
    // per output plane of a chunk per wave of its blocks (two per multiprocessor), the
    // statistics ~1.3 ps per image element, and ~10 us of launches and recompute_listed.
    // Host-resident frames add their transfers, overlapped.
    double estimate_seconds() const override
    {
        const Problem& p = p_;
        const int sms = sms_;
        const SlabGrid& g = grid_;
        const double blocks = double(g.tiles_x) * g.tiles_y * g.chunks, waves = std::ceil(blocks / sms);
        const double steps = std::ceil(double(g.chunk + kSlabMaxT - 1) / kSlabPlanes);
        double t = waves * steps * 11e-6 + 10e-6;
        if (p.op == Op::lcorr) {
            const SlabGrid w = window_grid(p, sms, 2);
            const double wwaves = std::ceil(double(w.tiles_x) * w.tiles_y * w.chunks / (2.0 * sms));
            t += wwaves * w.chunk * 2.6e-6 + 1.3e-12 * double(p.image_elems());
        }
        return with_host_transfers(p, t);
    }

    flcc_result create(std::unique_ptr<Executor>& out) const override
    {
        return make_device_executor<SlabsExecutor>(out, p_, sms_, grid_);
    }

private:
    Problem p_;
    int sms_;
    SlabGrid grid_;
};

class SlabsSolver final : public Solver {
public:
    const char* name() const override { return "device.fourier3.slabs"; }
    flcc_platform platform() const override { return FLCC_DEVICE; }

    std::unique_ptr<Candidate> plan(const Problem& p) const override
    {
        if (p.dim != 3) return nullptr;
        for (int a = 0; a < 3; ++a)
            if (p.templ[a] > kSlabMaxT) return nullptr;
        if (!fourier3_indexable(p)) return nullptr;
        // The grids' extents.
        const int64_t tiles = (p.out[2] + kSlabOut - 1) / kSlabOut * ((p.out[1] + kSlabOut - 1) / kSlabOut);
        if (tiles >= (int64_t(1) << 31)) return nullptr;
        return std::make_unique<SlabsCandidate>(p, device_properties(p.device).multiprocessors);
    }
};

}  // namespace

void register_fourier_slabs_solver(SolverList& list)
{
    static const SlabsSolver solver;
    list.push_back(&solver);
}

}  // namespace flcc::device
