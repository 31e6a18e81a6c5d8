// Kernels of the GPU Fourier solvers (src/device/fourier_solver.cu). A frame's outputs are cut
// into zone-aligned overlap-save tiles, as on the host; tiles with the same FFT box form a
// group, transformed by one batched cuFFT plan. Per group and frame:
//   tile_stats -> tile_modes -> gather -> R2C -> product -> C2R -> [plane_sums] ->
//   row_sums -> column_sums_finalise (LCC)   or   crop (convolution).
// All groups of a frame are captured once into a CUDA graph (launch overhead matters for small
// frames and for the many small boundary groups); the frame's pointers come from a device slot.
// Window sums are running sums restarted per tile (O(1) per output, any template size), in
// double, with the host's guard, exact mode and recomputed windows (lcc_common.cuh).
#pragma once

#include "device/kernels/lcc_common.cuh"

#include <cufft.h>

namespace flcc::device {

// One overlap-save tile (device memory, one array per group).
struct FftTile {
    int origin[3];   // first output (planes, rows, cols)
    int size[3];     // outputs
    int boundary;    // 1: not centred
};

// The frame a replay of the group's CUDA graph works on: set by set_frame before each replay,
// so the captured kernels never change.
struct FrameSlot {
    const float* image;
    float* out;
};

__global__ void set_frame(FrameSlot* slot, const float* image, float* out)
{
    slot->image = image;
    slot->out = out;
}

// What every kernel of a group needs.
struct FftGroupParams {
    const FrameSlot* frame;    // device memory
    int S[3], O[3], P[3], T[3];
    int F[3];                  // FFT box of the group
    const FftTile* tiles;
    int ntiles;
    int lcorr, check_finite;
    double n, guard;
    detail::Stats* stats;      // per tile
    TileMode* modes;           // per tile
    float* in;                 // ntiles boxes of F0*F1*F2 (real)
    cufftComplex* spec;        // ntiles of F0*F1*(F2/2+1)
    const cufftComplex* tspec; // conj(template spectrum) / (F0*F1*F2)
    float* num;                // ntiles boxes (C2R output)
    double* p1; double* p2;    // 3D plane sums: ntiles x tz x box rows x box cols (wy x wx)
    double* v1; double* v2;    // row sums: ntiles x tz x box rows (wy) x output cols (tx)
    const float* taps;         // normalised template (T0 x T1 x tap_row), for recomputed windows
    int tap_row;
    const double* tap_sum;     // its sum (device memory: the graph outlives template changes)
    int* status;
    // The largest tile extent (outputs) per axis, sizing the sum buffers.
    int tz, ty, tx;
};

__device__ inline int box_extent(const FftTile& t, const FftGroupParams& g, int a) { return t.size[a] + g.T[a] - 1; }

// Per-tile min/max are merged with integer atomics on the order-preserving integer image of
// floats (stored in the float fields until tile_modes converts them back).
__device__ inline int float_order(float f)
{
    const int i = __float_as_int(f);
    return i >= 0 ? i : i ^ 0x7fffffff;
}
__device__ inline float order_float(int i) { return __int_as_float(i >= 0 ? i : i ^ 0x7fffffff); }

__global__ void tile_stats_init(FftGroupParams g)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < g.ntiles)
        g.stats[t] = detail::Stats{0.0, __int_as_float(float_order(FLT_MAX)),
                                   __int_as_float(float_order(-FLT_MAX)), 1, 1, 0};
}

// Grid: (box rows chunk, tile). Each block reduces some box rows of a tile and merges into
// stats[tile] with atomics.
__global__ void tile_stats(FftGroupParams g, int rows_per_block)
{
    __shared__ double scratch[kScratchDoubles];
    const FftTile tile = g.tiles[blockIdx.y];
    const float* image = g.frame->image;
    const int bz = box_extent(tile, g, 0), by = box_extent(tile, g, 1), bx = box_extent(tile, g, 2);
    const int r0 = blockIdx.x * rows_per_block, r1 = min(r0 + rows_per_block, bz * by);
    detail::Stats st{0.0, FLT_MAX, -FLT_MAX, 1, 1, 0};
    for (int row = r0; row < r1; ++row) {
        const int a = row / by, i = row - a * by;
        const int g0 = tile.origin[0] - g.P[0] + a, g1 = tile.origin[1] - g.P[1] + i;
        if (g0 < 0 || g0 >= g.S[0] || g1 < 0 || g1 >= g.S[1]) continue;
        const float* src = image + (int64_t(g0) * g.S[1] + g1) * g.S[2];
        for (int c = threadIdx.x; c < bx; c += blockDim.x) {
            const int g2 = tile.origin[2] - g.P[2] + c;
            if (g2 < 0 || g2 >= g.S[2]) continue;
            const float v = src[g2];
            st.sum += v;
            st.lo = fminf(st.lo, v);
            st.hi = fmaxf(st.hi, v);
            st.integral &= v == truncf(v);
            st.finite &= isfinite(v);
            st.count += 1;
        }
    }
    const detail::Stats s = detail::block_reduce(st, scratch);
    if (threadIdx.x == 0 && s.count > 0) {
        detail::Stats* d = g.stats + blockIdx.y;
        atomicAdd(&d->sum, s.sum);
        atomicMin(reinterpret_cast<int*>(&d->lo), float_order(s.lo));
        atomicMax(reinterpret_cast<int*>(&d->hi), float_order(s.hi));
        atomicAnd(&d->integral, s.integral);
        atomicAnd(&d->finite, s.finite);
        atomicAdd(&d->count, s.count);
    }
}

// One thread per tile: the tile's centring and mode (stats hold ordered-int min/max).
__global__ void tile_modes(FftGroupParams g)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= g.ntiles) return;
    detail::Stats s = g.stats[t];
    s.lo = order_float(__float_as_int(s.lo));
    s.hi = order_float(__float_as_int(s.hi));
    if (!s.finite && g.check_finite) atomicExch(g.status, 1);
    g.modes[t] = g.lcorr ? decide(s, g.tiles[t].boundary, g.n, g.guard) : TileMode{0.f, 1.0, 1, 0.0, 0.0, 0.0};
}

// Grid: (box rows of the FFT box, tile); the whole F box is written (zero beyond the input box).
__global__ void gather(FftGroupParams g)
{
    const FftTile tile = g.tiles[blockIdx.y];
    const TileMode m = g.modes[blockIdx.y];
    const int bz = box_extent(tile, g, 0), by = box_extent(tile, g, 1), bx = box_extent(tile, g, 2);
    const int row = blockIdx.x, a = row / g.F[1], i = row - a * g.F[1];
    float* dst = g.in + (int64_t(blockIdx.y) * g.F[0] * g.F[1] + row) * g.F[2];
    const int g0 = tile.origin[0] - g.P[0] + a, g1 = tile.origin[1] - g.P[1] + i;
    const bool in_box = a < bz && i < by;
    const bool in_image = g0 >= 0 && g0 < g.S[0] && g1 >= 0 && g1 < g.S[1];
    const float* src = g.frame->image + (int64_t(g0) * g.S[1] + g1) * g.S[2];
    for (int c = threadIdx.x; c < g.F[2]; c += blockDim.x) {
        float v = 0.f;
        if (in_box && c < bx) {
            const int g2 = tile.origin[2] - g.P[2] + c;
            const float raw = in_image && g2 >= 0 && g2 < g.S[2] ? src[g2] : 0.f;
            v = m.scale == 1 ? raw - m.c : float((double(raw) - double(m.c)) * m.scale);
        }
        dst[c] = v;
    }
}

// spec *= conj(template spectrum) / N, over every tile of the group.
__global__ void product(FftGroupParams g, int64_t per_tile)
{
    const int64_t k = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (k >= per_tile * g.ntiles) return;
    const cufftComplex a = g.spec[k], b = g.tspec[k % per_tile];
    g.spec[k] = cufftComplex{a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x};
}

// Convolution: copy each tile's valid outputs. Grid: (output rows of the largest tile, tile).
__global__ void crop(FftGroupParams g)
{
    const FftTile tile = g.tiles[blockIdx.y];
    const int row = blockIdx.x;
    const int q = row / g.ty, r = row - q * g.ty;
    if (q >= tile.size[0] || r >= tile.size[1]) return;
    const float* src = g.num + (int64_t(blockIdx.y) * g.F[0] * g.F[1] + int64_t(q) * g.F[1] + r) * g.F[2];
    float* dst = g.frame->out + (int64_t(tile.origin[0] + q) * g.O[1] + tile.origin[1] + r) * g.O[2] + tile.origin[2];
    for (int c = threadIdx.x; c < tile.size[2]; c += blockDim.x) dst[c] = src[c];
}

// 3D: plane sums p = sum over T0 planes of x and x^2, for every output plane of the tile, every
// box row and column; one thread per (box row, column), running over planes.
__global__ void plane_sums_kernel(FftGroupParams g)
{
    const FftTile tile = g.tiles[blockIdx.y];
    const int by = box_extent(tile, g, 1), bx = box_extent(tile, g, 2);
    const int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= by * bx) return;
    const int i = e / bx, c = e - i * bx;
    const float* x = g.in + int64_t(blockIdx.y) * g.F[0] * g.F[1] * g.F[2] + int64_t(i) * g.F[2] + c;
    const int64_t plane = int64_t(g.F[1]) * g.F[2];
    const int64_t base = int64_t(blockIdx.y) * g.tz * (g.ty + g.T[1] - 1) * (g.tx + g.T[2] - 1);
    const int64_t bstride = int64_t(g.ty + g.T[1] - 1) * (g.tx + g.T[2] - 1);
    double a1 = 0, a2 = 0;
    for (int a = 0; a < g.T[0]; ++a) {
        const double v = x[a * plane];
        a1 += v;
        a2 = fma(v, v, a2);
    }
    for (int q = 0; q < tile.size[0]; ++q) {
        const int64_t at = base + q * bstride + int64_t(i) * (g.tx + g.T[2] - 1) + c;
        g.p1[at] = a1;
        g.p2[at] = a2;
        if (q + 1 < tile.size[0]) {
            const double come = x[(q + g.T[0]) * plane], gone = x[q * plane];
            a1 = (a1 + come) - gone;
            a2 = fma(-gone, gone, fma(come, come, a2));
        }
    }
}

// Horizontal window sums of every source row (x in 2D, the plane sums in 3D): a warp per row
// scans it in chunks of 32 columns (coalesced loads, shuffle prefix sums, the carry from chunk
// to chunk), keeps the row's prefix Q in its shared buffer, then writes
// h[c] = Q[c + T2] - Q[c] for the tile's output columns. Grid: (row blocks, tile); dynamic
// shared memory: 2 * (wx + 1) doubles per warp.
__global__ void row_sums(FftGroupParams g)
{
    extern __shared__ double prefix[];
    const FftTile tile = g.tiles[blockIdx.y];
    const int by = box_extent(tile, g, 1), bx = box_extent(tile, g, 2);
    const int wx = g.tx + g.T[2] - 1, wy = g.ty + g.T[1] - 1;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    double* q1 = prefix + warp * 2 * (wx + 1);
    double* q2 = q1 + (wx + 1);
    const int row = blockIdx.x * warps + warp;   // (output plane, box row)
    if (row >= tile.size[0] * by) return;
    const int q = row / by, i = row - q * by;
    const bool planes = g.T[0] > 1;
    const float* x = g.in + int64_t(blockIdx.y) * g.F[0] * g.F[1] * g.F[2] + int64_t(i) * g.F[2];
    const int64_t src = ((int64_t(blockIdx.y) * g.tz + q) * wy + i) * wx;
    double carry1 = 0, carry2 = 0;
    if (lane == 0) q1[0] = q2[0] = 0;
    for (int c0 = 0; c0 < bx; c0 += 32) {
        const int c = c0 + lane;
        double a1 = 0, a2 = 0;
        if (c < bx) {
            if (planes) {
                a1 = g.p1[src + c];
                a2 = g.p2[src + c];
            } else {
                a1 = x[c];
                a2 = a1 * a1;
            }
        }
        for (int d = 1; d < 32; d <<= 1) {
            const double b1 = __shfl_up_sync(0xffffffffu, a1, d), b2 = __shfl_up_sync(0xffffffffu, a2, d);
            if (lane >= d) a1 += b1, a2 += b2;
        }
        a1 += carry1;
        a2 += carry2;
        if (c < bx) q1[c + 1] = a1, q2[c + 1] = a2;
        carry1 = __shfl_sync(0xffffffffu, a1, 31);
        carry2 = __shfl_sync(0xffffffffu, a2, 31);
    }
    __syncwarp();
    double* h1 = g.v1 + ((int64_t(blockIdx.y) * g.tz + q) * wy + i) * g.tx;
    double* h2 = g.v2 + ((int64_t(blockIdx.y) * g.tz + q) * wy + i) * g.tx;
    for (int c = lane; c < tile.size[2]; c += 32) {
        h1[c] = q1[c + g.T[2]] - q1[c];
        h2[c] = q2[c + g.T[2]] - q2[c];
    }
}

// Vertical window sums over T1 rows of h and the finalisation: a thread per (output plane,
// output column), running down the rows (coalesced reads of h and num, coalesced stores).
__global__ void column_sums_finalise(FftGroupParams g)
{
    const FftTile tile = g.tiles[blockIdx.y];
    const TileMode m = g.modes[blockIdx.y];
    const int wy = g.ty + g.T[1] - 1;
    const int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= tile.size[0] * tile.size[2]) return;
    const int q = e / tile.size[2], c = e - q * tile.size[2];
    const double* h1 = g.v1 + (int64_t(blockIdx.y) * g.tz + q) * wy * g.tx + c;
    const double* h2 = g.v2 + (int64_t(blockIdx.y) * g.tz + q) * wy * g.tx + c;
    const float* num = g.num + (int64_t(blockIdx.y) * g.F[0] * g.F[1] + int64_t(q) * g.F[1]) * g.F[2] + c;
    float* out = g.frame->out + (int64_t(tile.origin[0] + q) * g.O[1] + tile.origin[1]) * g.O[2] + tile.origin[2] + c;
    const double n = g.n, inv_n = 1.0 / n;
    double s1 = 0, s2 = 0;
    for (int i = 0; i < g.T[1]; ++i) s1 += h1[int64_t(i) * g.tx], s2 += h2[int64_t(i) * g.tx];
    for (int r = 0; r < tile.size[1]; ++r) {
        if (r > 0) {
            s1 = (s1 + h1[int64_t(r + g.T[1] - 1) * g.tx]) - h1[int64_t(r - 1) * g.tx];
            s2 = (s2 + h2[int64_t(r + g.T[1] - 1) * g.tx]) - h2[int64_t(r - 1) * g.tx];
        }
        const double p1 = n * s2;
        const double dn = fma(-s1, s1, p1);
        const double limit = m.exact ? 0.0 : m.tau + 4 * 0x1p-53 * p1;
        const float d = dn > limit ? float(dn * inv_n) : 0.f;
        float v = d >= FLT_MIN ? num[int64_t(r) * g.F[2]] * rsqrtf(d) : 0.f;
        // An FFT numerator's error per output is about u log2(N) times the tile's RMS, whatever
        // the window: recompute where m^2 (m bounds the RMS) exceeds 2 D = 2 dn / n, i.e. where
        // that error could approach 1e-5.
        if ((dn > limit && n * m.m2 > 2.0 * dn) || (dn <= limit && s2 > 0 && s2 < m.small)) {
            const Window w{{tile.origin[0] + q - g.P[0], tile.origin[1] + r - g.P[1], tile.origin[2] + c - g.P[2]},
                           {g.S[0], g.S[1], g.S[2]}, {g.T[0], g.T[1], g.T[2]}, g.tap_row, g.n, *g.tap_sum};
            v = recomputed(w, g.frame->image, g.taps);
        }
        out[int64_t(r) * g.O[2]] = fminf(fmaxf(v, -1.f), 1.f);
    }
}

}  // namespace flcc::device
