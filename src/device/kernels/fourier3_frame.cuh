// What the whole-frame 3D GPU Fourier solvers (device.fourier3.planes, .rows and .slabs) share:
// the frame's parameters (PlanesParams, named after the first of them), the image statistics
// and the two modes of an LCC frame, the window factor, the template's share of a window in the
// padding (from the taps' prefix sums), and the list of outputs to recompute with its kernel.
//
// Centring (LCC). The transforms take the image centred by one constant c (the image mean) with
// the padding left at zero, so their numerator misses c times the sum of the taps over the
// part of the window inside the image; the finalisation adds it back in double (exactly: the
// template's prefix sums, taps_in_padding). The window sums are taken over the padded image
// centred by c for blocks of outputs whose windows all lie inside the image, and uncentred
// (padding exactly zero) for blocks that reach the padding, as the tile solvers do: a window
// mostly in the padding is well conditioned only when the padding stays exactly zero.
//
// The kernels here are static: one instance per translation unit that launches them.
#pragma once

#include "device/cuda_util.h"
#include "device/kernels/frame_slot.cuh"
#include "device/kernels/lcc_common.cuh"
#include "plan/problem.h"

#include <cufft.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace flcc::device {

struct PlanesParams {
    const FrameSlot* frame;      // device memory: the frame's image and output
    int S[3], O[3], P[3], T[3];
    int F1, F2;                  // the 2D box (rows, columns)
    int H;                       // complex bins per plane: F1 * (F2 / 2 + 1)
    int zlo, zhi;                // the image planes transformed (those some window reads)
    int lcorr, check_finite;
    double n, guard;
    detail::Stats* stats;        // one
    TileMode* modes;             // [0] centred (the transforms; interior blocks), [1] uncentred
    float* in;                   // (zhi - zlo) boxes of F1 x F2
    cufftComplex* spec;          // their spectra, (zhi - zlo) x H
    cufftComplex* sums;          // the output planes' spectra, O0 x H
    const cufftComplex* tspec;   // the template planes' spectra, T0 x H (conjugated and scaled
    float tscale;                // by tscale = 1 / (F1 F2) in plane_sums)
    float* num;                  // O0 boxes of F1 x F2 (C2R output)
    const float* taps;           // normalised template, T0 x T1 x tap_row
    int tap_row;
    const double* tap_sum;       // their sum
    const double* prefix;        // (T0 + 1) x (T1 + 1) x (T2 + 1) prefix sums of the taps
    unsigned* stats_blocks;      // image_stats' blocks done (the last one finishes the statistics)
    int* redo_count;             // outputs finalise_planes left to recompute_listed
    int* redo;                   // their indices (room for every output)
    int* status;
};

// Host side: the fields planes, rows and slabs fill alike from their problem (the extents, the
// operation, the finiteness check, the template's element count).
inline void set_problem(PlanesParams& q, const Problem& p)
{
    for (int a = 0; a < 3; ++a) {
        q.S[a] = int(p.image[a]);
        q.O[a] = int(p.out[a]);
        q.P[a] = int(p.pad[a]);
        q.T[a] = int(p.templ[a]);
    }
    q.lcorr = p.op == Op::lcorr;
    q.check_finite = p.check_finite;
    q.n = double(p.templ_elems());
}

// Empty statistics, no block counted, nothing to recompute: as each frame's image_stats leaves
// them for the next (one thread; once, when a plan binds its LccBuffers).
static __global__ void stats_reset(PlanesParams g)
{
    *g.stats = merged_stats_init();
    *g.stats_blocks = 0;
    *g.redo_count = 0;
}

// Host side: what the LCC frames of planes, rows and slabs keep on the device besides their
// transforms: the image statistics and image_stats' block count, the two modes, and the
// recompute list (its count, then room for every output).
struct LccBuffers {
    DeviceBuffer stats, modes, redo;

    flcc_result allocate(int64_t out_elems)
    {
        flcc_result r;
        if ((r = stats.allocate(sizeof(detail::Stats) + sizeof(unsigned))) != FLCC_SUCCESS ||
            (r = modes.allocate(2 * sizeof(TileMode))) != FLCC_SUCCESS)
            return r;
        return redo.allocate(sizeof(int) * size_t(out_elems + 1));
    }

    // Points q's statistics, modes and recompute list at them, and empties them (on s, waited
    // for: plan time).
    flcc_result bind(PlanesParams& q, cudaStream_t s)
    {
        q.stats = stats.as<detail::Stats>();
        q.stats_blocks = reinterpret_cast<unsigned*>(q.stats + 1);
        q.modes = modes.as<TileMode>();
        q.redo_count = redo.as<int>();
        q.redo = redo.as<int>() + 1;
        stats_reset<<<1, 1, 0, s>>>(q);
        FLCC_CUDA_TRY(cudaGetLastError());
        FLCC_CUDA_TRY(cudaStreamSynchronize(s));
        return FLCC_SUCCESS;
    }
};

// The LCC factor of a window from its sums of x and x^2 in double, in the mode m of its block:
// ratio / sqrt(D) with ratio = m.scale / m0.scale (the numerators are formed in modes[0]'s
// scale), 0 where the guard takes D for zero, -1 where the output is to be recomputed (the
// transforms' error could matter, or a guarded window of little energy). rows parks it in the
// output until its numerators are done; slabs' slab_window applies it to numerators already there.
struct WindowFactor {
    double n, inv_n, lim0, lim1, small, redo_below;
    float ratio;

    __device__ WindowFactor(const TileMode& m, const TileMode& m0, double count)
        : n(count), inv_n(1.0 / count), lim0(m.exact ? 0.0 : m.tau), lim1(m.exact ? 0.0 : 4 * 0x1p-53),
          small(m.small), redo_below(0.5 * count * m.m2), ratio(float(m.scale / m0.scale))
    {
    }

    __device__ float operator()(double s1, double s2) const
    {
        const double p1 = n * s2;
        const double dn = fma(-s1, s1, p1);
        const double limit = fma(lim1, p1, lim0);
        const float d = dn > limit ? float(dn * inv_n) : 0.f;
        const float r = ratio * rsqrt_normal(d);   // computed whatever d (selects, no branches)
        const bool redo = (dn > limit) & (dn < redo_below) | (dn <= limit) & (s2 > 0) & (s2 < small);
        return redo ? -1.f : (d >= FLT_MIN ? r : 0.f);
    }
};

// Statistics of the whole image (every image value lies in some window, whatever the region):
// a grid-stride pass merged by atomics, min and max on the ordered-int image of floats. The
// 16-byte-aligned middle of the image by float4 loads, four of them in flight a round, the
// unaligned ends value by value. At most kStatsBlocks blocks, each merging by six atomics on the
// same words: fewer blocks, fewer merges. The last block to merge turns them into the two modes
// and leaves them empty for the next frame (finish_statistics), so one launch does the reset,
// the statistics and the modes.
constexpr int kStatsBlocks = 512, kStatsThreads = 256;
inline int stats_blocks(int64_t image_elems)
{
    return int(std::min<int64_t>((image_elems + kStatsThreads - 1) / kStatsThreads, kStatsBlocks));
}

// One thread, once every block merged: the two modes, both bounding the FFT numerator's error by
// the values transformed (centred by modes[0].c), each in its own scale; the non-finite flag; the
// statistics, the block count and the recompute count left empty.
__device__ inline void finish_statistics(const PlanesParams& g)
{
    const volatile detail::Stats* v = g.stats;   // merged by other blocks' atomics: not from L1
    const detail::Stats s = read_merged(detail::Stats{v->sum, v->lo, v->hi, v->integral, v->finite, v->count});
    if (!s.finite && g.check_finite) *reinterpret_cast<volatile int*>(g.status) = 1;   // host memory
    TileMode centred = decide(s, 0, g.n, g.guard), plain = decide(s, 1, g.n, g.guard);
    const double m = fmax(fabs(double(s.hi) - centred.c), fabs(double(s.lo) - centred.c));
    centred.m2 = (m * centred.scale) * (m * centred.scale);
    plain.m2 = (m * plain.scale) * (m * plain.scale);
    g.modes[0] = centred;
    g.modes[1] = plain;
    *g.stats = merged_stats_init();
    *g.stats_blocks = 0;
    *g.redo_count = 0;
}

// Block `block` of `blocks` (kStatsThreads threads each) of the statistics of `image`: image_stats,
// or the statistics blocks of slabs' frame head (fourier_slabs.cuh).
__device__ inline void image_statistics(const PlanesParams& g, int64_t count, int block, int blocks,
                                        const float* __restrict__ image)
{
    __shared__ double scratch[kScratchDoubles];
    __shared__ bool last;
    detail::Stats st{0.0, FLT_MAX, -FLT_MAX, 1, 1, 0};
    const int64_t step = int64_t(blocks) * blockDim.x, first = int64_t(block) * blockDim.x + threadIdx.x;
    const int64_t lead = int64_t((16 - (reinterpret_cast<uintptr_t>(image) & 15u)) / 4 % 4);   // to 16 bytes
    const int64_t head = lead < count ? lead : count;
    const int64_t quads = (count - head) / 4, tail = head + 4 * quads;
    const float4* __restrict__ body = reinterpret_cast<const float4*>(image + head);
    if (first < head) add_value(st, image[first]);
    int64_t i = first;
    for (; i + 3 * step < quads; i += 4 * step) {
        float4 q[4];
#pragma unroll
        for (int k = 0; k < 4; ++k) q[k] = body[i + k * step];
#pragma unroll
        for (int k = 0; k < 4; ++k) add_quad(st, q[k]);
    }
    for (; i < quads; i += step) add_quad(st, body[i]);
    if (tail + first < count) add_value(st, image[tail + first]);
    const detail::Stats s = detail::block_reduce(st, scratch);
    if (threadIdx.x == 0) {
        if (s.count > 0) merge_stats(g.stats, s);
        __threadfence();   // the merge is seen before the count that says it is done
        last = atomicAdd(g.stats_blocks, 1u) == unsigned(blocks) - 1u;
    }
    __syncthreads();
    if (last && threadIdx.x == 0) {
        __threadfence();
        finish_statistics(g);
    }
}

static __global__ void __launch_bounds__(kStatsThreads) image_stats(PlanesParams g, int64_t count)
{
    image_statistics(g, count, int(blockIdx.x), int(gridDim.x), g.frame->image);
}

// LCC: the image statistics and the two modes, the first kernel of an LCC frame of planes and
// rows (which launch it from their own translation units).
static inline void enqueue_statistics(const PlanesParams& g, int64_t image_elems, cudaStream_t s)
{
    image_stats<<<stats_blocks(image_elems), kStatsThreads, 0, s>>>(g, image_elems);
}

// Host side: the prefix sums Q[a][b][c] of the taps (T0 x T1 x T2, dense) over planes < a, rows
// < b, columns < c, in double, for taps_in_padding.
inline std::vector<double> tap_prefix_sums(const float* taps, int T0, int T1, int T2)
{
    std::vector<double> q(size_t(T0 + 1) * (T1 + 1) * (T2 + 1), 0.0);
    const auto at = [&](int a, int b, int c) -> double& { return q[(size_t(a) * (T1 + 1) + b) * (T2 + 1) + c]; };
    for (int a = 1; a <= T0; ++a)
        for (int b = 1; b <= T1; ++b)
            for (int c = 1; c <= T2; ++c)
                at(a, b, c) = double(taps[(size_t(a - 1) * T1 + (b - 1)) * T2 + (c - 1)]) + at(a - 1, b, c) +
                              at(a, b - 1, c) + at(a, b, c - 1) - at(a - 1, b - 1, c) - at(a - 1, b, c - 1) -
                              at(a, b - 1, c - 1) + at(a - 1, b - 1, c - 1);
    return q;
}

// Host side: what recompute_listed and taps_in_padding read, in one buffer: the taps in rows
// of tap_row floats (T0 x T1 rows, zero beyond T2), their sum, and their prefix sums
// (tap_prefix_sums). recompute_taps_bytes: its size; stage_recompute_taps fills it.
inline size_t recompute_taps_bytes(int T0, int T1, int T2, int tap_row)
{
    return size_t(T0) * T1 * tap_row * sizeof(float) + sizeof(double) + size_t(T0 + 1) * (T1 + 1) * (T2 + 1) * sizeof(double);
}
inline void stage_recompute_taps(const float* taps, int T0, int T1, int T2, int tap_row, char* dst)
{
    float* rows = reinterpret_cast<float*>(dst);
    const size_t row_bytes = size_t(T0) * T1 * tap_row * sizeof(float);
    std::fill(rows, rows + row_bytes / sizeof(float), 0.f);
    for (int64_t r = 0; r < int64_t(T0) * T1; ++r) std::copy(taps + r * T2, taps + (r + 1) * T2, rows + r * tap_row);
    double sum = 0;
    for (int64_t i = 0; i < int64_t(T0) * T1 * T2; ++i) sum += taps[i];
    std::memcpy(dst + row_bytes, &sum, sizeof sum);
    const std::vector<double> q = tap_prefix_sums(taps, T0, T1, T2);
    std::memcpy(dst + row_bytes + sizeof sum, q.data(), q.size() * sizeof(double));
}

// The taps [lo, hi) of output o's window that fall inside the image along axis a.
__device__ __forceinline__ void window_inside(const PlanesParams& g, int a, int o, int& lo, int& hi)
{
    lo = max(0, g.P[a] - o);
    hi = min(g.T[a], g.S[a] + g.P[a] - o);
}

// Sum of the taps outside the box [lo, hi) of the window (its part in the padding), from the
// prefix sums in double: the transforms saw zeros there, the centred padded image -c.
__device__ __forceinline__ double taps_outside(const PlanesParams& g, const int lo[3], const int hi[3])
{
    const double all = *g.tap_sum;
    for (int a = 0; a < 3; ++a)
        if (hi[a] <= lo[a]) return all;
    const int s1 = g.T[2] + 1, s0 = (g.T[1] + 1) * s1;
    const double* q = g.prefix;
    const auto at = [&](int a, int b, int c) { return q[a * s0 + b * s1 + c]; };
    const double inside = at(hi[0], hi[1], hi[2]) - at(lo[0], hi[1], hi[2]) - at(hi[0], lo[1], hi[2]) -
                          at(hi[0], hi[1], lo[2]) + at(lo[0], lo[1], hi[2]) + at(lo[0], hi[1], lo[2]) +
                          at(hi[0], lo[1], lo[2]) - at(lo[0], lo[1], lo[2]);
    return all - inside;
}

// Sum of the taps over the part of output o's window in the padding (0 for a window inside).
__device__ __forceinline__ double taps_in_padding(const PlanesParams& g, const int o[3])
{
    int lo[3], hi[3];
    bool whole = true;
    for (int a = 0; a < 3; ++a) {
        window_inside(g, a, o[a], lo[a], hi[a]);
        whole &= lo[a] == 0 && hi[a] == g.T[a];
    }
    return whole ? 0.0 : taps_outside(g, lo, hi);
}

// The outputs finalise_planes listed, recomputed from the image (recomputed: the window around
// its own mean, in double; rare): grid-stride over the list, whose length is only known on the
// device. It may be launched as a programmatic dependent of the kernel that lists them
// (launch_dependent): it waits for that kernel first.
static __global__ void recompute_listed(PlanesParams g)
{
    cudaGridDependencySynchronize();
    const int count = *g.redo_count;
    const int64_t plane = int64_t(g.O[1]) * g.O[2];
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
        const int64_t e = g.redo[i];
        const int q = int(e / plane), y = int((e - q * plane) / g.O[2]), x = int(e - q * plane - int64_t(y) * g.O[2]);
        const Window w{{q - g.P[0], y - g.P[1], x - g.P[2]}, {g.S[0], g.S[1], g.S[2]}, {g.T[0], g.T[1], g.T[2]},
                       g.tap_row, g.n, *g.tap_sum};
        g.frame->out[e] = fminf(fmaxf(recomputed(w, g.frame->image, g.taps), -1.f), 1.f);
    }
}

}  // namespace flcc::device
