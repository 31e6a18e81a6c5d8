// The kernel of device.fourier3.slabs (src/device/fourier_slabs_solver.cu): 3D convolution and
// LCC for templates up to 8 x 8 x 8 by 2D transforms of 32 x 32 tiles, the sum over the
// template's planes per frequency bin, and 2D inverse transforms, in one kernel that marches
// along the planes (slab_frame); for LCC the window sums march with it.
//
// slab_frame: a block owns one tile of 25 x 25 outputs (overlap-save along x and y: a 32 x 32
// tile of the image) and a chunk of output planes, and takes its input planes 16 at a time
// (a step; the raw tiles arrive in groups of 8 planes). Per step:
//   0. LCC: the window sums and factors of the 16 output planes the step completes (below);
//   1. the step's raw tiles are there (asynchronous copies issued during the previous step);
//   2. warp w transforms plane w: a lane per tile row (32-point real FFT in registers), then a
//      lane pair per spectrum column (the two halves of a 32-point complex FFT), in place in
//      shared memory, warp-synchronous;
//   3. a thread per frequency bin (512) sums the bins of the step's planes times the template
//      planes' conjugate spectra into running accumulators of the 23 output planes they reach,
//      taps and accumulators in registers (the direct sum along the planes: 8 complex
//      multiply-adds per input bin), and hands over the 16 output planes completed;
//   4. warp w inverts output plane w (column halves, then rows) and stores its coefficients
//      (LCC: times the factor step 0 left in shared memory).
// Against device.fourier3.rows (one 32-point transform per row, the sum over the template's 64
// (dz, dy) rows per bin: ~160 multiply-adds per output) the 2D transforms leave 8 per bin, and
// the box halo along z is gone (the block marches).
//
// LCC window sums (step 0): each thread keeps the sums of x and x^2 over the window's planes at
// two tile positions (rows 2 warp and 2 warp + 1, column lane) in registers, in double, the
// plane that enters added and the one that leaves subtracted (the raw tiles of the previous
// group of 8 planes stay in a third slot of the ring for that); per output plane the sums over
// T2 columns by shuffles (runs doubled), over T1 rows from shared memory (two rows per task),
// and each output's WindowFactor into shared memory: nothing is parked in the output and the
// image is read once. The sums are centred by modes[0] for the output planes whose windows all
// lie inside the image (the tile's along x and y, the plane's along z), else taken plain
// (modes[1]); where that changes the plane sums are summed afresh from the ring.
//
// Numerics (LCC) follow rows: one centring constant c (modes[0]) for the transforms with the
// padding at zero and c times the taps over the padding added back in double, the same guard
// (slab_guard_factor counts the block's running sums), modes, recompute rule and list. The
// transforms are 2D here (10 stages against rows' 5), still short: error ~1e-7 of the tile's RMS.
#pragma once

#include "device/kernels/fft32.h"
#include "device/kernels/fourier_planes.cuh"
#include "device/kernels/slab_layout.h"

#include <cuda_pipeline.h>

#include <cstdint>
#include <type_traits>

namespace flcc::device {

constexpr int kSlabPlanes = 16;                          // input planes per step: a warp each
constexpr int kSlabGroup = 8;                            // planes per group of copies (half a step)
constexpr int kSlabThreads = 32 * kSlabPlanes;           // 512: a thread per frequency bin
constexpr int kSlabAcc = kSlabPlanes + kSlabMaxT - 1;    // output planes one step's inputs reach
constexpr int kSlabRawPitch = 36;                        // floats per raw tile row: nine 16-byte copies
constexpr int kSlabColPitch = kSlabFFT + 1;              // float2 per spectrum column (bank-free)
constexpr int kSlabPlaneSpec = kSlabCols * kSlabColPitch;   // float2 per plane's spectrum
constexpr size_t kSlabGroupBytes = size_t(kSlabGroup) * kSlabFFT * kSlabRawPitch * sizeof(float);
constexpr size_t kSlabSpecBytes = size_t(kSlabPlanes) * kSlabPlaneSpec * sizeof(float2);
constexpr size_t kSlabFactorBytes = size_t(kSlabPlanes) * kSlabOut * kSlabOut * sizeof(float);
constexpr int kSlabWinTasks = (kSlabOut + 2) / 3 * kSlabOut;   // runs of 3 output rows of a column: 225
// The ring of raw groups: the step's two, and for LCC the previous one (the planes that leave
// the window sums).
__host__ __device__ constexpr int slab_raw_groups(bool lcc) { return lcc ? 3 : 2; }
// Convolution 138 KB, LCC 213 KB (the factors of the step's 16 output planes): one block per SM.
__host__ __device__ constexpr size_t slab_shared_bytes(bool lcc)
{
    return slab_raw_groups(lcc) * kSlabGroupBytes + kSlabSpecBytes + (lcc ? kSlabFactorBytes : 0);
}
static_assert(kSlabThreads == kSlabSlots, "a thread per bin");
static_assert(kSlabOut * kSlabOut * sizeof(float) <= kSlabPlaneSpec * sizeof(float2), "outputs staged in a plane");
static_assert(2 * kSlabPlanes == kSlabFFT, "two tile rows per warp in the window sums");
static_assert(4 * kSlabFFT * kSlabOut * sizeof(double2) <= kSlabSpecBytes, "the row sums' buffers fit the spectra");
static_assert(2 * kSlabWinTasks <= kSlabThreads, "a task per thread at most");
static_assert(kSlabOut % 3 == 1, "runs of 3 rows, the last one row");

// The error bound factor of the window sums (planes_guard_factor's terms): running sums along
// `planes` planes, then the columns and the rows summed directly.
inline double slab_guard_factor(int T0, int T1, int T2, int planes)
{
    return planes_guard_factor(T0, T1, T2, planes, 1, 1);
}

struct SlabParams {
    PlanesParams g;
    int tiles_x;   // tiles along x; grid.x = tiles_x * tiles along y
    int chunk;     // output planes per block; grid.y = chunks
};

namespace slab_detail {

// Raw tiles of `Planes` planes (32 rows x 36 values from column xa, a multiple of 4), zero
// outside the image, by asynchronous copies of W floats (16-byte copies when the image rows
// are 16-byte aligned, else 4-byte ones).
template <int W, int Planes>
__device__ __forceinline__ void copy_planes(float* raw, const float* __restrict__ image, const PlanesParams& g, int z0,
                                            int y0, int xa)
{
    constexpr int kPerRow = kSlabRawPitch / W, kPerPlane = kSlabFFT * kPerRow, kAll = Planes * kPerPlane;
#pragma unroll 9
    for (int j = 0; j < (kAll + kSlabThreads - 1) / kSlabThreads; ++j) {
        const int i = threadIdx.x + j * kSlabThreads, p = i / kPerPlane, rem = i - p * kPerPlane;
        if (kAll % kSlabThreads != 0 && i >= kAll) break;
        const int r = rem / kPerRow, e = rem - r * kPerRow;
        const int z = z0 + p, y = y0 + r, x = xa + e * W;
        const bool in = z >= 0 && z < g.S[0] && y >= 0 && y < g.S[1] && x >= 0 && x + W <= g.S[2];
        const float* src = in ? image + (int64_t(z) * g.S[1] + y) * g.S[2] + x : image;
        __pipeline_memcpy_async(raw + (p * kSlabFFT + r) * kSlabRawPitch + e * W, src, W * sizeof(float),
                                in ? 0 : W * sizeof(float));
    }
}

// v[j] = r[j + Shift]: the tile row from its 16-byte-aligned copy (one branch per block).
template <int Shift>
__device__ __forceinline__ void pick_row(const float (&r)[kSlabRawPitch], float (&v)[kSlabFFT])
{
#pragma unroll
    for (int j = 0; j < kSlabFFT; ++j) v[j] = r[j + Shift];
}

// The sums over T2 (1..8) consecutive columns of a tile row whose columns 2 i and 2 i + 1 are
// lane i's of a half warp (za, zb; x and x^2 in .x and .y): in place, the sums starting at
// this lane's columns (valid up to column 32 - T2). For T2 = 8 from runs of 2 and 4 columns
// (three shuffles a value), else from the 9 columns gathered.
__device__ __forceinline__ double shfl_down16(double v, int d) { return __shfl_down_sync(~0u, v, d, 16); }

__device__ __forceinline__ void column_sums(double2& za, double2& zb, int T2)
{
    if (T2 == kSlabMaxT) {
        const double p1 = za.x + zb.x, p2 = za.y + zb.y;                              // columns 0, 1
        const double n1 = shfl_down16(p1, 1), n2 = shfl_down16(p2, 1);              // 2, 3
        const double q1 = p1 + n1, q2 = p2 + n2;                                     // 0 .. 3
        const double r1 = shfl_down16(q1, 2), r2 = shfl_down16(q2, 2);              // 4 .. 7
        const double e1 = shfl_down16(za.x, 4), e2 = shfl_down16(za.y, 4);          // 8
        zb = {((zb.x + n1) + r1) + e1, ((zb.y + n2) + r2) + e2};
        za = {q1 + r1, q2 + r2};
        return;
    }
    double c1[kSlabMaxT + 1], c2[kSlabMaxT + 1];   // columns 0 .. 8 from here
    c1[0] = za.x, c2[0] = za.y, c1[1] = zb.x, c2[1] = zb.y;
#pragma unroll
    for (int k = 1; k <= kSlabMaxT / 2; ++k) {
        c1[2 * k] = shfl_down16(za.x, k), c2[2 * k] = shfl_down16(za.y, k);
        if (2 * k + 1 <= kSlabMaxT) c1[2 * k + 1] = shfl_down16(zb.x, k), c2[2 * k + 1] = shfl_down16(zb.y, k);
    }
    double a1 = 0, a2 = 0, b1 = 0, b2 = 0;
#pragma unroll
    for (int k = 0; k < kSlabMaxT; ++k)
        if (k < T2) a1 += c1[k], a2 += c2[k], b1 += c1[k + 1], b2 += c2[k + 1];
    za = {a1, a2};
    zb = {b1, b2};
}

// One step of the plane sums at two tile positions (p and p + 1): the value that enters added,
// the one that leaves subtracted (both centred in double, as the rows solver centres its box).
// A raw value centred (and scaled) by a mode, rounded to float as the transforms see it.
template <bool Scaled>
__device__ __forceinline__ double centred(float x, float c, double scale)
{
    return Scaled ? double(float((double(x) - double(c)) * scale)) : double(x - c);
}

template <bool Scaled>
__device__ __forceinline__ void plane_sums_step(const float* enter, const float* leave, float c, double scale,
                                                double2 (&z)[2])
{
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        const double e = centred<Scaled>(enter[r], c, scale), l = centred<Scaled>(leave[r], c, scale);
        z[r].x += e - l;
        z[r].y += fma(e, e, -(l * l));
    }
}

}  // namespace slab_detail

// Grid (tiles, chunks), kSlabThreads threads, slab_shared_bytes(Lcc) of dynamic shared memory.
// xtaps: slab_template_spectra.
template <bool Lcc>
__global__ void __launch_bounds__(kSlabThreads, 1) slab_frame(SlabParams sp, const float4* __restrict__ xtaps)
{
    constexpr int kGroups = slab_raw_groups(Lcc);
    constexpr int kPlaneRaw = kSlabFFT * kSlabRawPitch;   // floats per plane's raw tile
    extern __shared__ float4 slab_shared[];
    float* raw = reinterpret_cast<float*>(slab_shared);   // kGroups slots of kSlabGroup planes
    float2* spec = reinterpret_cast<float2*>(reinterpret_cast<char*>(slab_shared) + kGroups * kSlabGroupBytes);
    float* factors = reinterpret_cast<float*>(reinterpret_cast<char*>(spec) + kSlabSpecBytes);   // LCC
    const PlanesParams& g = sp.g;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int ty = blockIdx.x / sp.tiles_x, tx = blockIdx.x - ty * sp.tiles_x;
    const int ox0 = tx * kSlabOut, oy0 = ty * kSlabOut, q0 = blockIdx.y * sp.chunk;
    const int nq = min(sp.chunk, g.O[0] - q0);   // the block's output planes
    const int xi = ox0 - g.P[2], yi = oy0 - g.P[1], zi = q0 - g.P[0];   // the tile's image origin
    const int xa = xi & ~3, shift = xi - xa;
    const float* __restrict__ image = g.frame->image;
    float* out = g.frame->out;
    const bool aligned = (reinterpret_cast<uintptr_t>(image) & 15u) == 0 && (g.S[2] & 3) == 0;
    // Groups `group` .. `group` + N - 1 (N = 2: both of a step, in slots 0 and 1).
    const auto load_groups = [&](int group, auto n) {
        constexpr int N = decltype(n)::value;
        float* slot = raw + (Lcc ? group % kGroups : 0) * kSlabGroup * kPlaneRaw;
        if (aligned)
            slab_detail::copy_planes<4, N * kSlabGroup>(slot, image, g, zi + group * kSlabGroup, yi, xa);
        else
            slab_detail::copy_planes<1, N * kSlabGroup>(slot, image, g, zi + group * kSlabGroup, yi, xa);
        __pipeline_commit();
    };
    using One = std::integral_constant<int, 1>;
    using Two = std::integral_constant<int, 2>;
    if (Lcc) {
        load_groups(0, One{});
        load_groups(1, One{});
    } else {
        load_groups(0, Two{});
    }

    // LCC: the transforms take the image centred (and scaled) by modes[0], the padding at zero.
    const TileMode m0 = Lcc ? g.modes[0] : TileMode{0.f, 1.0, 1, 0.0, 0.0, 0.0};
    const bool centre = m0.c != 0.f || m0.scale != 1;
    const double c0s = Lcc ? double(m0.c) * m0.scale : 0.0;
    unsigned cols_in;   // bit j: tile column j lies inside the image
    {
        const int lo = max(0, -xi), hi = min(kSlabFFT, g.S[2] - xi);
        cols_in = hi <= lo ? 0u : (hi >= 32 ? ~0u : (1u << hi) - 1u) & ~((1u << lo) - 1u);
    }
    // This thread's bin of the template planes' spectra: in registers throughout for
    // convolution, loaded for each step's sums for LCC (the window sums need the registers).
    float4 tap[kSlabMaxT];
    const auto load_taps = [&] {
#pragma unroll
        for (int dz = 0; dz < kSlabMaxT; ++dz) tap[dz] = __ldg(xtaps + dz * kSlabSlots + tid);
    };
    if (!Lcc) load_taps();
    float2 acc[kSlabAcc];    // output planes 16 s - 7 .. 16 s + 15 at step s
#pragma unroll
    for (int a = 0; a < kSlabAcc; ++a) acc[a] = {0.f, 0.f};
    const int T0 = g.T[0], T1 = g.T[1], T2 = g.T[2];
    float2* const bin = spec + (tid >> 5) * kSlabColPitch + lane;   // this thread's bin in plane 0

    // LCC window sums: the factor rule of each mode; the output planes [u0, u1) of the block
    // whose windows all lie inside the image (centred by modes[0]; the others plain); the
    // output rows whose windows lie inside along y; this thread's plane sums (x, x^2) at tile
    // row 2 warp + lane / 16, columns 2 (lane % 16) and the next, in mode `wmode` (plain at
    // first, the planes before the block's zero: the ring's third slot starts zeroed, as the
    // group before the first).
    __shared__ __align__(16) unsigned char wf_bytes[2 * sizeof(WindowFactor)];
    const WindowFactor* wf = reinterpret_cast<const WindowFactor*>(wf_bytes);
    int u0 = 0, u1 = 0;
    unsigned rows_whole = 0;   // bit r: output row oy0 + r's window lies inside along y
    double2 z[2] = {{0, 0}, {0, 0}};
    int wmode = 1;
    float wc = 0.f;     // modes[wmode]'s centre and scale
    double wscale = 1;
    if (Lcc) {
        wc = g.modes[1].c;
        wscale = g.modes[1].scale;
        if (tid < 2) reinterpret_cast<WindowFactor*>(wf_bytes)[tid] = WindowFactor(g.modes[tid], m0, g.n);
        const int hy = min(oy0 + kSlabOut, g.O[1]), hx = min(ox0 + kSlabOut, g.O[2]);
        if (oy0 >= g.P[1] && hy <= g.S[1] - T1 + g.P[1] + 1 && ox0 >= g.P[2] && hx <= g.S[2] - T2 + g.P[2] + 1) {
            u0 = max(0, g.P[0] - q0);
            u1 = min(nq, g.S[0] - T0 + g.P[0] + 1 - q0);
        }
        for (int r = 0; r < kSlabOut; ++r) {
            int lo, hi;
            window_inside(g, 1, oy0 + r, lo, hi);
            rows_whole |= unsigned(lo == 0 && hi == T1) << r;
        }
        float* third = raw + 2 * kSlabGroup * kPlaneRaw;
        for (int i = tid; i < kSlabGroup * kPlaneRaw; i += kSlabThreads) third[i] = 0.f;
    }

    const int steps = (nq + kSlabMaxT - 1 + kSlabPlanes - 1) / kSlabPlanes;
    for (int s = 0; s < steps; ++s) {
        __pipeline_wait_prior(0);
        __syncthreads();   // the step's tiles are in; the previous step's outputs are out
        if (Lcc) {
            // 0. The window sums and factors of output planes u = 16 s - 7 + j, j = 0..15 (the
            // ones warp j stores this step): plane u + T0 - 1 enters the plane sums, u - 1
            // leaves; row sums in two buffers (in the spectra, free until the transforms), one
            // barrier per plane.
            // Planes sit in the ring at (plane mod 24): il the one leaving, ie the one entering.
            constexpr int kRing = kGroups * kSlabGroup;
            int il = (s * kSlabPlanes + kRing - kSlabGroup) % kRing, ie = (il + T0) % kRing;
            const int wy = 2 * warp + (lane >> 4), wx = 2 * (lane & 15);   // this thread's tile row and column
            const float* const col = raw + wy * kSlabRawPitch + shift + wx;
            const auto next = [&](int& i) { i = i + 1 == kRing ? 0 : i + 1; };
            // Output plane u's sums: running, or afresh over planes u .. u + T0 - 1 where the
            // mode changes (once or twice a block).
            const auto plane_sums = [&](int u) {
                const int mode = u >= u0 && u < u1 ? 0 : 1;
                if (mode != wmode) {
                    wmode = mode;
                    wc = g.modes[mode].c;
                    wscale = g.modes[mode].scale;
#pragma unroll
                    for (int r = 0; r < 2; ++r) {
                        z[r] = {0, 0};
                        for (int dz = 0; dz < T0; ++dz) {
                            const float x = col[((il + 1 + dz) % kRing) * kPlaneRaw + r];
                            const double v = wscale != 1 ? slab_detail::centred<true>(x, wc, wscale)
                                                         : slab_detail::centred<false>(x, wc, wscale);
                            z[r].x += v;
                            z[r].y = fma(v, v, z[r].y);
                        }
                    }
                } else if (wscale != 1) {
                    slab_detail::plane_sums_step<true>(col + ie * kPlaneRaw, col + il * kPlaneRaw, wc, wscale, z);
                } else {
                    slab_detail::plane_sums_step<false>(col + ie * kPlaneRaw, col + il * kPlaneRaw, wc, wscale, z);
                }
                next(il);
                next(ie);
                return mode;
            };
            // Two output planes per barrier: row sums in two pairs of buffers (in the spectra,
            // free until the transforms).
            double2* const hbuf = reinterpret_cast<double2*>(spec);
            constexpr int kHPlane = kSlabFFT * kSlabOut;   // double2 per plane's row sums
            for (int jj = 0; jj < kSlabPlanes / 2; ++jj) {
                const int ua = s * kSlabPlanes - (kSlabMaxT - 1) + 2 * jj;
                const int ma = plane_sums(ua);
                double2 hs[4] = {z[0], z[1]};
                const int mb = plane_sums(ua + 1);
                hs[2] = z[0], hs[3] = z[1];
                slab_detail::column_sums(hs[0], hs[1], T2);
                slab_detail::column_sums(hs[2], hs[3], T2);
                double2* const hb = hbuf + (jj & 1) * 2 * kHPlane;
                if (wx < kSlabOut) {
                    double2* const o = hb + wy * kSlabOut + wx;
                    o[0] = hs[0];
                    o[kHPlane] = hs[2];
                    if (wx + 1 < kSlabOut) o[1] = hs[1], o[kHPlane + 1] = hs[3];
                }
                __syncthreads();
                // The leaving group's slot is free now: the next step's first group flies.
                if (jj + 1 == kSlabPlanes / 2 && s + 1 < steps) load_groups(2 * s + 2, One{});
                if (tid < 2 * kSlabWinTasks) {
                    // Output rows y .. y + 2 of column x of plane ua + p: the rows' sums share
                    // rows 2 .. T1 - 1 (a tree, zeros beyond); ends added per row.
                    const int p = tid >= kSlabWinTasks, t = tid - p * kSlabWinTasks;
                    const int run = t / kSlabOut, x = t - run * kSlabOut, y = 3 * run;
                    const double2* h = hb + p * kHPlane + y * kSlabOut + x;
                    double2 v[kSlabMaxT];
#pragma unroll
                    for (int k = 0; k < kSlabMaxT; ++k) v[k] = k < T1 ? h[k * kSlabOut] : double2{0, 0};
                    const double m1 = ((v[2].x + v[3].x) + (v[4].x + v[5].x)) + (v[6].x + v[7].x);
                    const double m2 = ((v[2].y + v[3].y) + (v[4].y + v[5].y)) + (v[6].y + v[7].y);
                    const double a1 = v[1].x + m1, a2 = v[1].y + m2;   // rows 1 .. T1 - 1
                    const WindowFactor& f = wf[p ? mb : ma];
                    float* fo = factors + ((2 * jj + p) * kSlabOut + y) * kSlabOut + x;
                    fo[0] = f(v[0].x + a1, v[0].y + a2);
                    if (y + 1 < kSlabOut) {
                        const double2 e1 = h[T1 * kSlabOut], e2 = h[(T1 + 1) * kSlabOut];
                        const double2 b1 = T1 > 1 ? e1 : double2{0, 0};   // row T1 beyond row 1
                        fo[kSlabOut] = f(a1 + e1.x, a2 + e1.y);
                        fo[2 * kSlabOut] = f((m1 + b1.x) + e2.x, (m2 + b1.y) + e2.y);
                    }
                }
            }
            __syncthreads();   // the row sums are read: the transforms may write the spectra
        }
        // Row transforms: warp = input plane of the step, lane = tile row.
        float2* const plane = spec + warp * kSlabPlaneSpec;
        {
            const int z = zi + s * kSlabPlanes + warp, y = yi + lane;
            float r[kSlabRawPitch], v[kSlabFFT];
            const int slot = Lcc ? (2 * s + (warp >> 3)) % kGroups : warp >> 3;   // convolution: always 0, 1
            const float4* src = reinterpret_cast<const float4*>(raw + (slot * kSlabGroup + (warp & 7)) * kPlaneRaw +
                                                                lane * kSlabRawPitch);
#pragma unroll
            for (int q = 0; q < kSlabRawPitch / 4; ++q) {
                const float4 t = src[q];
                r[4 * q] = t.x, r[4 * q + 1] = t.y, r[4 * q + 2] = t.z, r[4 * q + 3] = t.w;
            }
            switch (shift) {
            case 0: slab_detail::pick_row<0>(r, v); break;
            case 1: slab_detail::pick_row<1>(r, v); break;
            case 2: slab_detail::pick_row<2>(r, v); break;
            default: slab_detail::pick_row<3>(r, v); break;
            }
            if (centre && z >= 0 && z < g.S[0] && y >= 0 && y < g.S[1]) {
                if (m0.scale != 1) {
#pragma unroll
                    for (int j = 0; j < kSlabFFT; ++j)
                        v[j] = cols_in >> j & 1u ? float((double(v[j]) - double(m0.c)) * m0.scale) : 0.f;
                } else {
#pragma unroll
                    for (int j = 0; j < kSlabFFT; ++j) v[j] = cols_in >> j & 1u ? v[j] - m0.c : 0.f;
                }
            }
            float2 w[16];
#pragma unroll
            for (int m = 0; m < 16; ++m) w[m] = {v[2 * m], v[2 * m + 1]};
            fft32::forward_row(w);
#pragma unroll
            for (int c = 0; c < kSlabCols; ++c) plane[c * kSlabColPitch + lane] = w[c];
        }
        __syncwarp();
        // Column transforms of the same plane: lane pair per column, one half each.
        {
            const int c = lane >> 1, h = lane & 1;
            float2* col = plane + c * kSlabColPitch;
            float2 o[16];
            fft32::column_forward_half([&](int y) { return col[y]; }, h, o);
            if (c == 0) fft32::pack_column<true>(o, h);
            __syncwarp();   // both halves have read the column
#pragma unroll
            for (int m = 0; m < 16; ++m) col[2 * m + h] = o[m];
        }
        __syncthreads();
        // The step's raw tiles are read: the next step's (second) group flies now.
        if (s + 1 < steps) {
            if (Lcc)
                load_groups(2 * s + 3, One{});
            else
                load_groups(2 * s + 2, Two{});
        }

        if (Lcc) load_taps();
        // The sums over the template's planes: input plane j of the step meets tap plane dz in
        // output plane 16 s + j - dz, accumulator j - dz + 7; the first 16 are complete after
        // the step, each thread storing its own bin in place of the inputs it read.
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            float2 F[kSlabPlanes / 2];
#pragma unroll
            for (int j = 0; j < kSlabPlanes / 2; ++j) F[j] = bin[(half * kSlabPlanes / 2 + j) * kSlabPlaneSpec];
#pragma unroll
            for (int dz = 0; dz < kSlabMaxT; ++dz) {
                if (dz >= T0) break;
#pragma unroll
                for (int j = 0; j < kSlabPlanes / 2; ++j) {
                    float2& a = acc[half * kSlabPlanes / 2 + j - dz + kSlabMaxT - 1];
                    a.x = fmaf(F[j].x, tap[dz].x, fmaf(F[j].y, tap[dz].y, a.x));
                    a.y = fmaf(F[j].y, tap[dz].z, fmaf(F[j].x, tap[dz].w, a.y));
                }
            }
        }
#pragma unroll
        for (int k = 0; k < kSlabPlanes; ++k) bin[k * kSlabPlaneSpec] = acc[k];
#pragma unroll
        for (int k = 0; k < kSlabAcc; ++k) acc[k] = k < kSlabMaxT - 1 ? acc[k + kSlabPlanes] : float2{0.f, 0.f};
        __syncthreads();

        // Output plane u of the block: warp w takes the w-th completed plane.
        const int u = s * kSlabPlanes - (kSlabMaxT - 1) + warp;
        if (u < 0 || u >= nq) continue;
        {
            const int c = lane >> 1, h = lane & 1;
            float2* col = plane + c * kSlabColPitch;
            float2 w[16];
#pragma unroll
            for (int m = 0; m < 16; ++m) w[m] = col[2 * m + h];
            if (c == 0) fft32::pack_column<false>(w, h);
            fft32::column_inverse_half(w, h);
            __syncwarp();
#pragma unroll
            for (int y = 0; y < 16; ++y) col[16 * h + y] = w[y];
        }
        __syncwarp();
        float v[kSlabFFT];   // output row `lane` (rows 25..31 are overlap-save's discards)
        {
            const int y = lane & 15;
            float2 w[16];
#pragma unroll
            for (int c = 0; c < kSlabCols; ++c) {
                const float2 e = plane[c * kSlabColPitch + y], o = plane[c * kSlabColPitch + 16 + y];
                w[c] = lane < 16 ? fft32::add(e, o) : fft32::sub(e, o);
            }
            fft32::inverse_row(w);
#pragma unroll
            for (int m = 0; m < 16; ++m) v[2 * m] = w[m].x, v[2 * m + 1] = w[m].y;
        }
        __syncwarp();
        float* stage = reinterpret_cast<float*>(plane);   // kSlabOut x kSlabOut (odd pitch: bank-free)
        if (lane < kSlabOut) {
#pragma unroll
            for (int x = 0; x < kSlabOut; ++x) stage[lane * kSlabOut + x] = v[x];
        }
        __syncwarp();
        // Stores along the rows (lane = column).
        const int q = q0 + u, ox = ox0 + lane;
        if (lane >= kSlabOut || ox >= g.O[2]) continue;
        const int rows = min(kSlabOut, g.O[1] - oy0);
        const int64_t e0 = (int64_t(q) * g.O[1] + oy0) * g.O[2] + ox;
        if (!Lcc) {
            for (int r = 0; r < rows; ++r) out[e0 + int64_t(r) * g.O[2]] = stage[r * kSlabOut + lane];
            continue;
        }
        // The padding's share (windows reaching it): the window's extents inside the image
        // along z and x are the warp's and the lane's, along y the row's.
        int lo[3], hi[3];
        window_inside(g, 0, q, lo[0], hi[0]);
        window_inside(g, 2, ox, lo[2], hi[2]);
        const bool zx_whole = lo[0] == 0 && hi[0] == T0 && lo[2] == 0 && hi[2] == T2;
        const unsigned whole = c0s == 0 ? ~0u : zx_whole ? rows_whole : 0u;   // bit r: no share
        // The share for the rows that need it (all where the window reaches the padding along
        // z or x, the first and last ones along y), in place in the stage; then the stores.
        const unsigned all = (1u << rows) - 1u;
        for (unsigned need = ~whole & all; need != 0; need &= need - 1) {
            const int r = __ffs(need) - 1;
            window_inside(g, 1, oy0 + r, lo[1], hi[1]);
            float& num = stage[r * kSlabOut + lane];
            num = float(double(num) - c0s * taps_outside(g, lo, hi));
        }
        // Factors below zero mark windows to recompute (stored as 0 here, listed after).
        const float* f = factors + warp * kSlabOut * kSlabOut + lane;
        bool redo = false;
#pragma unroll 5
        for (int r = 0; r < rows; ++r) {
            const float fr = f[r * kSlabOut];
            redo |= fr < 0.f;
            out[e0 + int64_t(r) * g.O[2]] = fminf(fmaxf(stage[r * kSlabOut + lane] * fmaxf(fr, 0.f), -1.f), 1.f);
        }
        if (redo)
            for (int r = 0; r < rows; ++r)
                if (f[r * kSlabOut] < 0.f) g.redo[atomicAdd(g.redo_count, 1)] = int(e0 + int64_t(r) * g.O[2]);
    }
}

// A device template's spectra and prefix sums, in stream order after prepare_template
// (template_prep.cu), and only when it prepared the taps (*prepared): kSlabTemplateBlocks blocks
// of a quarter plane's slots, a thread per slot, a direct DFT over the plane's taps in double
// from a table of the 32 roots (the host's slab_template_spectra sums the same terms
// separably); the last block the prefix sums taps_outside reads (tap_prefix_sums' values,
// summed along one axis at a time). kSlabTemplateThreads threads.
constexpr int kSlabTemplateThreads = kSlabSlots / 4;
constexpr int kSlabTemplateBlocks = kSlabMaxT * 4 + 1;
__global__ void __launch_bounds__(kSlabTemplateThreads)
    slab_template_device(const float* __restrict__ taps, int tap_row, int T0, int T1, int T2, float4* spectra,
                         double* prefix, const int* prepared)
{
    if (*prepared == 0) return;
    __shared__ double wc[kSlabFFT], ws[kSlabFFT];
    __shared__ float plane[kSlabMaxT * kSlabMaxT];
    __shared__ double q[(kSlabMaxT + 1) * (kSlabMaxT + 1) * (kSlabMaxT + 1)];
    const int tid = threadIdx.x;
    if (blockIdx.x < kSlabTemplateBlocks - 1) {
        const int dz = blockIdx.x / 4, slot = blockIdx.x % 4 * kSlabTemplateThreads + tid;
        if (tid < kSlabFFT) sincospi(tid / 16.0, &ws[tid], &wc[tid]);
        if (dz < T0 && tid < T1 * T2) plane[tid] = taps[(dz * T1 + tid / T2) * tap_row + tid % T2];
        __syncthreads();
        const auto dft = [&](int kx, int ky, double& re, double& im) {
            re = im = 0;
            if (dz >= T0) return;
            for (int dy = 0; dy < T1; ++dy)
                for (int dx = 0; dx < T2; ++dx) {
                    const double t = plane[dy * T2 + dx];
                    const int m = (kx * dx + ky * dy) & (kSlabFFT - 1);
                    re += t * wc[m];
                    im -= t * ws[m];
                }
        };
        float o[4];
        slab_slot_factors(slot / kSlabFFT, slot % kSlabFFT, dft, o);
        spectra[dz * kSlabSlots + slot] = make_float4(o[0], o[1], o[2], o[3]);
        return;
    }
    const int s1 = T2 + 1, s0 = (T1 + 1) * s1, total = (T0 + 1) * s0;
    for (int i = tid; i < total; i += kSlabTemplateThreads) {
        const int a = i / s0, b = i / s1 % (T1 + 1), c = i % s1;
        q[i] = a > 0 && b > 0 && c > 0 ? double(taps[((a - 1) * T1 + b - 1) * tap_row + c - 1]) : 0.0;
    }
    __syncthreads();
    for (int i = tid; i < (T0 + 1) * (T1 + 1); i += kSlabTemplateThreads)   // along the columns
        for (int c = 1; c <= T2; ++c) q[i * s1 + c] += q[i * s1 + c - 1];
    __syncthreads();
    for (int i = tid; i < (T0 + 1) * s1; i += kSlabTemplateThreads) {   // along the rows
        const int base = i / s1 * s0 + i % s1;
        for (int b = 1; b <= T1; ++b) q[base + b * s1] += q[base + (b - 1) * s1];
    }
    __syncthreads();
    for (int i = tid; i < s0; i += kSlabTemplateThreads)   // along the planes
        for (int a = 1; a <= T0; ++a) q[a * s0 + i] += q[(a - 1) * s0 + i];
    __syncthreads();
    for (int i = tid; i < total; i += kSlabTemplateThreads) prefix[i] = q[i];
}

}  // namespace flcc::device
