// device.fourier2.box: a small 2D problem in one FFT box, every frame one CUDA graph of the
// fewest kernels: the image and the template prepared together (two short kernels over chunks
// of both), one batched R2C of both, their product, one C2R, the map, and for LCC the window
// sums on a branch of the graph beside the transforms (kernels/fourier_box.cuh,
// built on the batch engine's kernels, so its numerics are the batch engine's: the guard and
// recomputed windows of lcc_common.cuh and the host's a-posteriori rule for Fourier numerators;
// the template's taps to the last bit or so). The tile solvers (fourier_solver.cu) split a
// problem into zones and groups, each with its own statistics, gather and window-sum kernels:
// right for large images, while a small one's time is then the kernels' count. The template is
// prepared inside the frame's graph, so a new template per exec (device memory or host) costs
// no more than an old one.
#include "device/cufft_util.h"
#include "device/executor.h"
#include "device/kernels/fourier_box.cuh"
#include "geometry/fft_size.h"
#include "geometry/guard.h"
#include "plan/registry.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <new>

namespace flcc::device {

namespace {

// Boxes up to 512 x 512: beyond them the tile solvers' zones cost less than one large box.
constexpr int64_t kMostBoxElements = int64_t(1) << 18;
static_assert(kMostBoxElements <= int64_t(box::kMostPrepBlocks) * box::kPrepChunk,
              "an image or template (within its box) fits the preparation's chunks");

// The box of a problem: per axis one that no lag of the region wraps around
// (geometry::correlation_box_size, as the batch engine's).
struct BoxShape {
    int bh, bw;
    int64_t elements() const { return int64_t(bh) * bw; }
    int64_t half() const { return int64_t(bh) * (bw / 2 + 1); }
};

BoxShape box_shape(const Problem& p)
{
    return {int(geometry::correlation_box_size(p.image[1], p.templ[1], p.pad[1])),
            int(geometry::correlation_box_size(p.image[2], p.templ[2], p.pad[2]))};
}

class BoxExecutor final : public DeviceExecutor {
public:
    BoxExecutor(const Problem& p, BoxShape b) : DeviceExecutor(p), b_(b) {}

    flcc_result create()
    {
        FLCC_TRY(init());
        DeviceGuard guard(p_.device);
        const int64_t h = p_.image[1], w = p_.image[2], T1 = p_.templ[1], T2 = p_.templ[2];
        const bool lcc = p_.op == Op::lcorr;
        FLCC_TRY(scratch_.allocate(sizeof(box::PrepScratch)));
        FLCC_TRY(boxes_.allocate(2 * size_t(b_.elements()) * sizeof(float)));
        FLCC_TRY(spectra_.allocate(2 * size_t(b_.half()) * sizeof(cufftComplex)));
        FLCC_TRY(circ_.allocate(size_t(b_.elements()) * sizeof(float)));
        FLCC_TRY(templ_.allocate(size_t(T1 * T2) * sizeof(float)));
        FLCC_TRY(staged_.allocate(size_t(T1 * T2) * sizeof(float)));
        FLCC_TRY(taps_.allocate(size_t(T1 * T2) * sizeof(float)));
        FLCC_TRY(tap_sum_.allocate(sizeof(double)));
        FLCC_TRY(modes_.allocate(sizeof(TileMode)));
        FLCC_TRY(bounds_.allocate(sizeof(double)));
        // The boxes' zeros beyond the image and the template are written once, here.
        FLCC_CUDA_TRY(cudaMemset(boxes_.as<void>(), 0, boxes_.bytes()));
        FLCC_CUDA_TRY(cudaDeviceSynchronize());
        int n[2] = {b_.bh, b_.bw};
        FLCC_CUFFT_TRY(cufftPlanMany(&r2c_.h, 2, n, nullptr, 1, int(b_.elements()), nullptr, 1, int(b_.half()),
                                     CUFFT_R2C, 2));
        r2c_.made = true;
        FLCC_CUFFT_TRY(cufftPlanMany(&c2r_.h, 2, n, nullptr, 1, int(b_.half()), nullptr, 1, int(b_.elements()),
                                     CUFFT_C2R, 1));
        c2r_.made = true;
        if (lcc) {
            FLCC_TRY(sums_.allocate(2 * size_t(p_.out[1] * p_.out[2]) * sizeof(double)));
            FLCC_TRY(raise_shared_limit(box::box_window_sums, band_bytes()));
            FLCC_TRY(side_.create());
            FLCC_TRY(fork_.create());
            FLCC_TRY(join_.create());
        }

        // The kernels' arguments but the frame's pointers (enqueue sets them).
        const double taps = double(T1 * T2);
        // The window sums' rounding bound: vertical running sums over T1 rows and up to
        // kBoxRows steps, prefix sums along rows (box_window_sums).
        const double guard_factor = geometry::fourier_tile_guard_2d(T1, T2, int(p_.out[2]), box::kBoxRows);
        const bool valid = p_.region == FLCC_VALID;   // no window reaches the padding: centred
        box::PrepareParams& q = prepare_;
        q.h = int(h);
        q.w = int(w);
        q.T1 = int(T1);
        q.T2 = int(T2);
        q.bh = b_.bh;
        q.bw = b_.bw;
        q.image_blocks = chunks(h * w);
        q.templ_blocks = chunks(T1 * T2);
        q.boxes = boxes_.as<float>();
        q.image_form = batch::ImageForm{lcc ? 1 : 0, valid ? 0 : 1, taps, guard_factor,
                                        std::log2(double(b_.elements())), modes_.as<TileMode>(), bounds_.as<double>()};
        q.taps = taps_.as<float>();
        q.tap_sum = tap_sum_.as<double>();
        q.scratch = scratch_.as<box::PrepScratch>();
        q.check_finite = p_.check_finite ? 1 : 0;
        q.status = status();
        // LCC correlates; the executor's convolution template is not reversed.
        final_ = batch::FinalParams{circ_.as<float>(), b_.bh, b_.bw, int(h), int(w), int(T1), int(T2),
                                    int(p_.out[1]), int(p_.out[2]), int(p_.pad[1]), int(p_.pad[2]),
                                    batch::Pairing{1, 1, 1, 0, 1, 0}, lcc ? 1 : 0, lcc ? 1 : 0, taps, nullptr,
                                    nullptr, modes_.as<TileMode>(), bounds_.as<double>(), nullptr, taps_.as<float>(),
                                    tap_sum_.as<double>(), nullptr};
        return FLCC_SUCCESS;
    }

    // A host template (already checked finite) becomes the template the frames read: its
    // preparation is part of every frame's graph.
    flcc_result set_template(const float* templ, bool) override
    {
        DeviceGuard guard(p_.device);
        FLCC_TRY(quiesce());
        const size_t bytes = templ_.bytes();
        std::copy(templ, templ + p_.templ_elems(), staged_.as<float>());
        FLCC_CUDA_TRY(cudaMemcpyAsync(templ_.as<float>(), staged_.as<float>(), bytes, cudaMemcpyHostToDevice,
                                      work_stream()));
        current_ = templ_.as<float>();
        return FLCC_SUCCESS;
    }

    // A device template is read where it lies, by each frame's graph.
    bool prepares_device_templates() const override { return true; }
    flcc_result set_device_template(const float* templ) override
    {
        current_ = templ;
        return FLCC_SUCCESS;
    }

    int64_t memory_bytes() const override
    {
        int64_t b = DeviceExecutor::memory_bytes();
        for (const DeviceBuffer* d : {&scratch_, &boxes_, &spectra_, &circ_, &templ_, &taps_, &sums_})
            b += int64_t(d->bytes());
        return b;
    }

private:
    static int chunks(int64_t elements) { return int((elements + box::kPrepChunk - 1) / box::kPrepChunk); }
    size_t band_bytes() const { return size_t(batch::banded_doubles(p_.image[2])) * sizeof(double); }

    // The frame's kernels; the preparation and the finalisation take the frame's pointers in q
    // and f (named for set_arguments). LCC's window sums, which need the image's box only, run
    // on a branch of the graph beside the transforms and the product.
    flcc_result enqueue_frame(cudaStream_t s, const box::PrepareParams& q, const batch::FinalParams& f)
    {
        const bool lcc = f.lcc != 0;
        box::prepare_stats<<<q.image_blocks + q.templ_blocks, box::kPrepThreads, 0, s>>>(q);
        FLCC_CUDA_TRY(cudaGetLastError());
        FLCC_TRY(graph_.name_last(s, reinterpret_cast<const void*>(box::prepare_stats)));
        FLCC_TRY(launch_dependent(box::prepare_boxes, dim3(q.image_blocks + q.templ_blocks), dim3(box::kPrepThreads),
                                  0, s, q));
        FLCC_TRY(graph_.name_last(s, reinterpret_cast<const void*>(box::prepare_boxes)));
        if (lcc) {
            const unsigned bands = unsigned((p_.out[1] + box::kBoxRows - 1) / box::kBoxRows);
            FLCC_CUDA_TRY(cudaEventRecord(fork_.get(), s));
            FLCC_CUDA_TRY(cudaStreamWaitEvent(side_.get(), fork_.get(), 0));
            box::box_window_sums<<<bands, batch::kBandedThreads, band_bytes(), side_.get()>>>(
                f, boxes_.as<const float>(), sums_.as<double>(), q);
            FLCC_CUDA_TRY(cudaGetLastError());
            FLCC_CUDA_TRY(cudaEventRecord(join_.get(), side_.get()));
        }
        FLCC_CUFFT_TRY(cufftSetStream(r2c_.h, s));
        FLCC_CUFFT_TRY(cufftExecR2C(r2c_.h, boxes_.as<cufftReal>(), spectra_.as<cufftComplex>()));
        const int64_t half = b_.half();
        const float scale = float(1.0 / double(b_.elements()));
        cufftComplex* spec = spectra_.as<cufftComplex>();
        // In place: the product replaces the image's spectrum.
        if (half % 2 == 0)
            batch::multiply<2><<<batch::blocks_for(half / 2, 256), 256, 0, s>>>(spec, spec + half, spec, half,
                                                                               f.pairing, f.correlate, scale);
        else
            batch::multiply<1><<<batch::blocks_for(half, 256), 256, 0, s>>>(spec, spec + half, spec, half, f.pairing,
                                                                           f.correlate, scale);
        FLCC_CUDA_TRY(cudaGetLastError());
        if (lcc) FLCC_CUDA_TRY(cudaStreamWaitEvent(s, join_.get(), 0));
        FLCC_CUFFT_TRY(cufftSetStream(c2r_.h, s));
        FLCC_CUFFT_TRY(cufftExecC2R(c2r_.h, spec, circ_.as<cufftReal>()));
        const unsigned runs = unsigned((p_.out[1] + box::kFinalBoxRows - 1) / box::kFinalBoxRows);
        FLCC_TRY(launch_dependent(box::finalise_box, dim3(runs), dim3(batch::kBandedThreads), 0, s, f,
                                  sums_.as<const double>()));
        return graph_.name_last(s, reinterpret_cast<const void*>(box::finalise_box));
    }

    flcc_result enqueue(const float* image, float* out, int64_t count, cudaStream_t s) override
    {
        for (int64_t i = 0; i < count; ++i) {
            box::PrepareParams q = prepare_;
            q.image = image + i * p_.image_elems();
            q.templ = current_;
            batch::FinalParams f = final_;
            f.images = q.image;   // recomputed windows
            f.maps = out + i * p_.out_elems();
            if (graph_.captured()) {
                void* prepare_args[] = {&q};
                FLCC_TRY(graph_.set_arguments(reinterpret_cast<const void*>(box::prepare_stats), prepare_args));
                FLCC_TRY(graph_.set_arguments(reinterpret_cast<const void*>(box::prepare_boxes), prepare_args));
                const double* sums = sums_.as<const double>();
                void* final_args[] = {&f, &sums};
                FLCC_TRY(graph_.set_arguments(reinterpret_cast<const void*>(box::finalise_box), final_args));
            }
            FLCC_TRY(graph_.launch(s, [&](cudaStream_t c) { return enqueue_frame(c, q, f); }));
        }
        return FLCC_SUCCESS;
    }

    BoxShape b_;
    DeviceBuffer scratch_, boxes_, spectra_, circ_, templ_, taps_, tap_sum_, modes_, bounds_;
    DeviceBuffer sums_;    // LCC: every output's window sums of x and x^2 (box_window_sums)
    Stream side_;          // the window sums' branch of the frame's graph (captured)
    Event fork_, join_;
    PinnedBuffer staged_;
    const float* current_ = nullptr;   // the template the next frames read
    CufftPlan r2c_, c2r_;
    box::PrepareParams prepare_{};
    batch::FinalParams final_{};
    FrameGraph graph_;
};

class BoxCandidate final : public Candidate {
public:
    BoxCandidate(const Problem& p, BoxShape b) : p_(p), b_(b) {}

    // Cost model of an H100-class device, as the tile solvers' (fourier_solver.cu): three
    // transforms of the box at ~15 TFLOP/s effective, ~60 bytes of memory traffic per box
    // element at ~2.5 TB/s, and ~12 us for the graph's chain of kernels; LCC's window sums
    // (bands of one block each, T1 window rows before their kBoxRows rows).
    double estimate_seconds() const override
    {
        const double box = double(b_.elements());
        double t = 3 * 5 * box * std::log2(box) / 15e12 + 60 * box / 2.5e12 + 12e-6;
        if (p_.op == Op::lcorr) t += double(p_.templ[1] + box::kBoxRows) * 20e-9;
        return with_host_transfers(p_, t);
    }

    flcc_result create(std::unique_ptr<Executor>& out) const override
    {
        return make_device_executor<BoxExecutor>(out, p_, b_);
    }

private:
    Problem p_;
    BoxShape b_;
};

class BoxSolver final : public Solver {
public:
    const char* name() const override { return "device.fourier2.box"; }
    flcc_platform platform() const override { return FLCC_DEVICE; }

    std::unique_ptr<Candidate> plan(const Problem& p) const override
    {
        if (p.dim != 2) return nullptr;
        // LCC's banded finalisation runs a thread per image column.
        if (p.op == Op::lcorr && p.image[2] > batch::kBandedWidth) return nullptr;
        const BoxShape b = box_shape(p);
        if (b.elements() > kMostBoxElements) return nullptr;
        return std::make_unique<BoxCandidate>(p, b);
    }
};

}  // namespace

void register_fourier_box_solver(SolverList& list)
{
    static const BoxSolver solver;
    list.push_back(&solver);
}

}  // namespace flcc::device
