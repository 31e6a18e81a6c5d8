// Kernels of device.fourier3.planes (src/device/fourier_planes_solver.cu): 3D convolution and
// LCC with one 2D transform per image plane, the sum over the template's planes taken in the
// frequency domain (direct along the planes), and one 2D inverse transform per output plane.
// For an 8^3 template and a 256^3 image the batched 2D transforms cost about two thirds of the
// 3D ones of the same volume, and the sum over 8 planes is one pass over the spectra. Per frame:
//   LCC: image_stats (and the modes) -> gather_planes -> R2C (batched 2D) ->
//        plane_sums -> C2R (batched 2D) -> finalise_planes
//   convolution: gather_planes -> R2C -> plane_sums -> C2R -> crop_planes
//
// Centring (LCC). The transforms take the image centred by one constant c (the image mean) with
// the padding left at zero, so their numerator misses c times the sum of the taps over the
// part of the window inside the image; finalise_planes adds it back in double (exactly: the
// template's prefix sums). The window sums are taken over the padded image centred by c for
// blocks of outputs whose windows all lie inside the image, and uncentred (padding exactly zero)
// for blocks that reach the padding, as the tile solvers do: a window mostly in the padding is
// well conditioned only when the padding stays exactly zero.
//
// The statistics, modes and recompute kernels serve device.fourier3.rows too: the kernels here
// are static (one instance per translation unit that launches them).
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

// The transforms' input: every image plane some window reads, in a box of F1 x F2 with the
// image at (P1, P2), centred and scaled by modes[0] (LCC) or raw (convolution), zero elsewhere.
// Grid: groups of RPB box rows (loads first, then stores, as gather in fourier.cuh).
template <int RPB>
__global__ void gather_planes(PlanesParams g)
{
    const TileMode m = g.lcorr ? g.modes[0] : TileMode{0.f, 1.0, 1, 0.0, 0.0, 0.0};
    const float* __restrict__ image = g.frame->image;
    const int rows = (g.zhi - g.zlo) * g.F1, row0 = blockIdx.x * RPB;
    const float* src[RPB];   // image row of each box row, null: zeros
#pragma unroll
    for (int k = 0; k < RPB; ++k) {
        const int row = row0 + k, a = row / g.F1, y = row - a * g.F1 - g.P[1];
        const bool real = row < rows && y >= 0 && y < g.S[1];
        src[k] = real ? image + (int64_t(g.zlo + a) * g.S[1] + y) * g.S[2] : nullptr;
    }
    float* __restrict__ dst = g.in + int64_t(row0) * g.F2;
    for (int c = threadIdx.x; c < g.F2; c += blockDim.x) {
        const int x = c - g.P[2];
        const bool column = x >= 0 && x < g.S[2];
        float v[RPB];
#pragma unroll
        for (int k = 0; k < RPB; ++k) {
            const bool real = column && src[k] != nullptr;
            const float raw = real ? src[k][x] : 0.f;
            const float centred = m.scale == 1 ? raw - m.c : float((double(raw) - double(m.c)) * m.scale);
            v[k] = real ? centred : 0.f;
        }
#pragma unroll
        for (int k = 0; k < RPB; ++k)
            if (row0 + k < rows) dst[int64_t(k) * g.F2 + c] = v[k];
    }
}

// The template's planes, each zero-padded to F1 x F2 (T0 boxes). Grid: box rows (T0 * F1).
static __global__ void template_planes(PlanesParams g, float* box)
{
    const int row = blockIdx.x, a = row / g.F1, i = row - a * g.F1;
    const float* src = g.taps + (int64_t(a) * g.T[1] + min(i, g.T[1] - 1)) * g.tap_row;
    float* dst = box + int64_t(row) * g.F2;
    for (int j = threadIdx.x; j < g.F2; j += blockDim.x) dst[j] = i < g.T[1] && j < g.T[2] ? src[j] : 0.f;
}

// The output planes' spectra: sums[q] = sum over dz of spec[q + dz - P0] * conj(tspec[dz]) / N,
// planes of padding contributing nothing. A thread per frequency bin and run of kSumPlanes
// output planes: one load of each template bin, the image bins it pairs with mostly from L1
// (each is used by up to T0 of the run's planes). Grid: (bins / 256, runs).
constexpr int kSumPlanes = 16;

static __global__ void __launch_bounds__(256) plane_sums(PlanesParams g)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= g.H) return;
    const int q0 = blockIdx.y * kSumPlanes;
    float ax[kSumPlanes], ay[kSumPlanes];
#pragma unroll
    for (int j = 0; j < kSumPlanes; ++j) ax[j] = ay[j] = 0.f;
    const cufftComplex* __restrict__ spec = g.spec;
    for (int dz = 0; dz < g.T[0]; ++dz) {
        const cufftComplex b = g.tspec[int64_t(dz) * g.H + k];
        const float bx = b.x * g.tscale, by = -b.y * g.tscale;
        const int p0 = q0 + dz - g.P[0];   // the image plane output q0 pairs with
#pragma unroll
        for (int j = 0; j < kSumPlanes; ++j) {
            const int p = p0 + j;
            if (p >= g.zlo && p < g.zhi) {
                const cufftComplex a = __ldg(spec + int64_t(p - g.zlo) * g.H + k);
                ax[j] = fmaf(a.x, bx, fmaf(-a.y, by, ax[j]));
                ay[j] = fmaf(a.x, by, fmaf(a.y, bx, ay[j]));
            }
        }
    }
#pragma unroll
    for (int j = 0; j < kSumPlanes; ++j)
        if (q0 + j < g.O[0]) g.sums[int64_t(q0 + j) * g.H + k] = cufftComplex{ax[j], ay[j]};
}

// Convolution: the outputs from the inverse transforms' boxes. Grid: groups of RPB output rows.
template <int RPB>
__global__ void crop_planes(PlanesParams g)
{
    float* __restrict__ out = g.frame->out;
    const int rows = g.O[0] * g.O[1];
    const float* src[RPB];
    float* dst[RPB];
#pragma unroll
    for (int k = 0; k < RPB; ++k) {
        const int row = blockIdx.x * RPB + k, q = row / g.O[1], r = row - q * g.O[1];
        const bool real = row < rows;
        src[k] = real ? g.num + (int64_t(q) * g.F1 + r) * g.F2 : nullptr;
        dst[k] = real ? out + int64_t(row) * g.O[2] : nullptr;
    }
    for (int c = threadIdx.x; c < g.O[2]; c += blockDim.x) {
        float v[RPB];
#pragma unroll
        for (int k = 0; k < RPB; ++k) v[k] = src[k] != nullptr ? src[k][c] : 0.f;
#pragma unroll
        for (int k = 0; k < RPB; ++k)
            if (dst[k] != nullptr) dst[k][c] = v[k];
    }
}

// ---- LCC finalisation: window sums and coefficients ----------------------------------------
//
// A block of kFinWarps warps owns kFinCols output columns and kFinRows output rows and marches
// along a chunk of output planes. Per step (output plane q), all sums in double:
//   1. plane sums: each thread owns the patch elements tid, tid + kFinThreads, ... of the
//      (kFinRows + T1 - 1) x (kFinCols + T2 - 1) patch the block's windows cover, and keeps in
//      registers the sums over the window's T0 planes of x and x^2 (adding the plane that enters,
//      subtracting the one that leaves, both loaded from the image a step ahead); they go to
//      shared memory;
//   2. horizontal: per patch row and run of kFinRun columns, the sums over T2 columns (the
//      first directly, the others running), to shared memory;
//   3. vertical: per output column (lane) and run of kFinRun rows (warp), the sums over T1 rows
//      the same way, then the coefficient of each output.
// Each stage's work is one pass over a plane of the patch; the numerator comes straight from
// the inverse transforms' boxes (lanes along a row: coalesced), as do the outputs. Windows to
// recompute are listed for recompute_listed, which keeps the rare double-precision loop out of
// the march's registers. The layout avoids shared-memory bank conflicts: odd pitches, and in
// stage 2 consecutive lanes take consecutive patch rows.
constexpr int kFinWarps = 8, kFinThreads = 32 * kFinWarps, kFinRun = 4;
constexpr int kFinCols = 32, kFinRows = kFinRun * kFinWarps;
constexpr int kPlanesMaxT = 16;   // T1 and T2 at most
constexpr int kFinHPitch = kFinCols + 1;
// Rounds of the horizontal sums' tasks (kFinCols / kFinRun runs of each of up to
// kFinRows + kPlanesMaxT - 1 patch rows) over the block's threads.
constexpr int kFinHRounds = ((kFinRows + kPlanesMaxT - 1) * (kFinCols / kFinRun) + kFinThreads - 1) / kFinThreads;

__host__ __device__ inline int fin_patch_rows(int T1) { return kFinRows + T1 - 1; }
// Odd (one spare column when kFinCols + T2 - 1 is even): the row pitch of the plane sums, so
// that consecutive rows fall in different banks.
__host__ __device__ inline int fin_patch_cols(int T2) { return (kFinCols + T2 - 1) | 1; }
// The patch elements each thread owns: 6 for templates up to 8 x 8 across (39 x 39 elements),
// 9 up to 16 x 16 (47 x 47).
inline int fin_owned(int T1, int T2) { return T1 <= 8 && T2 <= 8 ? 6 : 9; }
inline size_t planes_shared_bytes(int T1, int T2)
{
    return size_t(2) * fin_patch_rows(T1) * (fin_patch_cols(T2) + kFinHPitch) * sizeof(double);
}

// The error bound factor of finalise_planes' sums (see fourier_solver.cu's
// fourier_guard_factor for its meaning), for chunks of `chunk` steps: the plane sums (a first
// window of T0 planes, then two roundings of at most (T0 + 2) m per step), T2 of them summed and
// run along run_x columns, T1 of those summed and run along run_y rows.
inline double planes_guard_factor(int T0, int T1, int T2, int chunk, int run_x = kFinRun, int run_y = kFinRun)
{
    const double t0 = T0, t1 = T1, t2 = T2;
    const double ez = t0 * t0 + chunk * (t0 + 4);
    const double eh = t2 * ez + t0 * ((t2 - 1) * t2 + 2 * run_x * (t2 + 1));
    const double ev = t1 * eh + t0 * t2 * ((t1 - 1) * t1 + 2 * run_y * (t1 + 1));
    return 2 * ev;
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

// K: the patch elements a thread owns (fin_owned); TM: T1 and T2 at most (8 for K = 6, else 16).
// Three blocks per multiprocessor for K = 6 (80 registers): a few values of the next step spill
// to L1, and the third block's warps hide more latency than the spills cost.
template <int K, int TM>
__global__ void __launch_bounds__(kFinThreads, K <= 6 ? 3 : 2) finalise_planes(PlanesParams g, int chunk)
{
    extern __shared__ double fin_shared[];
    const int T0 = g.T[0], T1 = g.T[1], T2 = g.T[2];
    const int ph = fin_patch_rows(T1), pw = fin_patch_cols(T2), patch = ph * pw;
    double* z1s = fin_shared;   // plane sums, ph x pw
    double* z2s = z1s + patch;
    double* h1s = z2s + patch;   // their horizontal sums, ph x kFinHPitch
    double* h2s = h1s + ph * kFinHPitch;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int x0 = blockIdx.x * kFinCols, y0 = blockIdx.y * kFinRows, q0 = blockIdx.z * chunk;
    const int q1 = min(q0 + chunk, g.O[0]);

    // Centred only when every window of the block lies inside the image.
    bool inside = true;
    const int lo[3] = {q0, y0, x0}, hi[3] = {q1, min(y0 + kFinRows, g.O[1]), min(x0 + kFinCols, g.O[2])};
    for (int a = 0; a < 3; ++a) inside &= lo[a] >= g.P[a] && hi[a] <= g.S[a] - g.T[a] + g.P[a] + 1;
    const TileMode m = g.modes[inside ? 0 : 1];
    const float c = inside ? m.c : 0.f;
    const double scale = m.scale;
    const bool unscaled = scale == 1;
    const float pad = inside ? float(-double(m.c) * scale) : 0.f;   // the padding's centred value
    // The numerator in this mode's scale, of the padded image centred by c0 (the transforms'
    // constant: any constant would do but for the taps' rounding, and c0 is near the window's
    // mean): num * ratio - c0 * scale * (taps over the padding).
    const double ratio = scale / g.modes[0].scale, c0s = double(g.modes[0].c) * scale;

    // The patch elements this thread owns, tid + k kFinThreads (also their index in z1s): their
    // offset in an image plane (0 for padding, so that every load is of a real address and
    // needs no branch) and, in bit k of `real`, whether they lie inside the image.
    const float* __restrict__ image = g.frame->image;
    const int64_t image_plane = int64_t(g.S[1]) * g.S[2];
    int off[K];
    unsigned real = 0;
#pragma unroll
    for (int k = 0; k < K; ++k) {
        const int e = threadIdx.x + k * kFinThreads, r = e / pw, col = e - r * pw;
        const int y = y0 - g.P[1] + r, x = x0 - g.P[2] + col;
        const bool in = e < patch && y >= 0 && y < g.S[1] && x >= 0 && x < g.S[2];
        off[k] = in ? y * g.S[2] + x : 0;
        real |= unsigned(in) << k;
    }
    // The owned elements of image plane z (padding outside), centred and scaled.
    const auto load = [&](int z, float (&v)[K]) {
        const unsigned here = z >= 0 && z < g.S[0] ? real : 0u;
        const float* src = image + (here != 0 ? z : 0) * image_plane;
        if (unscaled) {
#pragma unroll
            for (int k = 0; k < K; ++k) {
                const float raw = __ldg(src + off[k]);
                v[k] = here >> k & 1u ? raw - c : pad;
            }
        } else {
#pragma unroll
            for (int k = 0; k < K; ++k) {
                const float raw = __ldg(src + off[k]);
                v[k] = here >> k & 1u ? float((double(raw) - double(c)) * scale) : pad;
            }
        }
    };

    double z1[K], z2[K];
#pragma unroll
    for (int k = 0; k < K; ++k) z1[k] = z2[k] = 0;
    for (int dz = 0; dz < T0; ++dz) {   // the first window
        float v[K];
        load(q0 - g.P[0] + dz, v);
#pragma unroll
        for (int k = 0; k < K; ++k) {
            const double d = v[k];
            z1[k] += d;
            z2[k] = fma(d, d, z2[k]);
        }
    }
    float enter[K], leave[K];   // the next step's planes
    const auto prefetch = [&](int q) {
        load(q - g.P[0] + T0 - 1, enter);
        load(q - 1 - g.P[0], leave);
    };
    if (q0 + 1 < q1) prefetch(q0 + 1);

    // The horizontal sums' tasks: patch row r and run s, (r << 8) | s, -1 for none; consecutive
    // lanes on consecutive rows.
    int task[kFinHRounds];
#pragma unroll
    for (int round = 0; round < kFinHRounds; ++round) {
        const int t = threadIdx.x + round * kFinThreads, s = t / ph, r = t - s * ph;
        task[round] = s < kFinCols / kFinRun ? r << 8 | s : -1;
    }
    // The finalisation's constants, in shared memory: registers are what limits the blocks per
    // multiprocessor. The guard's limit is lim[0] + lim[1] * n S2.
    __shared__ double consts[7];
    if (threadIdx.x == 0) {
        consts[0] = m.exact ? 0.0 : m.tau;
        consts[1] = m.exact ? 0.0 : 4 * 0x1p-53;
        consts[2] = m.small;
        consts[3] = 0.5 * g.n * m.m2;   // recompute below (the transforms' error)
        consts[4] = ratio;
        consts[5] = c0s;
        consts[6] = 1.0 / g.n;
    }
    const double n = g.n;
    float* __restrict__ out = g.frame->out;
    // This thread's outputs: column ox, rows oy0 .. oy0 + kFinRun - 1 (bit i of `here`: a real
    // output; of whole_yx: a window inside the image's rows and columns).
    const int ox = x0 + lane, oy0 = y0 + warp * kFinRun;
    unsigned here = 0, whole_yx = 0;
#pragma unroll
    for (int i = 0; i < kFinRun; ++i) {
        const int oy = oy0 + i;
        here |= unsigned(ox < g.O[2] && oy < g.O[1]) << i;
        whole_yx |= unsigned(ox >= g.P[2] && ox <= g.S[2] + g.P[2] - T2 && oy >= g.P[1] &&
                             oy <= g.S[1] + g.P[1] - T1) << i;
    }
    for (int q = q0; q < q1; ++q) {
        if (q > q0) {
#pragma unroll
            for (int k = 0; k < K; ++k) {
                const double e = enter[k], l = leave[k];
                z1[k] += e - l;
                z2[k] += fma(e, e, -(l * l));
            }
        }
#pragma unroll
        for (int k = 0; k < K; ++k)
            if (threadIdx.x + k * kFinThreads < patch) {
                z1s[threadIdx.x + k * kFinThreads] = z1[k];
                z2s[threadIdx.x + k * kFinThreads] = z2[k];
            }
        if (q + 1 < q1) prefetch(q + 1);
        float num[kFinRun];
        const float* nrow = g.num + (int64_t(q) * g.F1 + oy0) * g.F2 + ox;
#pragma unroll
        for (int i = 0; i < kFinRun; ++i) num[i] = here >> i & 1u ? nrow[i * g.F2] : 0.f;
        __syncthreads();

        // Horizontal sums: the thread's tasks (patch row r, run s).
#pragma unroll
        for (int round = 0; round < kFinHRounds; ++round) {
            if (task[round] < 0) continue;
            const int r = task[round] >> 8, s = task[round] & 255;
            const double* a1 = z1s + r * pw + s * kFinRun;
            const double* a2 = z2s + r * pw + s * kFinRun;
            double* o1 = h1s + r * kFinHPitch + s * kFinRun;
            double* o2 = h2s + r * kFinHPitch + s * kFinRun;
            double s1 = a1[0], s2 = a2[0];
#pragma unroll
            for (int j = 1; j < TM; ++j)
                if (j < T2) s1 += a1[j], s2 += a2[j];
            o1[0] = s1;
            o2[0] = s2;
#pragma unroll
            for (int x = 1; x < kFinRun; ++x) {
                s1 = (s1 + a1[x + T2 - 1]) - a1[x - 1];
                s2 = (s2 + a2[x + T2 - 1]) - a2[x - 1];
                o1[x] = s1;
                o2[x] = s2;
            }
        }
        __syncthreads();

        // Vertical sums and the coefficients of the thread's outputs.
        const double* a1 = h1s + warp * kFinRun * kFinHPitch + lane;
        const double* a2 = h2s + warp * kFinRun * kFinHPitch + lane;
        double s1 = a1[0], s2 = a2[0];
#pragma unroll
        for (int i = 1; i < TM; ++i)
            if (i < T1) s1 += a1[i * kFinHPitch], s2 += a2[i * kFinHPitch];
        const bool zwhole = q >= g.P[0] && q <= g.S[0] + g.P[0] - T0;
        const int64_t row0 = (int64_t(q) * g.O[1] + oy0) * g.O[2] + ox;   // output (q, oy0, ox)
#pragma unroll
        for (int i = 0; i < kFinRun; ++i) {
            if (i > 0) {
                s1 = (s1 + a1[(i + T1 - 1) * kFinHPitch]) - a1[(i - 1) * kFinHPitch];
                s2 = (s2 + a2[(i + T1 - 1) * kFinHPitch]) - a2[(i - 1) * kFinHPitch];
            }
            if (!(here >> i & 1u)) continue;
            // The numerator: straight from the transforms in centred blocks, else rescaled and
            // with the padding's share for windows that reach it.
            float numf = num[i];
            if (!inside) {
                const int o[3] = {q, oy0 + i, ox};
                const bool whole = zwhole && (whole_yx >> i & 1u);
                numf = float(double(num[i]) * consts[4] - (whole ? 0.0 : consts[5] * taps_in_padding(g, o)));
            }
            const double p1 = n * s2;
            const double dn = fma(-s1, s1, p1);
            const double limit = fma(consts[1], p1, consts[0]);
            const float d = dn > limit ? float(dn * consts[6]) : 0.f;
            const float v = d >= FLT_MIN ? numf * rsqrt_normal(d) : 0.f;
            // As in window_sums_finalise (fourier.cuh): recompute where the transforms' error
            // could matter, and guarded windows of little energy; listed for recompute_listed.
            const int64_t e = row0 + int64_t(i) * g.O[2];
            if ((dn > limit) & (dn < consts[3]) | (dn <= limit) & (s2 > 0) & (s2 < consts[2]))
                g.redo[atomicAdd(g.redo_count, 1)] = int(e);
            out[e] = fminf(fmaxf(v, -1.f), 1.f);
        }
    }
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
