// The kernels of device.fourier2.box (fourier_box_solver.cu): a 2D problem whose whole output
// fits one FFT box, correlated as one pair with the batch engine's numerics (batch_kernels.cuh).
// The image and the template are prepared by two short kernels over chunks of both (their
// statistics, then the boxes and LCC's taps from the merged statistics), so that no step runs
// on one multiprocessor; the LCC finalisation runs short bands of rows in parallel. The frame's
// pointers are the kernels' arguments, set per replay (FrameGraph::set_arguments).
#pragma once

#include "device/batch_kernels.cuh"

namespace flcc::device::box {

// The preparation's blocks each take a chunk of kPrepChunk elements of one side (image or
// template), kPerThread per thread, held in registers; a side is at most a box, so at most
// kMostPrepBlocks chunks, no more than a block's threads (one block reduces every chunk's
// partial result).
constexpr int kPrepThreads = 256;
constexpr int kPerThread = 8;
constexpr int kPrepChunk = kPrepThreads * kPerThread;
constexpr int kMostPrepBlocks = (1 << 18) / kPrepChunk;
static_assert(kMostPrepBlocks <= kPrepThreads, "a block reduces every chunk's partial result");

// The chunks' partial results by chunk, reduced by a fixed tree, so that their sums are
// reproducible.
struct PrepScratch {
    detail::Stats stats[2][kMostPrepBlocks];   // [image, template]: the values' statistics
    double squares[2][kMostPrepBlocks];        // the image box's energy; the template's squared
                                               // deviations from the chunk's mean
    double tap_sums[kMostPrepBlocks];
};

struct PrepareParams {
    const float* image;   // the frame's (set per replay)
    const float* templ;
    int h, w, T1, T2, bh, bw;
    int image_blocks, templ_blocks;
    float* boxes;   // the image's box, then the template's (zero beyond them)
    batch::ImageForm image_form;
    float* taps;    // LCC: the template's taps (correlation order) and their sum
    double* tap_sum;
    PrepScratch* scratch;
    int check_finite;
    int* status;   // set to 1 for a non-finite image or template
};

// The side (0 image, 1 template) and chunk of this block, and this thread's values of it
// (element begin + k * kPrepThreads for k < count).
struct Chunk {
    int side, index, cols, blocks, begin, count;
    float v[kPerThread];
};

__device__ inline Chunk load_chunk(const PrepareParams& q)
{
    Chunk k;
    k.side = int(blockIdx.x) >= q.image_blocks;
    k.index = k.side ? blockIdx.x - q.image_blocks : blockIdx.x;
    k.cols = k.side ? q.T2 : q.w;
    k.blocks = k.side ? q.templ_blocks : q.image_blocks;
    const int n = k.side ? q.T1 * q.T2 : q.h * q.w;
    const float* in = k.side ? q.templ : q.image;
    k.begin = k.index * kPrepChunk + threadIdx.x;
    k.count = 0;
#pragma unroll
    for (int j = 0; j < kPerThread; ++j) {
        const int i = k.begin + j * kPrepThreads;
        k.v[j] = i < n ? in[i] : 0.f;
        k.count += i < n;
    }
    return k;
}

// A side's statistics from its chunks' partial results, every thread of the block taking part.
__device__ inline detail::Stats side_stats(const PrepareParams& q, int side, double* scratch)
{
    const int blocks = side ? q.templ_blocks : q.image_blocks;
    detail::Stats s{0.0, FLT_MAX, -FLT_MAX, 1, 1, 0};
    if (int(threadIdx.x) < blocks) s = q.scratch->stats[side][threadIdx.x];
    return detail::block_reduce(s, scratch);
}

// The sum of `blocks` partial results by the block's fixed tree (the same sum every frame).
__device__ inline double chunk_sum(const double* parts, int blocks, double* scratch)
{
    return block_sum(int(threadIdx.x) < blocks ? __ldcg(parts + threadIdx.x) : 0.0, scratch);
}

// LCC's sums of the chunks' partial results that only the finalisation reads, by one block of
// kPrepThreads threads after prepare_boxes: the taps' sum and the image's numerators' error bound
// (batch::prepare_image_item's, from the chunks' energies).
__device__ inline void merge_chunk_sums(const PrepareParams& q, double* scratch)
{
    const double taps = chunk_sum(q.scratch->tap_sums, q.templ_blocks, scratch);
    const double energy = chunk_sum(q.scratch->squares[0], q.image_blocks, scratch);
    if (threadIdx.x == 0) {
        const batch::ImageForm& f = q.image_form;
        *q.tap_sum = taps;
        f.bounds[0] = batch::kFftError * 0x1p-24 * sqrt(f.log2_box * energy / (double(q.h) * q.w));
    }
}

// First: each chunk's statistics and, for an LCC template, the squared deviations from the
// chunk's own mean (merged by prepare_boxes as Chan et al.'s pairwise variance: as exact as two
// passes over the whole template).
static __global__ void __launch_bounds__(kPrepThreads) prepare_stats(PrepareParams q)
{
    // The next kernel's blocks may be placed now; they wait for this one's results.
    cudaTriggerProgrammaticLaunchCompletion();
    __shared__ double scratch[kScratchDoubles];
    const Chunk k = load_chunk(q);
    detail::Stats s{0.0, FLT_MAX, -FLT_MAX, 1, 1, k.count};
#pragma unroll
    for (int j = 0; j < kPerThread; ++j) {
        if (j >= k.count) break;
        const float v = k.v[j];
        s.sum += v;
        s.lo = fminf(s.lo, v);
        s.hi = fmaxf(s.hi, v);
        s.integral &= v == rintf(v);
        s.finite &= isfinite(v);
    }
    s = detail::block_reduce(s, scratch);
    if (k.side == 1 && q.image_form.lcc) {
        const double mean = s.sum / double(s.count);
        double part = 0;
#pragma unroll
        for (int j = 0; j < kPerThread; ++j) {
            const double d = j < k.count ? double(k.v[j]) - mean : 0.0;
            part = fma(d, d, part);
        }
        part = block_sum(part, scratch);
        if (threadIdx.x == 0) q.scratch->squares[1][k.index] = part;
    }
    if (threadIdx.x == 0) {
        q.scratch->stats[k.side][k.index] = s;
        if (!s.finite && q.check_finite) *reinterpret_cast<volatile int*>(q.status) = 1;
    }
}

// The template's taps as tap_form_in_range's, (value * scale - mean) * inv with scale the
// inverse of the largest magnitude, but with the mean and the squared deviations taken on the
// unscaled values in double (the chunks' merged around the whole mean) and scaled after: the
// same taps to the last bit or so.
__device__ inline TapForm template_form(const PrepareParams& q, double* scratch)
{
    const detail::Stats s = side_stats(q, 1, scratch);
    const double n = double(q.T1) * q.T2, mean = s.sum / n;
    double term = 0;
    if (int(threadIdx.x) < q.templ_blocks) {
        const detail::Stats& c = q.scratch->stats[1][threadIdx.x];
        const double d = c.sum / double(c.count) - mean;
        term = q.scratch->squares[1][threadIdx.x] + double(c.count) * d * d;
    }
    const double squares = block_sum(term, scratch);
    TapForm f{s.finite != 0, s.lo == s.hi, 1.0, 0.0, 0.0};
    if (!f.constant) {
        f.scale = 1.0 / fmax(fabs(double(s.lo)), fabs(double(s.hi)));
        f.mean = mean * f.scale;
        const double norm2 = squares * f.scale * f.scale;
        f.inv = norm2 > 0 ? 1.0 / sqrt(norm2) : 0.0;
    }
    return f;
}

// Second: the image's box (LCC: centred and scaled by its mode, and each chunk's energy); the
// template's box: LCC its taps (zeros for a constant template, whose maps are then 0) and each
// chunk's sum of them (merge_chunk_sums adds both up), convolution its values.
// The values are loaded before the wait for prepare_stats, which only the statistics need.
static __global__ void __launch_bounds__(kPrepThreads) prepare_boxes(PrepareParams q)
{
    const Chunk k = load_chunk(q);
    cudaGridDependencySynchronize();
    __shared__ double scratch[kScratchDoubles];
    const batch::ImageForm& f = q.image_form;
    float* box = q.boxes + k.side * int64_t(q.bh) * q.bw;
    const float inv_cols = 1.f / float(k.cols);
    const auto at = [&](int j) {
        const int i = k.begin + j * kPrepThreads, r = batch::quotient(i, k.cols, inv_cols);
        return r * q.bw + (i - r * k.cols);
    };
    if (k.side == 1) {
        if (!f.lcc) {
#pragma unroll
            for (int j = 0; j < kPerThread; ++j)
                if (j < k.count) box[at(j)] = k.v[j];
            return;
        }
        const TapForm t = template_form(q, scratch);
        double part = 0;
#pragma unroll
        for (int j = 0; j < kPerThread; ++j) {
            if (j >= k.count) break;
            const float v = t.constant ? 0.f : float((double(k.v[j]) * t.scale - t.mean) * t.inv);
            q.taps[k.begin + j * kPrepThreads] = v;
            box[at(j)] = v;
            part += v;
        }
        part = block_sum(part, scratch);
        if (threadIdx.x == 0) q.scratch->tap_sums[k.index] = part;
        return;
    }
    TileMode t{};
    t.c = 0.f;
    t.scale = 1;
    if (f.lcc) {
        t = decide(side_stats(q, 0, scratch), f.boundary, f.n, f.guard);
        if (k.index == 0 && threadIdx.x == 0) f.modes[0] = t;
    }
    const float scale = float(t.scale);
    double energy = 0;
#pragma unroll
    for (int j = 0; j < kPerThread; ++j) {
        if (j >= k.count) break;
        float v = k.v[j];
        if (f.lcc) {
            v = (v - t.c) * scale;
            energy = fma(double(v), double(v), energy);
        }
        box[at(j)] = v;
    }
    if (!f.lcc) return;
    energy = block_sum(energy, scratch);
    if (threadIdx.x == 0) q.scratch->squares[0][k.index] = energy;
}

// Output rows per block of box_window_sums: the block's time is a first window of T1 rows and
// then a step per row, all latency, so short runs over many blocks finish first.
constexpr int kBoxRows = 4;

// LCC's window sums of x and x^2 for every output (O1 x O2 doubles each, in `sums`): the banded
// finalisation's (banded_window_sums), kBoxRows rows per block, from the image's box; block 0
// first merges the preparation's chunk sums (merge_chunk_sums). They need nothing of the
// transforms: the frame's graph runs them on a branch of their own beside them.
static_assert(batch::kBandedThreads == kPrepThreads, "merge_chunk_sums adds in the preparation's order");
static __global__ void __launch_bounds__(batch::kBandedThreads) box_window_sums(batch::FinalParams q, const float* box,
                                                                            double* sums, PrepareParams prep)
{
    extern __shared__ double band[];
    __shared__ double scratch[kScratchDoubles];
    if (blockIdx.x == 0) merge_chunk_sums(prep, scratch);
    const int first = blockIdx.x * kBoxRows, last = min(first + kBoxRows, q.O1);
    const int64_t outs = int64_t(q.O1) * q.O2;
    const int row = q.w + 1;
    const double* b2 = band + batch::kBand * row;
    batch::banded_window_sums<batch::kLoadsInFlight>(
        q, [&](int j, int c) { return box[int64_t(j) * q.bw + c]; }, band, first, last, [&](int r0, int rows) {
            for (int e = threadIdx.x; e < rows * q.O2; e += blockDim.x) {
                const int k = e / q.O2, r = r0 + k, oc = e - k * q.O2;
                double s1, s2;
                batch::band_sums(q, band, b2, row, k, oc, s1, s2);
                sums[int64_t(r) * q.O2 + oc] = s1;
                sums[outs + int64_t(r) * q.O2 + oc] = s2;
            }
        });
}

// Output rows per block of finalise_box: every output is independent of the others.
constexpr int kFinalBoxRows = 2;

// The map from the circular correlation (convolution): the batch engine's crop, or LCC's
// coefficients from box_window_sums's sums (store_coefficients), kFinalBoxRows rows per block.
// q.maps and q.images are the frame's (set per replay). Few blocks run: registers need not be
// capped for occupancy.
static __global__ void __launch_bounds__(batch::kBandedThreads) finalise_box(batch::FinalParams q, const double* sums)
{
    cudaGridDependencySynchronize();
    const float* circ = q.circ;
    const int first = blockIdx.x * kFinalBoxRows, last = min(first + kFinalBoxRows, q.O1);
    const auto num = [&](int r, int oc) { return circ[batch::circular_index(q, r, oc)]; };
    if (!q.lcc) {
        for (int e = threadIdx.x; e < (last - first) * q.O2; e += blockDim.x) {
            const int r = first + e / q.O2, c = e % q.O2;
            q.maps[int64_t(r) * q.O2 + c] = num(r, c);
        }
        return;
    }
    const int64_t outs = int64_t(q.O1) * q.O2;
    batch::store_coefficients<batch::kLoadsInFlight>(
        q, 0, first, (last - first) * q.O2,
        [&](int r, int oc, double& s1, double& s2) {
            s1 = sums[int64_t(r) * q.O2 + oc];
            s2 = sums[outs + int64_t(r) * q.O2 + oc];
        },
        num, q.bounds[0]);
}

}  // namespace flcc::device::box
