// device.fourier3.rows: 3D convolution and LCC for templates up to 8 x 8 x 8 by one fused kernel
// per frame (kernels/fourier_rows.cuh): 32-point transforms of the image rows in shared memory,
// the sum over the template's rows per frequency bin, the inverse transforms and (LCC) the
// window sums and coefficients, with no frame-sized intermediate. LCC frames run the image
// statistics and modes of device.fourier3.planes first and its recompute list after; the
// template rows' spectra are made on the host when the template changes. Per frame the kernels
// replay as one CUDA graph.
#include "device/fourier3_executor.h"
#include "device/kernels/fourier_rows.cuh"
#include "plan/registry.h"

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

class RowsExecutor final : public Fourier3Executor {
public:
    // `grid`: the candidate's layout (rows_grid).
    RowsExecutor(const Problem& p, const dim3& grid) : Fourier3Executor(p), grid_(grid) {}

    flcc_result create()
    {
        flcc_result r = init();
        if (r != FLCC_SUCCESS) return r;
        DeviceGuard guard(p_.device);
        const size_t all = template_block_bytes(kRowsTapBytes);
        if ((r = open(all, all)) != FLCC_SUCCESS) return r;
        static void (*const instances[kRowsMaxT])(PlanesParams, const float4*) = {
            rows_frame<1>, rows_frame<2>, rows_frame<3>, rows_frame<4>,
            rows_frame<5>, rows_frame<6>, rows_frame<7>, rows_frame<8>};
        frame_ = instances[T2 - 1];
        if ((r = raise_shared_limit(frame_, kRowsSharedBytes)) != FLCC_SUCCESS) return r;
        params_.guard = rows_guard_factor(T0, T1, T2);
        return bind_template_block(params_, kRowsTapBytes);
    }

    flcc_result set_template(const float* templ, bool constant) override
    {
        DeviceGuard guard(p_.device);
        std::vector<float> prepared;
        const flcc_result qr = prepare(templ, constant, prepared);   // the staging buffer and the spectra may be in use
        if (qr != FLCC_SUCCESS) return qr;
        // Staged in page-locked memory as tmpl_ holds them: the rows' spectra, the taps in rows
        // of tap_row (the recomputed windows'), their sum, and their prefix sums (the padding's
        // share); one upload.
        rows_template_spectra(prepared.data(), T0, T1, T2, staged_.as<float>());
        return upload_template_block(prepared, kRowsTapBytes);
    }

private:
    // One frame's work (the frame in the slot), on `s`.
    flcc_result enqueue_frame(cudaStream_t s)
    {
        const PlanesParams& q = params_;
        if (q.lcorr) enqueue_statistics(q, p_.image_elems(), s);
        frame_<<<grid_, kRowsThreads, kRowsSharedBytes, s>>>(q, tmpl_.as<float4>());
        if (q.lcorr) recompute_listed<<<256, 128, 0, s>>>(q);
        FLCC_CUDA_TRY(cudaGetLastError());
        return FLCC_SUCCESS;
    }

    flcc_result enqueue(const float* image, float* out, int64_t count, cudaStream_t s) override
    {
        return launch_frames(image, out, count, s, [this](cudaStream_t c) { return enqueue_frame(c); });
    }

    dim3 grid_;
    void (*frame_)(PlanesParams, const float4*) = nullptr;   // rows_frame<T2>
    PlanesParams params_{};
};

class RowsCandidate final : public Candidate {
public:
    RowsCandidate(const Problem& p, const dim3& grid) : p_(p), grid_(grid) {}

    // Cost model of an H100-class device (docs/performance.md describes the fit): per block of
    // 8 x 16 x 25 outputs at three blocks per multiprocessor, ~0.11 us of the GPU's time for LCC
    // and ~0.068 us for convolution, the sums over the template's planes scaling with T0; the
    // statistics ~2.5 ps per image element; ~15 us of small kernels and graph overhead.
    // Host-resident frames add their transfers, overlapped.
    double estimate_seconds() const override
    {
        const Problem& p = p_;
        const dim3& grid = grid_;
        const double blocks = double(grid.x) * grid.y * grid.z, depth = 0.5 + 0.5 * double(p.templ[0]) / kRowsMaxT;
        const bool lcorr = p.op == Op::lcorr;
        double t = (lcorr ? 0.11e-6 : 0.068e-6) * blocks * depth + (lcorr ? 2.5e-12 * double(p.image_elems()) : 0.0) + 15e-6;
        return with_host_transfers(p, t);
    }

    flcc_result create(std::unique_ptr<Executor>& out) const override
    {
        return make_device_executor<RowsExecutor>(out, p_, grid_);
    }

private:
    Problem p_;
    dim3 grid_;
};

class RowsSolver final : public Solver {
public:
    const char* name() const override { return "device.fourier3.rows"; }
    flcc_platform platform() const override { return FLCC_DEVICE; }

    std::unique_ptr<Candidate> plan(const Problem& p) const override
    {
        if (p.dim != 3) return nullptr;
        for (int a = 0; a < 3; ++a)
            if (p.templ[a] > kRowsMaxT) return nullptr;
        if (!fourier3_indexable(p)) return nullptr;
        // The grid's y and z extents.
        const dim3 grid = rows_grid(p);
        if (grid.y > 65535 || grid.z > 65535) return nullptr;
        return std::make_unique<RowsCandidate>(p, grid);
    }
};

}  // namespace

void register_fourier_rows_solver(SolverList& list)
{
    static const RowsSolver solver;
    list.push_back(&solver);
}

}  // namespace flcc::device
