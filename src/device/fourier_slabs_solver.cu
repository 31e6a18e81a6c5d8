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
#include "device/cufft_util.h"
#include "device/executor.h"
#include "device/kernels/fourier_slabs.cuh"
#include "device/kernels/slab_window.cuh"
#include "plan/legacy_solver.h"
#include "plan/registry.h"
#include "plan/template.h"

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

// The current device's multiprocessors (the executor's DeviceGuard has made it current).
int multiprocessors() { return device_properties(-1).multiprocessors; }

class SlabsExecutor final : public DeviceExecutor {
public:
    explicit SlabsExecutor(const Problem& p) : DeviceExecutor(p) {}

    flcc_result create()
    {
        flcc_result r = init();
        if (r != FLCC_SUCCESS) return r;
        DeviceGuard guard(p_.device);
        const bool lcorr = p_.op == Op::lcorr;
        const int T0 = int(p_.templ[0]), T1 = int(p_.templ[1]), T2 = int(p_.templ[2]);
        tap_row_ = (T2 + 3) / 4 * 4;
        const size_t all = kSlabTapBytes + recompute_taps_bytes(T0, T1, T2, tap_row_);
        if ((r = slot_.allocate(sizeof(FrameSlot))) != FLCC_SUCCESS || (r = tmpl_.allocate(all)) != FLCC_SUCCESS ||
            (r = staged_.allocate(all)) != FLCC_SUCCESS)
            return r;
        if (lcorr && (r = lcc_.allocate(p_.out_elems())) != FLCC_SUCCESS) return r;
        if ((r = lcorr ? raise_shared_limit(slab_frame<true>, kSlabSharedBytes)
                       : raise_shared_limit(slab_frame<false>, kSlabSharedBytes)) != FLCC_SUCCESS)
            return r;
        const int sms = multiprocessors();
        grid_ = slab_grid(p_, sms);
        if (lcorr) {
            window_ = T1 == kSlabMaxT && T2 == kSlabMaxT ? slab_window<true> : slab_window<false>;
            int resident = 0;
            if ((r = raise_shared_limit(window_, kWinSharedBytes)) != FLCC_SUCCESS) return r;
            FLCC_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, window_, kWinThreads, kWinSharedBytes));
            window_grid_ = window_grid(p_, sms, std::max(1, resident));
        }

        // tmpl_: the planes' spectra, then the taps in T0 x T1 rows of tap_row_, their sum and
        // the prefix sums; slab_head's template blocks write them for a device template.
        SlabTemplateWork& w = template_work_;
        char* t = tmpl_.as<char>();
        w.T0 = T0;
        w.T1 = T1;
        w.T2 = T2;
        w.lcorr = lcorr;
        w.check_finite = p_.check_finite;
        w.spectra = tmpl_.as<float4>();
        w.taps = reinterpret_cast<float*>(t + kSlabTapBytes);
        w.tap_row = tap_row_;
        w.tap_sum = reinterpret_cast<double*>(t + kSlabTapBytes + size_t(T0) * T1 * tap_row_ * sizeof(float));
        w.status = status();

        SlabParams& sp = params_;
        PlanesParams& q = sp.g;
        q.frame = slot_.as<FrameSlot>();
        set_problem(q, p_);
        q.guard = slab_window_guard(T0, T1, T2, window_grid_.chunk);
        q.taps = w.taps;
        q.tap_row = tap_row_;
        q.tap_sum = w.tap_sum;
        q.prefix = q.tap_sum + 1;
        if (lcorr && (r = lcc_.bind(q, work_stream())) != FLCC_SUCCESS) return r;
        q.status = status();
        sp.tiles_x = grid_.tiles_x;
        sp.chunk = grid_.chunk;
        return FLCC_SUCCESS;
    }

    flcc_result set_template(const float* templ, bool constant) override
    {
        const int64_t count = p_.templ_elems();
        std::vector<float> prepared(static_cast<size_t>(count));
        prepare_template(p_.op == Op::lcorr, templ, count, constant, prepared.data());
        DeviceGuard guard(p_.device);
        const flcc_result qr = quiesce();   // the staging buffer and the spectra may be in use
        if (qr != FLCC_SUCCESS) return qr;
        const int T0 = int(p_.templ[0]), T1 = int(p_.templ[1]), T2 = int(p_.templ[2]);
        // Staged in page-locked memory as tmpl_ holds them: the planes' spectra, then what the
        // recomputed windows and the padding's share read; one upload.
        char* staged = staged_.as<char>();
        slab_template_spectra(prepared.data(), T0, T1, T2, reinterpret_cast<float*>(staged));
        stage_recompute_taps(prepared.data(), T0, T1, T2, tap_row_, staged + kSlabTapBytes);
        FLCC_CUDA_TRY(cudaMemcpyAsync(tmpl_.as<char>(), staged, tmpl_.bytes(), cudaMemcpyHostToDevice, work_stream()));
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

    int64_t memory_bytes() const override
    {
        int64_t b = DeviceExecutor::memory_bytes();
        for (const DeviceBuffer* d : {&tmpl_, &lcc_.redo}) b += int64_t(d->bytes());
        return b;
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

    int tap_row_ = 4;
    SlabGrid grid_{}, window_grid_{};   // slab_frame's blocks, slab_window's (LCC)
    void (*window_)(PlanesParams, int, int) = nullptr;   // LCC: slab_window, for the template's width
    DeviceBuffer slot_;
    DeviceBuffer tmpl_;     // the planes' spectra, the taps, their sum and prefix sums (set_template)
    LccBuffers lcc_;        // LCC: statistics, modes, the outputs to recompute
    PinnedBuffer staged_;   // tmpl_'s uploads
    const float* device_template_ = nullptr;   // set_device_template's, until its first frame
    SlabParams params_{};
    SlabTemplateWork template_work_{};   // all but the device template (create)
    FrameGraph graph_;
};

class SlabsSolver final : public LegacySolver {
public:
    const char* name() const override { return "device.fourier3.slabs"; }
    flcc_platform platform() const override { return FLCC_DEVICE; }

    bool applicable(const Problem& p) const override
    {
        if (p.dim != 3) return false;
        for (int a = 0; a < 3; ++a)
            if (p.templ[a] > kSlabMaxT) return false;
        // The statistics count and the recompute list index in int; the grids' extents.
        if (p.image_elems() >= (int64_t(1) << 31) || p.out_elems() >= (int64_t(1) << 31)) return false;
        const int64_t tiles = (p.out[2] + kSlabOut - 1) / kSlabOut * ((p.out[1] + kSlabOut - 1) / kSlabOut);
        return tiles < (int64_t(1) << 31);
    }

    // Cost model, its constants fitted at 256^3 / 8^3 on an H100 and an H200 (performance.md's
    // appendix): slab_frame ~11 us per step of 16 input planes per wave of blocks, LCC and
    // convolution alike; LCC adds slab_window, ~2.6 us per output plane of a chunk per wave of
    // its blocks (two per multiprocessor), the statistics ~1.3 ps per image element, and ~10 us
    // of launches and recompute_listed. Host-resident frames add their transfers, overlapped.
    double estimate_seconds(const Problem& p) const override
    {
        const int sms = device_properties(p.device).multiprocessors;
        const SlabGrid g = slab_grid(p, sms);
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

    flcc_result create(const Problem& p, std::unique_ptr<Executor>& out) const override
    {
        return make_device_executor<SlabsExecutor>(out, p);
    }
};

}  // namespace

void register_fourier_slabs_solver(SolverList& list)
{
    static const SlabsSolver solver;
    list.push_back(&solver);
}

}  // namespace flcc::device
