// device.fourier3.planes: 3D convolution and LCC by one 2D cuFFT transform per image plane, the
// sum over the template's planes in the frequency domain, and one 2D inverse per output plane
// (kernels/fourier_planes.cuh). No tiles: the 2D box holds a whole padded plane, the planes
// axis needs no transform. cuFFT plans and the template planes' spectra are made at plan time
// and when the template changes; per frame the kernels and transforms replay as one CUDA graph.
#include "device/fourier3_executor.h"
#include "device/kernels/fourier_planes.cuh"
#include "geometry/fft_size.h"
#include "geometry/guard.h"
#include "plan/registry.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

namespace flcc::device {

namespace {

// The 2D box, planes transformed, and buffer sizes of a problem.
struct PlanesShape {
    int F1, F2, H, zlo, zhi;
    int64_t box() const { return int64_t(F1) * F2; }
    int planes() const { return zhi - zlo; }
};

PlanesShape planes_shape(const Problem& p)
{
    PlanesShape s;
    s.F1 = int(geometry::gpu_fft_size(int(p.out[1] + p.templ[1] - 1)));
    s.F2 = int(geometry::gpu_fft_size(int(p.out[2] + p.templ[2] - 1)));
    s.H = s.F1 * (s.F2 / 2 + 1);
    s.zlo = 0;   // output 0's window starts at plane -P0 <= 0
    s.zhi = int(std::min<int64_t>(p.image[0], p.out[0] + p.templ[0] - 1 - p.pad[0]));
    return s;
}

// Bytes of device memory per frame's buffers: the centred planes and their spectra, the output
// planes' spectra and boxes, the template planes' box and spectra.
double planes_bytes(const Problem& p, const PlanesShape& s)
{
    const double box = double(s.box()), half = double(s.H);
    return double(s.planes()) * (4 * box + 8 * half) + double(p.out[0]) * (8 * half + 4 * box) +
           double(p.templ[0]) * (4 * box + 8 * half) + 4.0 * double(p.out_elems());   // + the recompute list
}

class PlanesExecutor final : public Fourier3Executor {
public:
    // `shape`: the candidate's layout (planes_shape).
    PlanesExecutor(const Problem& p, const PlanesShape& shape) : Fourier3Executor(p), shape_(shape) {}

    flcc_result create()
    {
        flcc_result r = init();
        if (r != FLCC_SUCCESS) return r;
        DeviceGuard guard(p_.device);
        const PlanesShape& s = shape_;
        const bool lcorr = p_.op == Op::lcorr;
        const size_t taps = size_t(T0) * T1 * tap_row_ * sizeof(float);
        const size_t prefix = size_t(T0 + 1) * (T1 + 1) * (T2 + 1) * sizeof(double);
        const size_t box = size_t(s.box()) * sizeof(float), half = size_t(s.H) * sizeof(cufftComplex);
        if ((r = open(0, recompute_taps_bytes(T0, T1, T2, tap_row_))) != FLCC_SUCCESS ||
            (r = taps_.allocate(taps)) != FLCC_SUCCESS || (r = tap_sum_.allocate(sizeof(double))) != FLCC_SUCCESS ||
            (r = prefix_.allocate(prefix)) != FLCC_SUCCESS || (r = in_.allocate(box * size_t(s.planes()))) != FLCC_SUCCESS ||
            (r = spec_.allocate(half * size_t(s.planes()))) != FLCC_SUCCESS ||
            (r = sums_.allocate(half * size_t(p_.out[0]))) != FLCC_SUCCESS ||
            (r = num_.allocate(box * size_t(p_.out[0]))) != FLCC_SUCCESS ||
            (r = tbox_.allocate(box * size_t(T0))) != FLCC_SUCCESS ||
            (r = tspec_.allocate(half * size_t(T0))) != FLCC_SUCCESS)
            return r;

        int n[2] = {s.F1, s.F2};
        FLCC_CUFFT_TRY(cufftPlanMany(&r2c_.h, 2, n, nullptr, 1, int(s.box()), nullptr, 1, s.H, CUFFT_R2C, s.planes()));
        r2c_.made = true;
        FLCC_CUFFT_TRY(cufftPlanMany(&c2r_.h, 2, n, nullptr, 1, s.H, nullptr, 1, int(s.box()), CUFFT_C2R, int(p_.out[0])));
        c2r_.made = true;
        FLCC_CUFFT_TRY(cufftPlanMany(&t2c_.h, 2, n, nullptr, 1, int(s.box()), nullptr, 1, s.H, CUFFT_R2C, T0));
        t2c_.made = true;

        if (lcorr) {
            // Chunks of output planes: 32, halved (down to T0, at least 4) while the grid gives
            // fewer than ~4 blocks per multiprocessor; the guard follows the chunk.
            const int sms = device_properties(-1).multiprocessors;
            const int64_t columns = (p_.out[2] + kFinCols - 1) / kFinCols * ((p_.out[1] + kFinRows - 1) / kFinRows);
            chunk_ = 32;
            while (chunk_ / 2 >= std::max(T0, 4) && columns * ((p_.out[0] + chunk_ - 1) / chunk_) < 4 * int64_t(sms))
                chunk_ /= 2;
            finalise_ = fin_owned(T1, T2) == 6 ? finalise_planes<6, 8> : finalise_planes<9, 16>;
            const size_t bytes = planes_shared_bytes(T1, T2);
            if (bytes > (48u << 10) && (r = raise_shared_limit(finalise_, bytes)) != FLCC_SUCCESS) return r;
        }

        PlanesParams& q = params_;
        q.F1 = s.F1;
        q.F2 = s.F2;
        q.H = s.H;
        q.zlo = s.zlo;
        q.zhi = s.zhi;
        q.guard = geometry::frame_guard(T0, T1, T2, chunk_, kFinRun, kFinRun);
        q.in = in_.as<float>();
        q.spec = spec_.as<cufftComplex>();
        q.sums = sums_.as<cufftComplex>();
        q.tspec = tspec_.as<cufftComplex>();
        q.tscale = float(1.0 / double(s.box()));
        q.num = num_.as<float>();
        return bind(q, taps_.as<float>(), tap_sum_.as<double>(), prefix_.as<double>());
    }

    flcc_result set_template(const float* templ, bool constant) override
    {
        DeviceGuard guard(p_.device);
        std::vector<float> prepared;
        const flcc_result qr = prepare(templ, constant, prepared);   // the staging buffer and spectra may be in use
        if (qr != FLCC_SUCCESS) return qr;
        // Staged in page-locked memory (stage_recompute_taps): the taps in rows of tap_row, their
        // sum, their prefix sums; three uploads.
        stage_recompute_taps(prepared.data(), T0, T1, T2, tap_row_, staged_.as<char>());
        const size_t taps = taps_.bytes();
        const float* rows = staged_.as<float>();
        const size_t prefix = prefix_.bytes();
        const cudaStream_t s = work_stream();
        FLCC_CUDA_TRY(cudaMemcpyAsync(taps_.as<float>(), rows, taps, cudaMemcpyHostToDevice, s));
        FLCC_CUDA_TRY(cudaMemcpyAsync(tap_sum_.as<double>(), staged_.as<char>() + taps, sizeof(double),
                                      cudaMemcpyHostToDevice, s));
        FLCC_CUDA_TRY(cudaMemcpyAsync(prefix_.as<double>(), staged_.as<char>() + taps + sizeof(double), prefix,
                                      cudaMemcpyHostToDevice, s));
        // The template planes' spectra, on the device.
        template_planes<<<unsigned(T0 * shape_.F1), 256, 0, s>>>(params_, tbox_.as<float>());
        FLCC_CUDA_TRY(cudaGetLastError());
        FLCC_CUFFT_TRY(cufftSetStream(t2c_.h, s));
        FLCC_CUFFT_TRY(cufftExecR2C(t2c_.h, tbox_.as<float>(), tspec_.as<cufftComplex>()));
        return FLCC_SUCCESS;
    }

    int64_t memory_bytes() const override
    {
        int64_t b = Fourier3Executor::memory_bytes();
        for (const DeviceBuffer* d : {&in_, &spec_, &sums_, &num_, &tbox_, &tspec_, &prefix_, &taps_})
            b += int64_t(d->bytes());
        return b;
    }

private:
    // One frame's work (the frame in the slot), on `s`.
    flcc_result enqueue_frame(cudaStream_t s)
    {
        const PlanesParams& q = params_;
        const PlanesShape& sh = shape_;
        if (q.lcorr) enqueue_statistics(q, p_.image_elems(), s);
        constexpr int rpb = 8;
        gather_planes<rpb><<<unsigned((int64_t(sh.planes()) * sh.F1 + rpb - 1) / rpb), 256, 0, s>>>(q);
        FLCC_CUFFT_TRY(cufftSetStream(r2c_.h, s));
        FLCC_CUFFT_TRY(cufftExecR2C(r2c_.h, in_.as<float>(), spec_.as<cufftComplex>()));
        plane_sums<<<dim3(unsigned((sh.H + 255) / 256), unsigned((q.O[0] + kSumPlanes - 1) / kSumPlanes)), 256, 0, s>>>(q);
        FLCC_CUFFT_TRY(cufftSetStream(c2r_.h, s));
        FLCC_CUFFT_TRY(cufftExecC2R(c2r_.h, sums_.as<cufftComplex>(), num_.as<float>()));
        if (q.lcorr) {
            const dim3 grid(unsigned((q.O[2] + kFinCols - 1) / kFinCols), unsigned((q.O[1] + kFinRows - 1) / kFinRows),
                            unsigned((q.O[0] + chunk_ - 1) / chunk_));
            finalise_<<<grid, kFinThreads, planes_shared_bytes(q.T[1], q.T[2]), s>>>(q, chunk_);
            recompute_listed<<<256, 128, 0, s>>>(q);
        } else {
            crop_planes<rpb><<<unsigned((int64_t(q.O[0]) * q.O[1] + rpb - 1) / rpb), 128, 0, s>>>(q);
        }
        FLCC_CUDA_TRY(cudaGetLastError());
        return FLCC_SUCCESS;
    }

    flcc_result enqueue(const float* image, float* out, int64_t count, cudaStream_t s) override
    {
        return launch_frames(image, out, count, s, [this](cudaStream_t c) { return enqueue_frame(c); });
    }

    PlanesShape shape_;
    int chunk_ = 32;
    void (*finalise_)(PlanesParams, int) = nullptr;   // finalise_planes<K>
    DeviceBuffer taps_, tap_sum_, prefix_, in_, spec_, sums_, num_, tbox_, tspec_;
    CufftPlan r2c_, c2r_, t2c_;
    PlanesParams params_{};
};

class PlanesCandidate final : public Candidate {
public:
    PlanesCandidate(const Problem& p, const PlanesShape& shape) : p_(p), shape_(shape) {}

    // Cost model of an H100-class device (docs/performance.md describes the fit): each batched 2D
    // transform ~8.2 ps per box element; gather and the sum over planes ~3 ps per box element
    // each; the finalisation ~19 ps per output for LCC, the crop ~3 ps for convolution; ~25 us
    // of small kernels and graph overhead. Host-resident frames add their transfers, overlapped.
    double estimate_seconds() const override
    {
        const Problem& p = p_;
        const PlanesShape& s = shape_;
        const double box = double(s.box());
        double t = 8.2e-12 * box * (s.planes() + p.out[0]) + 3e-12 * box * (s.planes() + p.out[0]) +
                   (p.op == Op::lcorr ? 19e-12 : 3e-12) * double(p.out_elems()) + 25e-6;
        return with_host_transfers(p, t);
    }

    flcc_result create(std::unique_ptr<Executor>& out) const override
    {
        return make_device_executor<PlanesExecutor>(out, p_, shape_);
    }

private:
    Problem p_;
    PlanesShape shape_;
};

class PlanesSolver final : public Solver {
public:
    const char* name() const override { return "device.fourier3.planes"; }
    flcc_platform platform() const override { return FLCC_DEVICE; }

    std::unique_ptr<Candidate> plan(const Problem& p) const override
    {
        if (p.dim != 3) return nullptr;
        // finalise_planes' threads own a patch of at most (kFinRows + 15) x (kFinCols + 15).
        if (p.op == Op::lcorr && (p.templ[1] > kPlanesMaxT || p.templ[2] > kPlanesMaxT)) return nullptr;
        if (!fourier3_indexable(p)) return nullptr;
        const PlanesShape s = planes_shape(p);
        // cuFFT's batched plans take int distances and counts; buffers within 8 GiB.
        if (!(double(s.F1) * s.F2 < double(1 << 30) && planes_bytes(p, s) < 8.0 * (1 << 30))) return nullptr;
        return std::make_unique<PlanesCandidate>(p, s);
    }
};

}  // namespace

void register_fourier_planes_solver(SolverList& list)
{
    static const PlanesSolver solver;
    list.push_back(&solver);
}

}  // namespace flcc::device
