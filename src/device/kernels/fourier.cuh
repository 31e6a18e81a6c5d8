// Kernels of the GPU Fourier solvers (src/device/fourier_solver.cu). A frame's outputs are cut
// into zone-aligned overlap-save tiles, as on the host; tiles with the same FFT box form a
// group, transformed by one batched cuFFT plan. Per group and frame:
//   LCC: tile_stats -> tile_modes -> gather -> R2C -> product -> C2R ->
//        row_sums -> column_sums_finalise (2D) or window_sums_finalise (3D);
//   convolution: gather -> R2C -> product -> C2R -> crop (no statistics: raw values).
// All groups of a frame are captured once into a CUDA graph (launch overhead matters for small
// frames and for the many small boundary groups); the frame's pointers come from a device slot.
// Window sums are in double (2D: row prefix sums, then running sums down the columns; 3D: running
// sums along the planes, restarted per chunk of a tile), with the host's guard, exact mode and
// recomputed windows (lcc_common.cuh).
#pragma once

#include "device/kernels/frame_slot.cuh"
#include "device/kernels/lcc_common.cuh"

#include <cufft.h>

namespace flcc::device {

// One overlap-save tile (device memory, one array per group).
struct FftTile {
    int origin[3];   // first output (planes, rows, cols)
    int size[3];     // outputs
    int boundary;    // 1: not centred
};

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
    const cufftComplex* tspec; // the template's spectrum (product conjugates and scales it)
    float tscale;              // 1 / (F0*F1*F2): the inverse transform's missing factor
    float* num;                // ntiles boxes (C2R output)
    double* v1; double* v2;    // 2D row sums: ntiles x box rows (wy) x output cols (tx)
    const float* taps;         // normalised template (T0 x T1 x tap_row), for recomputed windows
    int tap_row;
    const double* tap_sum;     // its sum (device memory: the graph outlives template changes)
    int* status;
    // The largest tile extent (outputs) per axis, sizing the sum buffers.
    int tz, ty, tx;
};

__device__ inline int box_extent(const FftTile& t, const FftGroupParams& g, int a) { return t.size[a] + g.T[a] - 1; }

__global__ void tile_stats_init(FftGroupParams g)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < g.ntiles)
        g.stats[t] = merged_stats_init();
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
    // The block's rows as one flat range: every lane busy whatever the row length. A thread's
    // position (plane a, row i, column c) advances by a fixed step instead of being divided out
    // of the flat index per element (runtime divisions made this kernel compute-bound).
    const int step_rows = blockDim.x / bx, step_cols = blockDim.x - step_rows * bx;
    int c = threadIdx.x % bx, row = r0 + threadIdx.x / bx;
    int a = row / by, i = row - a * by;
#pragma unroll 4
    for (; row < r1;) {
        const int g0 = tile.origin[0] - g.P[0] + a, g1 = tile.origin[1] - g.P[1] + i;
        const int g2 = tile.origin[2] - g.P[2] + c;
        const bool inside = g0 >= 0 && g0 < g.S[0] && g1 >= 0 && g1 < g.S[1] && g2 >= 0 && g2 < g.S[2];
        const int64_t at = (int64_t(g0) * g.S[1] + g1) * g.S[2] + g2;
        c += step_cols;
        int down = step_rows;
        if (c >= bx) c -= bx, ++down;
        row += down;
        for (i += down; i >= by; i -= by) ++a;
        if (!inside) continue;
        const float v = image[at];
        add_value(st, v);
    }
    const detail::Stats s = detail::block_reduce(st, scratch);
    if (threadIdx.x == 0 && s.count > 0) {
        detail::Stats* d = g.stats + blockIdx.y;
        merge_stats(d, s);
    }
}

// LCC, one thread per tile: the tile's centring and mode (stats hold ordered-int min/max).
__global__ void tile_modes(FftGroupParams g)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= g.ntiles) return;
    const detail::Stats s = read_merged(g.stats[t]);
    if (!s.finite && g.check_finite) *reinterpret_cast<volatile int*>(g.status) = 1;   // host memory
    g.modes[t] = decide(s, g.tiles[t].boundary, g.n, g.guard);
}

// Rows per block of gather and crop (kRowsPerBlock, or 1 where that would leave too few
// blocks for the device): each thread loads its column of every row first, then stores them,
// so the loads are in flight together. With one row per block, or rows loaded and stored in
// turn (a store may alias the next load), the few dependent loads of a block dominate and the
// kernel runs far below the memory's bandwidth.
constexpr int kRowsPerBlock = 8;

// Grid: (groups of RPB box rows of the FFT box, tile); the whole F box is written (zero beyond
// the input box).
template <int RPB>
__global__ void gather(FftGroupParams g)
{
    const FftTile tile = g.tiles[blockIdx.y];
    const TileMode m = g.lcorr ? g.modes[blockIdx.y] : TileMode{0.f, 1.0, 1, 0.0, 0.0, 0.0};   // conv: raw values
    const int bz = box_extent(tile, g, 0), by = box_extent(tile, g, 1), bx = box_extent(tile, g, 2);
    const float* __restrict__ image = g.frame->image;
    const int rows = g.F[0] * g.F[1], row0 = blockIdx.x * RPB;
    const int c0 = tile.origin[2] - g.P[2];   // image column of box column 0
    const float* src[RPB];                    // image row of each box row, null: zeros
#pragma unroll
    for (int k = 0; k < RPB; ++k) {
        const int row = row0 + k, a = row / g.F[1], i = row - a * g.F[1];
        const int g0 = tile.origin[0] - g.P[0] + a, g1 = tile.origin[1] - g.P[1] + i;
        const bool real = row < rows && a < bz && i < by && g0 >= 0 && g0 < g.S[0] && g1 >= 0 && g1 < g.S[1];
        src[k] = real ? image + (int64_t(g0) * g.S[1] + g1) * g.S[2] : nullptr;
    }
    float* __restrict__ dst = g.in + (int64_t(blockIdx.y) * rows + row0) * g.F[2];
    for (int c = threadIdx.x; c < g.F[2]; c += blockDim.x) {
        const int g2 = c0 + c;
        const bool column = c < bx && g2 >= 0 && g2 < g.S[2];
        float v[RPB];
#pragma unroll
        for (int k = 0; k < RPB; ++k) {
            const float raw = column && src[k] != nullptr ? src[k][g2] : 0.f;
            v[k] = m.scale == 1 ? raw - m.c : float((double(raw) - double(m.c)) * m.scale);
        }
#pragma unroll
        for (int k = 0; k < RPB; ++k) {
            // Inside the box, padding is 0 - c (the centred zero); beyond it, zeros for the FFT.
            const int row = row0 + k, a = row / g.F[1], i = row - a * g.F[1];
            if (row < rows) dst[int64_t(k) * g.F[2] + c] = a < bz && i < by && c < bx ? v[k] : 0.f;
        }
    }
}

// The prepared template (taps, rows of tap_row) zero-padded to the group's box. Grid: box rows
// (F0 * F1); a block writes its row (no 64-bit division per element, which would cost more
// than the writes themselves).
__global__ void template_box(FftGroupParams g, float* box)
{
    const int row = blockIdx.x, a = row / g.F[1], i = row - a * g.F[1];
    const bool taps = a < g.T[0] && i < g.T[1];
    const float* src = g.taps + (int64_t(a) * g.T[1] + i) * g.tap_row;
    float* dst = box + int64_t(row) * g.F[2];
    for (int j = threadIdx.x; j < g.F[2]; j += blockDim.x) dst[j] = taps && j < g.T[2] ? src[j] : 0.f;
}

// spec *= conj(template spectrum) / N, over every tile of the group. Grid: (blocks of a tile's
// spectrum, tile).
__global__ void product(FftGroupParams g, int64_t per_tile)
{
    const int64_t k = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (k >= per_tile) return;
    cufftComplex* spec = g.spec + int64_t(blockIdx.y) * per_tile;
    const cufftComplex a = spec[k], b = g.tspec[k];
    const float bx = b.x * g.tscale, by = -b.y * g.tscale;
    spec[k] = cufftComplex{a.x * bx - a.y * by, a.x * by + a.y * bx};
}

// Convolution: copy each tile's valid outputs (loads first, as in gather). Grid: (groups of
// RPB output rows of the largest tile, tile).
template <int RPB>
__global__ void crop(FftGroupParams g)
{
    const FftTile tile = g.tiles[blockIdx.y];
    float* __restrict__ out = g.frame->out;
    const float* src[RPB];
    float* dst[RPB];
#pragma unroll
    for (int k = 0; k < RPB; ++k) {
        const int row = blockIdx.x * RPB + k, q = row / g.ty, r = row - q * g.ty;
        const bool real = q < tile.size[0] && r < tile.size[1];
        src[k] = real ? g.num + (int64_t(blockIdx.y) * g.F[0] * g.F[1] + int64_t(q) * g.F[1] + r) * g.F[2] : nullptr;
        dst[k] = real ? out + (int64_t(tile.origin[0] + q) * g.O[1] + tile.origin[1] + r) * g.O[2] + tile.origin[2]
                      : nullptr;
    }
    for (int c = threadIdx.x; c < tile.size[2]; c += blockDim.x) {
        float v[RPB];
#pragma unroll
        for (int k = 0; k < RPB; ++k) v[k] = src[k] != nullptr ? src[k][c] : 0.f;
#pragma unroll
        for (int k = 0; k < RPB; ++k)
            if (dst[k] != nullptr) dst[k][c] = v[k];
    }
}

// 2D LCC (3D uses window_sums_finalise below). Horizontal window sums of every box row: a warp per row
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
    const float* x = g.in + int64_t(blockIdx.y) * g.F[0] * g.F[1] * g.F[2] + int64_t(i) * g.F[2];
    double carry1 = 0, carry2 = 0;
    if (lane == 0) q1[0] = q2[0] = 0;
    for (int c0 = 0; c0 < bx; c0 += 32) {
        const int c = c0 + lane;
        double a1 = 0, a2 = 0;
        if (c < bx) {
            a1 = x[c];
            a2 = a1 * a1;
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
// output column, run of kColumnRows output rows), running down its rows (coalesced reads of h
// and num, coalesced stores). Runs, not whole columns: a thread's steps are dependent loads, and
// one thread per column leaves too few threads to hide their latency. Each run starts from a
// fresh sum of T1 rows. Grid: (column blocks, runs, tile).
constexpr int kColumnRows = 32;

__global__ void column_sums_finalise(FftGroupParams g)
{
    const FftTile tile = g.tiles[blockIdx.z];
    const int r0 = blockIdx.y * kColumnRows;
    if (r0 >= tile.size[1]) return;
    const int r1 = min(r0 + kColumnRows, tile.size[1]);
    const TileMode m = g.modes[blockIdx.z];
    const int wy = g.ty + g.T[1] - 1;
    const int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= tile.size[0] * tile.size[2]) return;
    const int q = e / tile.size[2], c = e - q * tile.size[2];
    const double* h1 = g.v1 + (int64_t(blockIdx.z) * g.tz + q) * wy * g.tx + c;
    const double* h2 = g.v2 + (int64_t(blockIdx.z) * g.tz + q) * wy * g.tx + c;
    const float* num = g.num + (int64_t(blockIdx.z) * g.F[0] * g.F[1] + int64_t(q) * g.F[1]) * g.F[2] + c;
    float* out = g.frame->out + (int64_t(tile.origin[0] + q) * g.O[1] + tile.origin[1]) * g.O[2] + tile.origin[2] + c;
    const double n = g.n, inv_n = 1.0 / n;
    double s1 = 0, s2 = 0;
    for (int i = r0; i < r0 + g.T[1]; ++i) s1 += h1[int64_t(i) * g.tx], s2 += h2[int64_t(i) * g.tx];
    for (int r = r0; r < r1; ++r) {
        if (r > r0) {
            s1 = (s1 + h1[int64_t(r + g.T[1] - 1) * g.tx]) - h1[int64_t(r - 1) * g.tx];
            s2 = (s2 + h2[int64_t(r + g.T[1] - 1) * g.tx]) - h2[int64_t(r - 1) * g.tx];
        }
        const double p1 = n * s2;
        const double dn = fma(-s1, s1, p1);
        const double limit = m.exact ? 0.0 : m.tau + 4 * 0x1p-53 * p1;
        const float d = dn > limit ? float(dn * inv_n) : 0.f;
        float v = d >= FLT_MIN ? num[int64_t(r) * g.F[2]] * rsqrt_normal(d) : 0.f;
        // An FFT numerator's error per output is about u log2(N) times the tile's RMS, whatever
        // the window: recompute where m^2 (m bounds the RMS) exceeds 2 D = 2 dn / n, i.e. where
        // that error could approach 1e-5.
        if ((dn > limit && n * m.m2 > 2.0 * dn) || (dn <= limit && s2 > 0 && s2 < m.small)) {
            const Window w{{tile.origin[0] + q - g.P[0], tile.origin[1] + r - g.P[1], tile.origin[2] + c - g.P[2]},
                           {g.S[0], g.S[1], g.S[2]}, {g.T[0], g.T[1], g.T[2]}, g.tap_row, g.n, *g.tap_sum};
            v = recomputed_inline(w, g.frame->image, g.taps);
        }
        out[int64_t(r) * g.O[2]] = fminf(fmaxf(v, -1.f), 1.f);
    }
}

// 3D LCC: window sums and finalisation of a group in one pass over the centred box (`in`) and
// the numerator (`num`), with no intermediate arrays in global memory. Each thread owns an output
// column (row, col) of the block and marches along the planes of its chunk, keeping the running
// window sums of x and x^2 in registers: each step adds the T1 x T2 box sums of the plane that
// enters the window and subtracts those of the plane that leaves (kept in a shared ring when it
// fits, recomputed otherwise). A plane's box sums are horizontal sums over T2 columns, shared by
// the block's rows through shared memory, then vertical sums over T1 of them per thread. All in
// double, O(T1 + T2) per output and step.
// Block: MX columns x MY rows of threads (kMarchThreads in all); grid: (x blocks, y blocks x
// chunks, tile). Dynamic shared memory: march_shared_bytes. Most groups get wide blocks (32 x 8);
// groups at most 16 columns wide (the boundary slabs thin along the columns, 7 columns for an
// 8^3 template) get narrow ones (8 x 32), whose warps are not mostly idle lanes.
// TC > 0 compiles T1 = T2 = TC in (march_kernel picks it for cubic templates up to 8), so that
// the loops over a row's T2 values and over T1 horizontal sums unroll with constant offsets:
// the kernel is bound by instruction issue, and with run-time extents their loop control and
// addressing outnumbered the loads and sums themselves. TC = 0: any extents.
constexpr int kMarchThreads = 256, kMarchWide = 32, kMarchNarrow = 8;

// Rows of a block of mx columns.
inline int march_rows(int mx) { return kMarchThreads / mx; }

// Shared bytes: horizontal sums and the ring of `ring` planes (0: recompute), for blocks of mx
// columns.
inline size_t march_shared_bytes(int T1, int ring, int mx)
{
    return (size_t(2) * (march_rows(mx) + T1 - 1) * mx + size_t(2) * ring * kMarchThreads) * sizeof(double);
}

template <int TC, int MX>
__global__ void __launch_bounds__(kMarchThreads, 3)
    window_sums_finalise(FftGroupParams g, int chunk, int ring, int yblocks)
{
    constexpr int MY = kMarchThreads / MX;
    extern __shared__ double shared[];
    const FftTile tile = g.tiles[blockIdx.z];
    const int T0 = g.T[0], T1 = TC > 0 ? TC : g.T[1], T2 = TC > 0 ? TC : g.T[2];
    const int yb = blockIdx.y % yblocks;
    const int x0 = blockIdx.x * MX, y0 = yb * MY, q0 = (blockIdx.y / yblocks) * chunk;
    if (x0 >= tile.size[2] || y0 >= tile.size[1] || q0 >= tile.size[0]) return;   // uniform over the block
    const int q1 = min(q0 + chunk, tile.size[0]);
    const int c = x0 + threadIdx.x, r = y0 + threadIdx.y;
    const bool live = c < tile.size[2] && r < tile.size[1];
    const int64_t plane = int64_t(g.F[1]) * g.F[2];
    const float* x = g.in + int64_t(blockIdx.z) * g.F[0] * plane;
    const int hy = MY + T1 - 1, me = threadIdx.y * MX + threadIdx.x;
    constexpr int nthreads = kMarchThreads;
    double* h1 = shared;
    double* h2 = h1 + hy * MX;
    double* ring1 = h2 + hy * MX;
    double* ring2 = ring1 + ring * nthreads;

    // Box sums of plane a at this thread's output column; every thread of the block calls it.
    // The row addressing is set up once: recomputed per row from the run-time extents it would
    // be a large share of each row's loads and sums, and the kernel is bound by instruction
    // issue.
    const int rows_in = min(hy, g.F[1] - y0);   // patch rows inside the box
    const bool cols_in = c + T2 <= g.F[2];       // rows and columns beyond the box only ever
                                                 // feed outputs that are not live
    const int64_t row_step = int64_t(MY) * g.F[2];
    const float* first_row = x + int64_t(y0 + threadIdx.y) * g.F[2] + c;   // plane 0
    // Source rows per thread: at most 2 when TC is compiled in (hy <= 2 MY).
    constexpr int kPasses = TC > 0 ? (MY + TC - 1 + MY - 1) / MY : 0;
    const int passes = TC > 0 ? kPasses : (hy + MY - 1) / MY;
    const auto plane_sums = [&](int a, double& b1, double& b2) {
        const float* src = first_row + a * plane;
        __syncthreads();   // the previous plane's horizontal sums are consumed
#pragma unroll
        for (int k = 0; k < passes; ++k, src += row_step) {
            const int i = threadIdx.y + k * MY;
            if (i >= hy) break;
            double a1 = 0, a2 = 0;
            if (i < rows_in && cols_in) {
#pragma unroll
                for (int j = 0; j < T2; ++j) {
                    const double v = src[j];
                    a1 += v;
                    a2 = fma(v, v, a2);
                }
            }
            h1[i * MX + threadIdx.x] = a1;
            h2[i * MX + threadIdx.x] = a2;
        }
        __syncthreads();
        b1 = b2 = 0;
#pragma unroll
        for (int i = 0; i < T1; ++i) {
            b1 += h1[(threadIdx.y + i) * MX + threadIdx.x];
            b2 += h2[(threadIdx.y + i) * MX + threadIdx.x];
        }
    };

    double s1 = 0, s2 = 0;
    for (int k = 0; k < T0; ++k) {
        double b1, b2;
        plane_sums(q0 + k, b1, b2);
        s1 += b1;
        s2 += b2;
        if (ring) ring1[k * nthreads + me] = b1, ring2[k * nthreads + me] = b2;
    }
    const TileMode m = g.modes[blockIdx.z];
    const double n = g.n, inv_n = 1.0 / n;
    const int64_t out_plane = int64_t(g.O[1]) * g.O[2];
    float* out = g.frame->out + (int64_t(tile.origin[0]) * g.O[1] + tile.origin[1] + r) * g.O[2] + tile.origin[2] + c;
    const float* num = g.num + int64_t(blockIdx.z) * g.F[0] * plane + int64_t(r) * g.F[2] + c;
    int slot = 0;   // plane q0 + k lives in ring slot k % T0
    for (int q = q0; q < q1; ++q) {
        if (q > q0) {   // plane q - 1 leaves, q + T0 - 1 enters
            double n1, n2, o1, o2;
            plane_sums(q + T0 - 1, n1, n2);
            if (ring) {
                const int at = slot * nthreads + me;
                o1 = ring1[at];
                o2 = ring2[at];
                ring1[at] = n1;
                ring2[at] = n2;
                slot = slot + 1 == T0 ? 0 : slot + 1;
            } else {
                plane_sums(q - 1, o1, o2);
            }
            s1 = (s1 + n1) - o1;
            s2 = (s2 + n2) - o2;
        }
        if (!live) continue;
        const double p1 = n * s2;
        const double dn = fma(-s1, s1, p1);
        const double limit = m.exact ? 0.0 : m.tau + 4 * 0x1p-53 * p1;
        const float d = dn > limit ? float(dn * inv_n) : 0.f;
        float v = d >= FLT_MIN ? num[q * plane] * rsqrt_normal(d) : 0.f;
        // As in column_sums_finalise: recompute where the FFT numerator's error could matter.
        if ((dn > limit && n * m.m2 > 2.0 * dn) || (dn <= limit && s2 > 0 && s2 < m.small)) {
            const Window w{{tile.origin[0] + q - g.P[0], tile.origin[1] + r - g.P[1], tile.origin[2] + c - g.P[2]},
                           {g.S[0], g.S[1], g.S[2]}, {g.T[0], g.T[1], g.T[2]}, g.tap_row, g.n, *g.tap_sum};
            v = recomputed_inline(w, g.frame->image, g.taps);
        }
        out[q * out_plane] = fminf(fmaxf(v, -1.f), 1.f);
    }
}

// The window_sums_finalise instance for a template of T1 x T2 (rows, columns) and blocks of MX
// columns.
using MarchKernel = void (*)(FftGroupParams, int, int, int);
template <int MX>
MarchKernel march_instance(int T1, int T2)
{
    switch (T1 == T2 ? T1 : 0) {
    case 2: return window_sums_finalise<2, MX>;
    case 3: return window_sums_finalise<3, MX>;
    case 4: return window_sums_finalise<4, MX>;
    case 5: return window_sums_finalise<5, MX>;
    case 6: return window_sums_finalise<6, MX>;
    case 7: return window_sums_finalise<7, MX>;
    case 8: return window_sums_finalise<8, MX>;
    default: return window_sums_finalise<0, MX>;
    }
}
inline MarchKernel march_kernel(int T1, int T2, int mx)
{
    return mx == kMarchNarrow ? march_instance<kMarchNarrow>(T1, T2) : march_instance<kMarchWide>(T1, T2);
}

}  // namespace flcc::device
