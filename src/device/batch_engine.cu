// The GPU engine of batch plans (plan/batch_engine.h), 2D, in two forms.
// - Fourier ("device.batch.fourier"): every pair is one linear correlation (convolution) in a
//   box of fast cuFFT size >= S + P per axis (image extent plus the region's padding), which
//   leaves no circular wrap inside the region: the images' and templates' boxes go through
//   batched R2C transforms (cuFFT plan-many), each pair's product through one batched C2R, and
//   the maps, LCC's normalisation, the best over templates and the peaks are kernels after it.
// - Direct ("device.batch.direct"): the same preparation, then one block per pair sums the
//   products in shared memory and finalises its map (batch_direct.cuh); for small pairs.
// - Block transforms ("device.batch.blockfft"): the same preparation in a 64 x 64 box, the
//   templates' spectra by block_fft_templates (no cuFFT plans), then one block per pair
//   transforms, multiplies, transforms back and finalises in shared memory (batch_block_fft.cuh).
// One launch runs up to `group` frames at once (small problems fill the GPU only together, and
// each kernel boundary costs the same for one frame as for many), as one CUDA graph per input
// buffer and frame count, replayed. Launches alternate two input buffers, so the upload of the
// next frames (a copy stream) overlaps the compute of these, and the host reads the peaks of
// the previous launch meanwhile.
#include "device/batch_block_fft.cuh"
#include "device/batch_direct.cuh"
#include "device/cufft_util.h"
#include "geometry/fft_size.h"
#include "geometry/guard.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

namespace flcc::device {

namespace {

using batch::blocks_for;
using batch::threads_for;

// Pairs per launch that fill the GPU, and the most device memory a launch's frames may take.
constexpr int kLaunchPairs = 1024;
constexpr int kMaxGroup = 32;
constexpr int64_t kLaunchBudget = int64_t(1) << 30;

// The bad-input flags' "none" (cudaMemset to 0x7f bytes).
constexpr int kNoneBad = 0x7f7f7f7f;

class Engine final : public BatchEngine {
public:
    explicit Engine(const BatchEngineSpec& s) : s_(s) {}

    static flcc_result make(const BatchEngineSpec& s, std::unique_ptr<BatchEngine>& out);

    const char* name() const override { return engine_name(s_.kind); }
    int patch_floats() const override { return side_ * side_; }
    flcc_result prepare_templates(const void* set, int& bad) override;
    flcc_result run(const void* images, const void* templs, float* maps, int frames, Sink& sink,
                    int& bad, int& bad_frame) override;

private:
    struct Side {
        batch::SideParams params{};
        int count = 0;     // per frame
        int sets = 1;      // frames' worth of items held: the group, or 1 (one template set)
        int64_t frame_bytes = 0;
        DeviceBuffer origins, compact, box, spectra;
        DeviceBuffer input[2];
        CufftPlan r2c;     // one template set (templates without templ_per_frame; not blockfft)
    };

    // What a launch of `count` frames needs of its own: transforms batched for count frames and
    // the graphs captured with them (the Fourier form's plans; blockfft makes none). A launch
    // runs group_ frames, the last of an exec fewer.
    struct Shape {
        int count = 0;
        CufftPlan images, templs, c2r;
        FrameGraph graphs[2][2];   // [input buffer][with the frames' own templates]
    };
    flcc_result shape(int count, Shape*& out);

    int64_t frame_bytes_on_device() const;
    flcc_result allocate();
    flcc_result setup_side(Side& side, const EngineSource& src, const Extent& e, int sets);
    flcc_result enqueue_templates(cudaStream_t s, const void* input, int sets, cufftHandle plan);
    flcc_result enqueue_launch(cudaStream_t s, int slot, bool templates, const Shape& shape);
    flcc_result enqueue_peaks(cudaStream_t s, int frames);
    flcc_result deliver(int slot, int first, int count, Sink& sink, int& bad, int& bad_frame);
    flcc_result follow_legacy();

    BatchEngineSpec s_;
    int bh_ = 0, bw_ = 0, side_ = 3, maps_per_frame_ = 0, group_ = 1;
    int64_t half_ = 0, outs_ = 0, map_floats_ = 0, peaks_per_frame_ = 0;
    Side images_, templs_;
    DeviceBuffer taps_, tap_sum_, modes_, bounds_, product_, circ_, h1_, h2_, maps_, best_;
    DeviceBuffer peaks_, patches_, bad_;
    PinnedBuffer host_peaks_[2], host_patches_[2], host_bad_[2];
    std::map<int, std::unique_ptr<Shape>> shapes_;
    Stream compute_, copy_;
    Event uploaded_[2], consumed_[2], done_[2];
    Event legacy_;   // the caller's work on the legacy default stream (see follow_legacy)
    double guard_ = 0;
    bool banded_ = false;   // LCC finalised by finalise_banded (narrow subregions)
    size_t banded_shared() const { return size_t(batch::banded_doubles(s_.image[2])) * sizeof(double); }
    bool direct_ = false;   // EngineKind::direct: direct_pairs instead of the transforms
    bool block_ = false;    // EngineKind::block: block_fft_pairs instead of the pairs' transforms
    bool block_table() const { return batch::block_fft_table(s_.image[1], s_.image[2], s_.out[1], s_.out[2]); }
    int64_t block_sum_doubles() const
    {
        return batch::block_fft_sum_doubles(s_.image[1], s_.image[2], s_.out[1], s_.out[2], s_.op == Op::lcorr);
    }
    batch::DirectLayout direct_layout() const
    {
        return batch::DirectLayout(int(s_.image[1]), int(s_.image[2]), int(s_.templ[1]), int(s_.templ[2]),
                                   int(s_.out[1]), int(s_.out[2]), s_.op == Op::lcorr);
    }
    unsigned direct_threads() const
    {
        const int most = std::max(direct_layout().tiles(), int(s_.image[2]));
        return unsigned(std::min(batch::kDirectMaxThreads, std::max(64, (most + 31) / 32 * 32)));
    }

};

flcc_result Engine::make(const BatchEngineSpec& s, std::unique_ptr<BatchEngine>& out)
{
    if (s.image[0] != 1 || s.templ[0] != 1 || s.peaks > batch::kMostPeaks) return FLCC_METHOD_NOT_APPLICABLE;
    for (int a = 1; a < 3; ++a)
        if (s.image[a] + s.pad[a] > (int64_t(1) << 24) || s.out[a] > (int64_t(1) << 24))
            return FLCC_METHOD_NOT_APPLICABLE;
    DeviceGuard guard(s.device);
    if (!guard.ok()) return FLCC_DEVICE_ERROR;
    std::unique_ptr<Engine> e(new Engine(s));
    e->direct_ = s.kind == EngineKind::direct;
    e->block_ = s.kind == EngineKind::block;
    if (e->block_) {
        if (!fits_block_fft_box(s.image, s.templ, s.pad)) return FLCC_METHOD_NOT_APPLICABLE;
        const flcc_result r = raise_shared_limit(
            batch::block_fft_pairs, size_t(batch::block_fft_shared_bytes(e->block_sum_doubles())));
        if (r != FLCC_SUCCESS) return r;
    }
    if (e->direct_) {
        // One block per pair: the pair's arrays fit shared memory, and the banded finalisation
        // has a thread per image column.
        if (s.op == Op::lcorr && s.image[2] > batch::kBandedWidth) return FLCC_METHOD_NOT_APPLICABLE;
        const flcc_result r = raise_shared_limit(batch::direct_pairs, size_t(e->direct_layout().bytes()));
        if (r != FLCC_SUCCESS) return r;
    }
    const flcc_result r = e->allocate();
    if (r != FLCC_SUCCESS) return r;
    out = std::move(e);
    return FLCC_SUCCESS;
}

flcc_result Engine::setup_side(Side& side, const EngineSource& src, const Extent& e, int sets)
{
    batch::SideParams& p = side.params;
    side.count = src.count;
    side.sets = sets;
    p.type = src.type;
    p.count = src.count;
    p.h = int(e[1]);
    p.w = int(e[2]);
    p.row = src.cut ? int(src.frame[2]) : p.w;
    p.frame_elems = src.cut ? src.frame[1] * src.frame[2] : int64_t(src.count) * p.h * p.w;
    p.zero_mean = s_.zero_mean;
    p.hann = s_.hann;
    p.check_finite = s_.check_finite;
    p.bh = bh_;
    p.bw = bw_;
    const int64_t elem = src.type == FLCC_UINT8 ? 1 : src.type == FLCC_UINT16 ? 2 : 4;
    side.frame_bytes = p.frame_elems * elem;
    if (src.cut) {
        std::vector<int2> origins(size_t(src.count));
        for (int i = 0; i < src.count; ++i)
            origins[size_t(i)] = make_int2(int(src.origins[size_t(i)][1]), int(src.origins[size_t(i)][2]));
        FLCC_TRY(side.origins.allocate(origins.size() * sizeof(int2)));
        FLCC_CUDA_TRY(cudaMemcpy(side.origins.as<void>(), origins.data(), origins.size() * sizeof(int2),
                                 cudaMemcpyHostToDevice));
        p.origins = side.origins.as<int2>();
    }
    const size_t items = size_t(sets) * size_t(src.count);
    FLCC_TRY(side.compact.allocate(items * size_t(p.h) * p.w * sizeof(float)));
    FLCC_TRY(side.box.allocate(items * size_t(bh_) * bw_ * sizeof(float)));
    FLCC_TRY(side.spectra.allocate(items * size_t(half_) * sizeof(cufftComplex)));
    // The boxes' zeros beyond the subregions are written here, once: the kernels write the
    // subregions alone.
    FLCC_CUDA_TRY(cudaMemset(side.box.as<void>(), 0, side.box.bytes()));
    p.compact = side.compact.as<float>();
    p.box = side.box.as<float>();
    return FLCC_SUCCESS;
}

// Device bytes one frame's work takes (inputs, boxes, spectra, products, maps, window sums).
int64_t Engine::frame_bytes_on_device() const
{
    const int64_t box = int64_t(bh_) * bw_, S = s_.image[1] * s_.image[2], T = s_.templ[1] * s_.templ[2];
    const int64_t ni = s_.images.count, nt = s_.templ_per_frame ? s_.templates.count : 0, np = s_.pairs;
    int64_t b = ni * (S + box + 2 * half_) * 4 + nt * (T + box + 2 * half_) * 4;
    b += np * (2 * half_ + box + outs_) * 4;
    if (s_.op == Op::lcorr && s_.image[2] > batch::kBandedWidth) b += ni * 16 * s_.image[1] * s_.out[2];
    if (s_.best) b += ni * 2 * outs_ * 4;
    return b;
}

flcc_result Engine::allocate()
{
    if (direct_) {   // boxes without transforms: each side's values at the origin
        bh_ = int(std::max(s_.image[1], s_.templ[1]));
        bw_ = int(std::max(s_.image[2], s_.templ[2]));
        half_ = 0;
    } else if (block_) {
        bh_ = bw_ = batch::kBlockFftSide;
        half_ = int64_t(bh_) * (bw_ / 2 + 1);
    } else {
        bh_ = int(geometry::correlation_box_size(s_.image[1], s_.templ[1], s_.pad[1]));
        bw_ = int(geometry::correlation_box_size(s_.image[2], s_.templ[2], s_.pad[2]));
        half_ = int64_t(bh_) * (bw_ / 2 + 1);
    }
    outs_ = s_.out[1] * s_.out[2];
    side_ = 2 * s_.patch_radius + 1;
    maps_per_frame_ = s_.best ? s_.images.count : s_.pairs;
    map_floats_ = int64_t(maps_per_frame_) * outs_ * (s_.best ? 2 : 1);
    peaks_per_frame_ = int64_t(maps_per_frame_) * std::max(s_.peaks, 1);
    group_ = std::max(1, std::min({kMaxGroup, kLaunchPairs / std::max(s_.pairs, 1),
                                   int(kLaunchBudget / std::max<int64_t>(frame_bytes_on_device(), 1))}));
    // cuFFT's batch counts are ints.
    while (group_ > 1 && int64_t(group_) * std::max(s_.pairs, s_.images.count) * half_ > INT_MAX) --group_;
    // The window sums' rounding bound: running sums (window_rows, finalise) or vertical running
    // sums and row prefix sums (finalise_banded); the larger serves both.
    guard_ = std::max(geometry::tile_kernel_guard(1.0, double(s_.templ[1]), double(s_.templ[2]), 1,
                                                  int(s_.out[1]), int(s_.out[2])),
                      geometry::fourier_tile_guard_2d(s_.templ[1], s_.templ[2], int(s_.out[2]), int(s_.out[1])));
    // block_fft_pairs's summed-area tables, where it takes them.
    if (block_ && block_table())
        guard_ = std::max(guard_, geometry::summed_area_guard(s_.image[1], s_.image[2]));
    FLCC_TRY(legacy_.create());
    FLCC_TRY(compute_.create());
    FLCC_TRY(copy_.create());
    for (int i = 0; i < 2; ++i) {
        FLCC_TRY(uploaded_[i].create());
        FLCC_TRY(consumed_[i].create());
        FLCC_TRY(done_[i].create());
    }
    FLCC_TRY(setup_side(images_, s_.images, s_.image, group_));
    FLCC_TRY(setup_side(templs_, s_.templates, s_.templ, s_.templ_per_frame ? group_ : 1));
    for (int i = 0; i < 2; ++i) {
        FLCC_TRY(images_.input[i].allocate(size_t(group_ * images_.frame_bytes)));
        if (i == 0 || s_.templ_per_frame) {
            FLCC_TRY(templs_.input[i].allocate(size_t(templs_.sets * templs_.frame_bytes)));
        }
    }
    const bool lcc = s_.op == Op::lcorr;
    const size_t ni = size_t(group_) * s_.images.count, np = size_t(group_) * s_.pairs;
    const size_t nt = size_t(templs_.sets) * s_.templates.count;
    banded_ = lcc && !direct_ && !block_ && s_.image[2] <= batch::kBandedWidth;
    if (banded_) FLCC_TRY(raise_shared_limit(batch::finalise_banded, banded_shared()));
    if (lcc) {
        FLCC_TRY(taps_.allocate(nt * size_t(s_.templ[1] * s_.templ[2]) * sizeof(float)));
        FLCC_TRY(tap_sum_.allocate(nt * sizeof(double)));
        FLCC_TRY(modes_.allocate(ni * sizeof(TileMode)));
        FLCC_TRY(bounds_.allocate(ni * sizeof(double)));
        if (!banded_ && !direct_ && !block_) {
            FLCC_TRY(h1_.allocate(ni * size_t(s_.image[1] * s_.out[2]) * sizeof(double)));
            FLCC_TRY(h2_.allocate(ni * size_t(s_.image[1] * s_.out[2]) * sizeof(double)));
        }
    }
    if (!direct_ && !block_) {
        FLCC_TRY(product_.allocate(np * size_t(half_) * sizeof(cufftComplex)));
        FLCC_TRY(circ_.allocate(np * size_t(bh_) * bw_ * sizeof(float)));
    }
    FLCC_TRY(maps_.allocate(np * size_t(outs_) * sizeof(float)));
    if (s_.best) FLCC_TRY(best_.allocate(ni * 2 * size_t(outs_) * sizeof(float)));
    const size_t npeaks = size_t(group_) * size_t(peaks_per_frame_);
    FLCC_TRY(peaks_.allocate(npeaks * sizeof(EnginePeak)));
    FLCC_TRY(patches_.allocate(npeaks * size_t(side_ * side_) * sizeof(float)));
    // Whole patches are copied back; a flat map's, or one cut at the map's edge, fills less.
    FLCC_CUDA_TRY(cudaMemset(patches_.as<void>(), 0, patches_.bytes()));
    FLCC_TRY(bad_.allocate(2 * sizeof(int)));
    for (int i = 0; i < 2; ++i) {
        FLCC_TRY(host_peaks_[i].allocate(npeaks * sizeof(EnginePeak)));
        FLCC_TRY(host_patches_[i].allocate(npeaks * size_t(side_ * side_) * sizeof(float)));
        FLCC_TRY(host_bad_[i].allocate(2 * sizeof(int)));
    }
    if (!s_.templ_per_frame && !direct_ && !block_) {
        int dims[2] = {bh_, bw_};
        FLCC_CUFFT_TRY(cufftPlanMany(&templs_.r2c.h, 2, dims, nullptr, 1, bh_ * bw_, nullptr, 1,
                                     int(half_), CUFFT_R2C, s_.templates.count));
        templs_.r2c.made = true;
    }
    Shape* full = nullptr;
    return shape(group_, full);
}

flcc_result Engine::shape(int count, Shape*& out)
{
    std::unique_ptr<Shape>& made = shapes_[count];
    if (made == nullptr) {
        auto sh = std::make_unique<Shape>();
        sh->count = count;
        if (!direct_) {
            int dims[2] = {bh_, bw_};
            const int box = bh_ * bw_, half = int(half_);
            if (!block_) {
                FLCC_CUFFT_TRY(cufftPlanMany(&sh->images.h, 2, dims, nullptr, 1, box, nullptr, 1, half, CUFFT_R2C,
                                             count * s_.images.count));
                sh->images.made = true;
                FLCC_CUFFT_TRY(cufftPlanMany(&sh->c2r.h, 2, dims, nullptr, 1, half, nullptr, 1, box, CUFFT_C2R,
                                             count * s_.pairs));
                sh->c2r.made = true;
            }
            if (s_.templ_per_frame && !block_) {
                FLCC_CUFFT_TRY(cufftPlanMany(&sh->templs.h, 2, dims, nullptr, 1, box, nullptr, 1, half,
                                             CUFFT_R2C, count * s_.templates.count));
                sh->templs.made = true;
            }
        }
        made = std::move(sh);
    }
    out = made.get();
    return FLCC_SUCCESS;
}

// `sets` template sets in `input` (device memory) prepared: compact values, taps, spectra (by
// `plan`, or by block_fft_templates for the per-block form). Their non-finite flag is bad_[1].
flcc_result Engine::enqueue_templates(cudaStream_t s, const void* input, int sets, cufftHandle plan)
{
    batch::SideParams p = templs_.params;
    p.in = input;
    p.bad = bad_.as<int>() + 1;
    batch::TemplForm f{s_.op == Op::lcorr ? 1 : 0, taps_.as<float>(), tap_sum_.as<double>()};
    if (block_) {
        batch::block_fft_templates<<<sets * templs_.count, batch::kBlockFftThreads, 0, s>>>(
            p, f, templs_.spectra.as<float2>());
        FLCC_CUDA_TRY(cudaGetLastError());
        return FLCC_SUCCESS;
    }
    batch::prepare_templates<<<sets * templs_.count,
                               threads_for(s_.templ[1] * s_.templ[2], batch::kItemThreads), 0, s>>>(p, f);
    FLCC_CUDA_TRY(cudaGetLastError());
    if (direct_) return FLCC_SUCCESS;
    FLCC_CUFFT_TRY(cufftSetStream(plan, s));
    FLCC_CUFFT_TRY(cufftExecR2C(plan, templs_.box.as<cufftReal>(), templs_.spectra.as<cufftComplex>()));
    return FLCC_SUCCESS;
}

// One launch of shape.count frames from input buffer `slot`: (the frames' templates,) the
// images, the pairs' products and inverse transforms, the maps, their best over templates, their
// peaks.
flcc_result Engine::enqueue_launch(cudaStream_t s, int slot, bool templates, const Shape& shape)
{
    const int frames = shape.count;
    FLCC_CUDA_TRY(cudaMemsetAsync(bad_.as<int>(), 0x7f, 2 * sizeof(int), s));
    if (templates) FLCC_TRY(enqueue_templates(s, templs_.input[slot].as<void>(), frames, shape.templs.h));
    const bool lcc = s_.op == Op::lcorr;
    batch::SideParams p = images_.params;
    p.in = images_.input[slot].as<void>();
    p.bad = bad_.as<int>();
    const bool valid = s_.pad[1] == 0 && s_.pad[2] == 0 && s_.out[1] == s_.image[1] - s_.templ[1] + 1 &&
                       s_.out[2] == s_.image[2] - s_.templ[2] + 1;
    const double n = double(s_.templ[1] * s_.templ[2]);
    batch::ImageForm form{lcc ? 1 : 0, valid ? 0 : 1, n, guard_, std::log2(double(bh_) * bw_),
                          modes_.as<TileMode>(), bounds_.as<double>()};
    const int items = frames * images_.count, pairs = frames * s_.pairs;
    batch::prepare_images<<<items, threads_for(s_.image[1] * s_.image[2], batch::kItemThreads), 0, s>>>(p, form);
    FLCC_CUDA_TRY(cudaGetLastError());
    const batch::Pairing pairing{s_.pairs,  s_.images.count, s_.templates.count, s_.all_pairs ? 1 : 0,
                                 frames, templates ? 1 : 0};
    const int T1 = int(s_.templ[1]), T2 = int(s_.templ[2]), O1 = int(s_.out[1]), O2 = int(s_.out[2]),
              P1 = int(s_.pad[1]), P2 = int(s_.pad[2]), h = int(s_.image[1]), w = int(s_.image[2]);
    const batch::FinalParams q{circ_.as<float>(), bh_, bw_, h, w, T1, T2, O1, O2, P1, P2, pairing,
                               lcc ? 1 : 0, s_.correlate ? 1 : 0, n, h1_.as<double>(), h2_.as<double>(),
                               modes_.as<TileMode>(), bounds_.as<double>(), images_.compact.as<float>(),
                               taps_.as<float>(), tap_sum_.as<double>(), maps_.as<float>()};
    if (direct_) {
        const batch::DirectLayout L = direct_layout();
        const batch::DirectParams d{q, images_.box.as<float>(), templs_.compact.as<float>(), L.tap_row, L.rows,
                                    L.cols, L.out_cols, L.band_doubles};
        batch::direct_pairs<<<unsigned(std::min(pairs, 1 << 20)), direct_threads(), size_t(L.bytes()), s>>>(d);
        FLCC_CUDA_TRY(cudaGetLastError());
        return enqueue_peaks(s, frames);
    }
    if (block_) {
        const batch::BlockFftParams d{q,
                                      images_.box.as<float>(),
                                      reinterpret_cast<const float2*>(templs_.spectra.as<cufftComplex>()),
                                      float(1.0 / (double(bh_) * bw_)),
                                      block_table() ? 1 : 0,
                                      block_sum_doubles()};
        batch::block_fft_pairs<<<unsigned(std::min(pairs, 1 << 20)), batch::kBlockFftThreads,
                                 size_t(batch::block_fft_shared_bytes(d.sum_doubles)), s>>>(d);
        FLCC_CUDA_TRY(cudaGetLastError());
        return enqueue_peaks(s, frames);
    }
    FLCC_CUFFT_TRY(cufftSetStream(shape.images.h, s));
    FLCC_CUFFT_TRY(cufftExecR2C(shape.images.h, images_.box.as<cufftReal>(), images_.spectra.as<cufftComplex>()));
    const unsigned pair_blocks = unsigned(std::min(pairs, 65535));
    // Spectra start 8-byte aligned; float4 needs even lengths (16-byte aligned starts).
    if (half_ % 2 == 0)
        batch::multiply<2><<<dim3(blocks_for(half_ / 2, 256), pair_blocks), 256, 0, s>>>(
            images_.spectra.as<cufftComplex>(), templs_.spectra.as<cufftComplex>(),
            product_.as<cufftComplex>(), half_, pairing, s_.correlate ? 1 : 0,
            float(1.0 / (double(bh_) * bw_)));
    else
        batch::multiply<1><<<dim3(blocks_for(half_, 256), pair_blocks), 256, 0, s>>>(
            images_.spectra.as<cufftComplex>(), templs_.spectra.as<cufftComplex>(),
            product_.as<cufftComplex>(), half_, pairing, s_.correlate ? 1 : 0,
            float(1.0 / (double(bh_) * bw_)));
    FLCC_CUDA_TRY(cudaGetLastError());
    FLCC_CUFFT_TRY(cufftSetStream(shape.c2r.h, s));
    FLCC_CUFFT_TRY(cufftExecC2R(shape.c2r.h, product_.as<cufftComplex>(), circ_.as<cufftReal>()));
    if (lcc && banded_) {
        // Rows split over blocks where the pairs alone leave multiprocessors idle.
        const int held = batch::kBandedBlocks * device_properties(s_.device).multiprocessors;
        const int parts = std::clamp((held + pairs - 1) / pairs, 1, (O1 + 2 * batch::kBand - 1) / (2 * batch::kBand));
        batch::finalise_banded<<<dim3(unsigned(std::min(pairs, 1 << 20)), unsigned(parts)), batch::kBandedThreads,
                                 banded_shared(), s>>>(q, images_.box.as<float>());
        FLCC_CUDA_TRY(cudaGetLastError());
    } else {
        if (lcc) {
            const batch::SumsParams sq{images_.box.as<float>(), items, bh_, bw_, h, w, T2, O2, P2,
                                       h1_.as<double>(), h2_.as<double>()};
            const int64_t tasks = int64_t(items) * h * ((O2 + batch::kChunk - 1) / batch::kChunk);
            batch::window_rows<<<unsigned(std::min<int64_t>((tasks + 127) / 128, 1 << 20)), 128, 0, s>>>(sq);
            FLCC_CUDA_TRY(cudaGetLastError());
        }
        const int final_tasks = ((O1 + batch::kFinalRows - 1) / batch::kFinalRows) * O2;
        batch::finalise<<<dim3(blocks_for(final_tasks, 128), pair_blocks), 128, 0, s>>>(q);
        FLCC_CUDA_TRY(cudaGetLastError());
    }
    return enqueue_peaks(s, frames);
}

// The maps' best over templates and their peaks, for a launch of `frames` frames.
flcc_result Engine::enqueue_peaks(cudaStream_t s, int frames)
{
    const int O1 = int(s_.out[1]), O2 = int(s_.out[2]), items = frames * images_.count;
    const float* searched = maps_.as<float>();
    if (s_.best) {
        batch::best_of_templates<<<dim3(blocks_for(outs_, 256), unsigned(std::min(items, 65535))), 256, 0, s>>>(
            maps_.as<float>(), items, s_.templates.count, outs_, best_.as<float>());
        FLCC_CUDA_TRY(cudaGetLastError());
        searched = best_.as<float>();
    }
    if (s_.peaks > 0) {
        batch::PeakParams k{searched, s_.best ? 2 * outs_ : outs_, s_.best ? 1 : 0, O1, O2, s_.peaks,
                            s_.exclusion, s_.patch_radius,
                            {int(s_.flat_at[1]), int(s_.flat_at[2])}, peaks_.as<EnginePeak>(),
                            patches_.as<float>()};
        const int maps = frames * maps_per_frame_;
        const int sms = device_properties(s_.device).multiprocessors;
        if (outs_ <= batch::kWarpMapValues && maps >= batch::kPeakWarps * sms)
            batch::find_peaks_by_warps<<<unsigned((maps + batch::kPeakWarps - 1) / batch::kPeakWarps),
                                         batch::kPeakWarps * 32, 0, s>>>(k, maps);
        else
            batch::find_peaks<<<maps, threads_for(outs_, batch::kPeakThreads), 0, s>>>(k);
        FLCC_CUDA_TRY(cudaGetLastError());
    }
    return FLCC_SUCCESS;
}

// The engine's streams do not wait for the legacy default stream by themselves, where a
// caller's cudaMemcpy from pageable memory may still be running when it returns: every exec
// orders its work after what the caller queued there.
flcc_result Engine::follow_legacy()
{
    FLCC_CUDA_TRY(cudaEventRecord(legacy_.get(), cudaStreamLegacy));
    FLCC_CUDA_TRY(cudaStreamWaitEvent(compute_.get(), legacy_.get(), 0));
    FLCC_CUDA_TRY(cudaStreamWaitEvent(copy_.get(), legacy_.get(), 0));
    return FLCC_SUCCESS;
}

flcc_result Engine::prepare_templates(const void* set, int& bad)
{
    DeviceGuard guard(s_.device);
    if (!guard.ok()) return FLCC_DEVICE_ERROR;
    FLCC_TRY(follow_legacy());
    cudaStream_t s = compute_.get();
    FLCC_CUDA_TRY(cudaMemcpyAsync(templs_.input[0].as<void>(), set, size_t(templs_.frame_bytes),
                                  cudaMemcpyDefault, s));
    FLCC_CUDA_TRY(cudaMemsetAsync(bad_.as<int>(), 0x7f, 2 * sizeof(int), s));
    FLCC_TRY(enqueue_templates(s, templs_.input[0].as<void>(), 1, templs_.r2c.h));
    FLCC_CUDA_TRY(cudaMemcpyAsync(host_bad_[0].as<int>(), bad_.as<int>(), 2 * sizeof(int),
                                  cudaMemcpyDeviceToHost, s));
    FLCC_CUDA_TRY(cudaStreamSynchronize(s));
    const int b = host_bad_[0].as<int>()[1];
    if (b != kNoneBad) {
        bad = b;
        return FLCC_NONFINITE_INPUT;
    }
    return FLCC_SUCCESS;
}

// Waits for the launch of `count` frames from frame `first` (from input buffer `slot`) and hands
// their peaks to the sink.
// A non-finite subregion of one of those frames (the flags hold the lowest item index) fails
// the exec.
flcc_result Engine::deliver(int slot, int first, int count, Sink& sink, int& bad, int& bad_frame)
{
    FLCC_CUDA_TRY(cudaEventSynchronize(done_[slot].get()));
    const int* flags = host_bad_[slot].as<int>();
    if (flags[0] != kNoneBad && flags[0] < count * images_.count) {
        bad = flags[0] % images_.count;
        bad_frame = first + flags[0] / images_.count;
        return FLCC_NONFINITE_INPUT;
    }
    if (flags[1] != kNoneBad && flags[1] < count * templs_.count) {
        bad = -1 - flags[1] % templs_.count;
        bad_frame = first + flags[1] / templs_.count;
        return FLCC_NONFINITE_INPUT;
    }
    const EnginePeak* peaks = host_peaks_[slot].as<EnginePeak>();
    const float* patches = host_patches_[slot].as<float>();
    for (int g = 0; g < count; ++g)
        FLCC_TRY(sink.frame(first + g, peaks + g * peaks_per_frame_,
                            patches + g * peaks_per_frame_ * side_ * side_));
    return FLCC_SUCCESS;
}

flcc_result Engine::run(const void* images, const void* templs, float* maps, int frames, Sink& sink,
                        int& bad, int& bad_frame)
{
    DeviceGuard guard(s_.device);
    if (!guard.ok()) return FLCC_DEVICE_ERROR;
    FLCC_TRY(follow_legacy());
    cudaStream_t cs = compute_.get(), up = copy_.get();
    const bool per_frame = s_.templ_per_frame && templs != nullptr;
    const int launches = (frames + group_ - 1) / group_;
    flcc_result failed = FLCC_SUCCESS;
    for (int l = 0; l < launches && failed == FLCC_SUCCESS; ++l) {
        const int slot = l & 1, first = l * group_, count = std::min(group_, frames - first);
        Shape* sh = nullptr;
        FLCC_TRY(shape(count, sh));
        // The upload waits until the launch before last has read the same buffer.
        FLCC_CUDA_TRY(cudaStreamWaitEvent(up, consumed_[slot].get(), 0));
        FLCC_CUDA_TRY(cudaMemcpyAsync(images_.input[slot].as<void>(),
                                      static_cast<const unsigned char*>(images) + first * images_.frame_bytes,
                                      size_t(count * images_.frame_bytes), cudaMemcpyDefault, up));
        if (per_frame)
            FLCC_CUDA_TRY(cudaMemcpyAsync(templs_.input[slot].as<void>(),
                                          static_cast<const unsigned char*>(templs) + first * templs_.frame_bytes,
                                          size_t(count * templs_.frame_bytes), cudaMemcpyDefault, up));
        FLCC_CUDA_TRY(cudaEventRecord(uploaded_[slot].get(), up));
        FLCC_CUDA_TRY(cudaStreamWaitEvent(cs, uploaded_[slot].get(), 0));
        FLCC_TRY(sh->graphs[slot][per_frame].launch(
            cs, [&](cudaStream_t s) { return enqueue_launch(s, slot, per_frame, *sh); }));
        FLCC_CUDA_TRY(cudaEventRecord(consumed_[slot].get(), cs));
        FLCC_CUDA_TRY(cudaMemcpyAsync(host_bad_[slot].as<void>(), bad_.as<void>(), 2 * sizeof(int),
                                      cudaMemcpyDeviceToHost, cs));
        if (s_.peaks > 0) {
            const size_t n = size_t(count) * size_t(peaks_per_frame_);
            FLCC_CUDA_TRY(cudaMemcpyAsync(host_peaks_[slot].as<void>(), peaks_.as<void>(),
                                          n * sizeof(EnginePeak), cudaMemcpyDeviceToHost, cs));
            FLCC_CUDA_TRY(cudaMemcpyAsync(host_patches_[slot].as<void>(), patches_.as<void>(),
                                          n * size_t(side_ * side_) * sizeof(float), cudaMemcpyDeviceToHost, cs));
        }
        if (s_.keep_maps)
            FLCC_CUDA_TRY(cudaMemcpyAsync(maps + first * map_floats_, s_.best ? best_.as<void>() : maps_.as<void>(),
                                          size_t(count * map_floats_) * sizeof(float), cudaMemcpyDefault, cs));
        // The frames' own templates, for a later exec without templates: the last frame's set
        // moves to where the single set is read.
        if (per_frame && l == launches - 1 && count > 1) {
            const int64_t T = s_.templ[1] * s_.templ[2], t = s_.templates.count, from = int64_t(count - 1) * t;
            FLCC_CUDA_TRY(cudaMemcpyAsync(templs_.spectra.as<cufftComplex>(),
                                          templs_.spectra.as<cufftComplex>() + from * half_,
                                          size_t(t * half_) * sizeof(cufftComplex), cudaMemcpyDeviceToDevice, cs));
            if (direct_)
                FLCC_CUDA_TRY(cudaMemcpyAsync(templs_.compact.as<float>(), templs_.compact.as<float>() + from * T,
                                              size_t(t * T) * sizeof(float), cudaMemcpyDeviceToDevice, cs));
            if (s_.op == Op::lcorr) {
                FLCC_CUDA_TRY(cudaMemcpyAsync(taps_.as<float>(), taps_.as<float>() + from * T,
                                              size_t(t * T) * sizeof(float), cudaMemcpyDeviceToDevice, cs));
                FLCC_CUDA_TRY(cudaMemcpyAsync(tap_sum_.as<double>(), tap_sum_.as<double>() + from,
                                              size_t(t) * sizeof(double), cudaMemcpyDeviceToDevice, cs));
            }
        }
        FLCC_CUDA_TRY(cudaEventRecord(done_[slot].get(), cs));
        if (l > 0) failed = deliver(slot ^ 1, first - group_, group_, sink, bad, bad_frame);
    }
    if (failed == FLCC_SUCCESS) {
        const int first = (launches - 1) * group_;
        failed = deliver((launches - 1) & 1, first, frames - first, sink, bad, bad_frame);
    }
    // Nothing stays queued after a failure: the next exec starts clean.
    const cudaError_t e = cudaStreamSynchronize(cs);
    if (failed == FLCC_SUCCESS) failed = to_result(e);
    return failed;
}

}  // namespace

flcc_result make_batch_engine(const BatchEngineSpec& s, std::unique_ptr<BatchEngine>& out)
{
    return Engine::make(s, out);
}

}  // namespace flcc::device
