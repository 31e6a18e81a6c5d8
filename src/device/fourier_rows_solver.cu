// device.fourier3.rows: 3D convolution and LCC for templates up to 8 x 8 x 8 by one fused kernel
// per frame (kernels/fourier_rows.cuh): 32-point transforms of the image rows in shared memory,
// the sum over the template's rows per frequency bin, the inverse transforms and (LCC) the
// window sums and coefficients, with no frame-sized intermediate. LCC frames run the image
// statistics and modes of device.fourier3.planes first and its recompute list after; the
// template rows' spectra are made on the host when the template changes. Per frame the kernels
// replay as one CUDA graph.
#include "device/cufft_util.h"
#include "device/executor.h"
#include "device/kernels/fourier_rows.cuh"
#include "plan/legacy_solver.h"
#include "plan/registry.h"
#include "plan/template.h"

#include <cstring>
#include <memory>
#include <vector>

namespace flcc::device {

namespace {

dim3 rows_grid(const Problem& p)
{
    return dim3(unsigned((p.out[2] + kRowsX - 1) / kRowsX), unsigned((p.out[1] + kRowsY - 1) / kRowsY),
                unsigned((p.out[0] + kRowsZ - 1) / kRowsZ));
}

class RowsExecutor final : public DeviceExecutor {
public:
    explicit RowsExecutor(const Problem& p) : DeviceExecutor(p) {}

    flcc_result create()
    {
        flcc_result r = init();
        if (r != FLCC_SUCCESS) return r;
        DeviceGuard guard(p_.device);
        const bool lcorr = p_.op == Op::lcorr;
        const int T0 = int(p_.templ[0]), T1 = int(p_.templ[1]), T2 = int(p_.templ[2]);
        tap_row_ = (T2 + 3) / 4 * 4;
        taps_bytes_ = size_t(T0) * T1 * tap_row_ * sizeof(float);   // a multiple of 16
        const size_t all = kRowsTapBytes + recompute_taps_bytes(T0, T1, T2, tap_row_);
        if ((r = slot_.allocate(sizeof(FrameSlot))) != FLCC_SUCCESS || (r = tmpl_.allocate(all)) != FLCC_SUCCESS ||
            (r = staged_.allocate(all)) != FLCC_SUCCESS)
            return r;
        if (lcorr && (r = lcc_.allocate(p_.out_elems())) != FLCC_SUCCESS) return r;
        static void (*const instances[kRowsMaxT])(PlanesParams, const float4*) = {
            rows_frame<1>, rows_frame<2>, rows_frame<3>, rows_frame<4>,
            rows_frame<5>, rows_frame<6>, rows_frame<7>, rows_frame<8>};
        frame_ = instances[T2 - 1];
        if ((r = raise_shared_limit(frame_, kRowsSharedBytes)) != FLCC_SUCCESS) return r;

        PlanesParams& q = params_;
        q.frame = slot_.as<FrameSlot>();
        set_problem(q, p_);
        q.guard = rows_guard_factor(T0, T1, T2);
        char* t = tmpl_.as<char>();
        q.taps = reinterpret_cast<const float*>(t + kRowsTapBytes);
        q.tap_row = tap_row_;
        q.tap_sum = reinterpret_cast<const double*>(t + kRowsTapBytes + taps_bytes_);
        q.prefix = q.tap_sum + 1;
        if (lcorr && (r = lcc_.bind(q, work_stream())) != FLCC_SUCCESS) return r;
        q.status = status();
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
        // Staged in page-locked memory as tmpl_ holds them: the rows' spectra, the taps in rows
        // of tap_row (the recomputed windows'), their sum, and their prefix sums (the padding's
        // share); one upload.
        char* staged = staged_.as<char>();
        rows_template_spectra(prepared.data(), T0, T1, T2, reinterpret_cast<float*>(staged));
        stage_recompute_taps(prepared.data(), T0, T1, T2, tap_row_, staged + kRowsTapBytes);
        FLCC_CUDA_TRY(cudaMemcpyAsync(tmpl_.as<char>(), staged, tmpl_.bytes(), cudaMemcpyHostToDevice, work_stream()));
        return FLCC_SUCCESS;
    }

    int64_t memory_bytes() const override
    {
        int64_t b = DeviceExecutor::memory_bytes();
        for (const DeviceBuffer* d : {&tmpl_, &lcc_.redo}) b += int64_t(d->bytes());
        return b;
    }

private:
    // One frame's work (the frame in the slot), on `s`.
    flcc_result enqueue_frame(cudaStream_t s)
    {
        const PlanesParams& q = params_;
        if (q.lcorr) enqueue_statistics(q, p_.image_elems(), s);
        frame_<<<rows_grid(p_), kRowsThreads, kRowsSharedBytes, s>>>(q, tmpl_.as<float4>());
        if (q.lcorr) recompute_listed<<<256, 128, 0, s>>>(q);
        FLCC_CUDA_TRY(cudaGetLastError());
        return FLCC_SUCCESS;
    }

    flcc_result enqueue(const float* image, float* out, int64_t count, cudaStream_t s) override
    {
        return graph_.launch_frames(slot_.as<FrameSlot>(), image, p_.image_elems(), out, p_.out_elems(), count, s,
                                    [this](cudaStream_t c) { return enqueue_frame(c); });
    }

    int tap_row_ = 4;
    size_t taps_bytes_ = 0;
    void (*frame_)(PlanesParams, const float4*) = nullptr;   // rows_frame<T2>
    DeviceBuffer slot_;
    DeviceBuffer tmpl_;     // the rows' spectra, the taps, their sum and prefix sums (set_template)
    LccBuffers lcc_;        // LCC: statistics, modes, the outputs to recompute
    PinnedBuffer staged_;   // tmpl_'s uploads
    PlanesParams params_{};
    FrameGraph graph_;
};

class RowsSolver final : public LegacySolver {
public:
    const char* name() const override { return "device.fourier3.rows"; }
    flcc_platform platform() const override { return FLCC_DEVICE; }

    bool applicable(const Problem& p) const override
    {
        if (p.dim != 3) return false;
        for (int a = 0; a < 3; ++a)
            if (p.templ[a] > kRowsMaxT) return false;
        // The statistics count and the recompute list index in int; the grid's y and z extents.
        if (p.image_elems() >= (int64_t(1) << 31) || p.out_elems() >= (int64_t(1) << 31)) return false;
        const dim3 grid = rows_grid(p);
        return grid.y <= 65535 && grid.z <= 65535;
    }

    // Cost model, its constants fitted on an H100 (performance.md's appendix): per block of
    // 8 x 16 x 25 outputs at three blocks per multiprocessor, ~0.11 us of the GPU's time for LCC
    // and ~0.068 us for convolution, the sums over the template's planes scaling with T0; the
    // statistics ~2.5 ps per image element; ~15 us of small kernels and graph overhead.
    // Host-resident frames add their transfers, overlapped.
    double estimate_seconds(const Problem& p) const override
    {
        const dim3 grid = rows_grid(p);
        const double blocks = double(grid.x) * grid.y * grid.z, depth = 0.5 + 0.5 * double(p.templ[0]) / kRowsMaxT;
        const bool lcorr = p.op == Op::lcorr;
        double t = (lcorr ? 0.11e-6 : 0.068e-6) * blocks * depth + (lcorr ? 2.5e-12 * double(p.image_elems()) : 0.0) + 15e-6;
        return with_host_transfers(p, t);
    }

    flcc_result create(const Problem& p, std::unique_ptr<Executor>& out) const override
    {
        return make_device_executor<RowsExecutor>(out, p);
    }
};

}  // namespace

void register_fourier_rows_solver(SolverList& list)
{
    static const RowsSolver solver;
    list.push_back(&solver);
}

}  // namespace flcc::device
