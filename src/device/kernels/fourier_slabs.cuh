// The kernels of device.fourier3.slabs (src/device/fourier_slabs_solver.cu): 3D convolution and
// LCC for templates up to 8 x 8 x 8 by 2D transforms of 32 x 32 tiles, the sum over the
// template's planes per frequency bin, and 2D inverse transforms, in one kernel that marches
// along the planes (slab_frame); for LCC a window-sum kernel runs before it (slab_factors) and
// parks each output's factor in the output array, as device.fourier3.rows does.
//
// slab_frame: a block owns one tile of 25 x 25 outputs (overlap-save along x and y: a 32 x 32
// tile of the image) and a chunk of output planes, and takes its input planes 16 at a time
// (a step). Per step:
//   1. the 16 planes' tiles arrive by asynchronous copies (issued during the previous step);
//   2. warp w transforms plane w: a lane per tile row (32-point real FFT in registers), then a
//      lane pair per spectrum column (the two halves of a 32-point complex FFT), in place in
//      shared memory, warp-synchronous;
//   3. a thread per frequency bin (512) sums the bins of the step's planes times the template
//      planes' conjugate spectra into running accumulators of the 23 output planes they reach,
//      taps and accumulators in registers (the direct sum along the planes: 8 complex
//      multiply-adds per input bin), and hands over the 16 output planes completed;
//   4. warp w inverts output plane w (column halves, then rows) and stores its coefficients.
// Against device.fourier3.rows (one 32-point transform per row, the sum over the template's 64
// (dz, dy) rows per bin: ~160 multiply-adds per output) the 2D transforms leave 8 per bin; the
// box halo along z is gone (the block marches), and the window sums leave the kernel for a
// pass of their own that marches too.
//
// Numerics (LCC) follow rows: one centring constant c (modes[0]) for the transforms with the
// padding at zero and c times the taps over the padding added back in double, window sums in
// double centred by c where every window of a block lies inside the image and uncentred
// elsewhere, the same guard, modes, recompute rule and list. The transforms are 2D here
// (10 stages against rows' 5), still short: error ~1e-7 of the tile's RMS.
#pragma once

#include "device/kernels/fft32.h"
#include "device/kernels/fourier_planes.cuh"
#include "device/kernels/slab_layout.h"

#include <cuda_pipeline.h>

#include <cstdint>
#include <type_traits>

namespace flcc::device {

constexpr int kSlabPlanes = 16;                          // input planes per step: a warp each
constexpr int kSlabThreads = 32 * kSlabPlanes;           // 512: a thread per frequency bin
constexpr int kSlabAcc = kSlabPlanes + kSlabMaxT - 1;    // output planes one step's inputs reach
constexpr int kSlabRawPitch = 36;                        // floats per raw tile row: nine 16-byte copies
constexpr int kSlabColPitch = kSlabFFT + 1;              // float2 per spectrum column (bank-free)
constexpr int kSlabPlaneSpec = kSlabCols * kSlabColPitch;   // float2 per plane's spectrum
constexpr size_t kSlabRawBytes = size_t(kSlabPlanes) * kSlabFFT * kSlabRawPitch * sizeof(float);
constexpr size_t kSlabSpecBytes = size_t(kSlabPlanes) * kSlabPlaneSpec * sizeof(float2);
// LCC: the factors of the step's completed output planes, copied in while the step computes.
constexpr size_t kSlabFactorBytes = size_t(kSlabPlanes) * kSlabOut * kSlabOut * sizeof(float);
constexpr size_t kSlabSharedBytes = kSlabRawBytes + kSlabSpecBytes + kSlabFactorBytes;   // 177 KB: one block per SM
static_assert(kSlabThreads == kSlabSlots, "a thread per bin");
static_assert(kSlabOut * kSlabOut * sizeof(float) <= kSlabPlaneSpec * sizeof(float2), "outputs staged in a plane");

// The window sums' blocks: 32 x 32 outputs, marching along chunks of 32 output planes; each
// thread owns kWinOwned positions of the patch (39 x 39 at most) and, at the end, a run of
// kWinRunY rows of one output column.
constexpr int kWinX = 32, kWinY = 32, kWinThreads = 256, kWinChunk = 32, kWinRunX = 8, kWinRunY = 4;
constexpr int kWinPatch = (kWinX + kSlabMaxT - 1) * (kWinY + kSlabMaxT - 1);   // 1521 at most
constexpr int kWinOwned = (kWinPatch + kWinThreads - 1) / kWinThreads;
constexpr int kWinHRows = kWinY + kSlabMaxT - 1;   // patch rows of the horizontal sums
constexpr size_t kWinSharedBytes = size_t(2) * (kWinPatch + kWinHRows * kWinX) * sizeof(double2);   // 88 KB
static_assert(kWinX == 32 && kWinX * (kWinY / kWinRunY) == kWinThreads, "a vertical task per thread");
static_assert(kWinX % kWinRunX == 0 && kWinY % kWinRunY == 0, "whole runs");
static_assert(kWinHRows * (kWinX / kWinRunX) <= kWinThreads, "a horizontal task per thread at most");

// The error bound factor of slab_factors' sums (planes_guard_factor's terms): running sums
// along chunks of kWinChunk planes, runs of kWinRunX columns and kWinRunY rows.
inline double slab_guard_factor(int T0, int T1, int T2)
{
    return planes_guard_factor(T0, T1, T2, kWinChunk, kWinRunX, kWinRunY);
}

struct SlabParams {
    PlanesParams g;
    int tiles_x;   // tiles along x; grid.x = tiles_x * tiles along y
    int chunk;     // output planes per block; grid.y = chunks
};

namespace slab_detail {

// The step's raw tiles (16 planes x 32 rows x 36 values from column xa, a multiple of 4),
// zero outside the image, by asynchronous copies of W floats (16-byte copies when the image
// rows are 16-byte aligned, else 4-byte ones).
template <int W>
__device__ __forceinline__ void copy_planes(float* raw, const float* __restrict__ image, const PlanesParams& g, int z0,
                                            int y0, int xa)
{
    constexpr int kPerRow = kSlabRawPitch / W, kPerPlane = kSlabFFT * kPerRow;
    static_assert(kSlabPlanes * kPerPlane % kSlabThreads == 0, "whole rounds");
#pragma unroll 9
    for (int j = 0; j < kSlabPlanes * kPerPlane / kSlabThreads; ++j) {
        const int i = threadIdx.x + j * kSlabThreads, p = i / kPerPlane, rem = i - p * kPerPlane;
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

}  // namespace slab_detail

// Grid (tiles, chunks), kSlabThreads threads, kSlabSharedBytes of dynamic shared memory.
// xtaps: slab_template_spectra. LCC: the factors are in the output (slab_factors).
__global__ void __launch_bounds__(kSlabThreads, 1) slab_frame(SlabParams sp, const float4* __restrict__ xtaps)
{
    extern __shared__ float4 slab_shared[];
    float* raw = reinterpret_cast<float*>(slab_shared);
    float2* spec = reinterpret_cast<float2*>(reinterpret_cast<char*>(slab_shared) + kSlabRawBytes);
    float* factors = reinterpret_cast<float*>(reinterpret_cast<char*>(slab_shared) + kSlabRawBytes + kSlabSpecBytes);
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
    const auto load_step = [&](int s) {
        if (aligned)
            slab_detail::copy_planes<4>(raw, image, g, zi + s * kSlabPlanes, yi, xa);
        else
            slab_detail::copy_planes<1>(raw, image, g, zi + s * kSlabPlanes, yi, xa);
        __pipeline_commit();
    };
    load_step(0);

    // LCC: the transforms take the image centred (and scaled) by modes[0], the padding at zero.
    const TileMode m0 = g.lcorr ? g.modes[0] : TileMode{0.f, 1.0, 1, 0.0, 0.0, 0.0};
    const bool centre = m0.c != 0.f || m0.scale != 1;
    const double c0s = g.lcorr ? double(m0.c) * m0.scale : 0.0;
    unsigned cols_in;   // bit j: tile column j lies inside the image
    {
        const int lo = max(0, -xi), hi = min(kSlabFFT, g.S[2] - xi);
        cols_in = hi <= lo ? 0u : (hi >= 32 ? ~0u : (1u << hi) - 1u) & ~((1u << lo) - 1u);
    }
    float4 tap[kSlabMaxT];   // this thread's bin of the template planes' spectra
#pragma unroll
    for (int dz = 0; dz < kSlabMaxT; ++dz) tap[dz] = __ldg(xtaps + dz * kSlabSlots + tid);
    float2 acc[kSlabAcc];    // output planes 16 s - 7 .. 16 s + 15 at step s
#pragma unroll
    for (int a = 0; a < kSlabAcc; ++a) acc[a] = {0.f, 0.f};
    const int T0 = g.T[0];
    float2* const bin = spec + (tid >> 5) * kSlabColPitch + lane;   // this thread's bin in plane 0

    const int steps = (nq + kSlabMaxT - 1 + kSlabPlanes - 1) / kSlabPlanes;
    for (int s = 0; s < steps; ++s) {
        __pipeline_wait_prior(0);
        __syncthreads();   // the step's tiles are in; the previous step's outputs are out
        if (g.lcorr) {
            // The factors slab_factors left for the output plane this warp completes this step
            // (16 s - 7 + warp): in flight during the transforms and sums, read from shared
            // memory by the output stores (loads there would stall every warp at the next
            // barrier). Lanes along the rows: coalesced.
            const int u = s * kSlabPlanes - (kSlabMaxT - 1) + warp, ox = ox0 + lane;
            if (u >= 0 && u < nq && lane < kSlabOut && ox < g.O[2]) {
                const float* src = out + (int64_t(q0 + u) * g.O[1] + oy0) * g.O[2] + ox;
                float* dst = factors + warp * kSlabOut * kSlabOut + lane;
                const int rows = min(kSlabOut, g.O[1] - oy0);
                for (int r = 0; r < rows; ++r)
                    __pipeline_memcpy_async(dst + r * kSlabOut, src + int64_t(r) * g.O[2], sizeof(float));
            }
            __pipeline_commit();
        }
        // Row transforms: warp = input plane of the step, lane = tile row.
        float2* const plane = spec + warp * kSlabPlaneSpec;
        {
            const int z = zi + s * kSlabPlanes + warp, y = yi + lane;
            float r[kSlabRawPitch], v[kSlabFFT];
            const float4* src = reinterpret_cast<const float4*>(raw + (warp * kSlabFFT + lane) * kSlabRawPitch);
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
        if (s + 1 < steps) load_step(s + 1);   // the raw tiles are read: the next step's copies fly now

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
        if (g.lcorr) __pipeline_wait_prior(s + 1 < steps ? 1 : 0);   // the factors (the next tiles may fly on)
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
        if (!g.lcorr) {
            for (int r = 0; r < rows; ++r) out[e0 + int64_t(r) * g.O[2]] = stage[r * kSlabOut + lane];
            continue;
        }
        // The padding's share (windows reaching it): the window's extents inside the image
        // along z and x are the warp's and the lane's, along y the row's.
        int lo[3], hi[3];
        window_inside(g, 0, q, lo[0], hi[0]);
        window_inside(g, 2, ox, lo[2], hi[2]);
        const bool zx_whole = lo[0] == 0 && hi[0] == T0 && lo[2] == 0 && hi[2] == g.T[2];
        const float* f = factors + warp * kSlabOut * kSlabOut + lane;
        for (int r = 0; r < rows; ++r) {
            float num = stage[r * kSlabOut + lane];
            if (c0s != 0) {
                window_inside(g, 1, oy0 + r, lo[1], hi[1]);
                if (!zx_whole || lo[1] != 0 || hi[1] != g.T[1]) num = float(double(num) - c0s * taps_outside(g, lo, hi));
            }
            const int64_t e = e0 + int64_t(r) * g.O[2];
            float fr = f[r * kSlabOut];
            if (fr < 0.f) {
                g.redo[atomicAdd(g.redo_count, 1)] = int(e);
                fr = 0.f;
            }
            out[e] = fminf(fmaxf(num * fr, -1.f), 1.f);
        }
    }
}

// LCC window sums and factors: block of kWinY x kWinX outputs marching along a chunk of
// kWinChunk output planes; grid (x blocks, y blocks, chunks), kWinSharedBytes of dynamic shared
// memory. Per output plane, in double:
//   1. each thread owns patch positions tid, tid + 256, .. of the (kWinY + T1 - 1) x
//      (kWinX + T2 - 1) patch and keeps the sums over the window's planes of x and x^2 (the
//      plane that enters added, the one that leaves subtracted; their raw values loaded a plane
//      ahead);
//   2. per patch row and run of kWinRunX output columns the sums over T2 columns (running);
//   3. per output column and run of kWinRunY rows the sums over T1 rows (running), then each
//      output's WindowFactor, which waits in the output for slab_frame.
// Two buffers of each stage: two barriers per plane.
__global__ void __launch_bounds__(kWinThreads, 2) slab_factors(PlanesParams g)
{
    extern __shared__ double2 win_shared[];
    double2* const zsum = win_shared;                    // [2][kWinPatch]
    double2* const hsum = win_shared + 2 * kWinPatch;    // [2][kWinHRows][kWinX]
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int T0 = g.T[0], T1 = g.T[1], T2 = g.T[2];
    const int pw = kWinX + T2 - 1, ph = kWinY + T1 - 1, patch = pw * ph;
    const int x0 = blockIdx.x * kWinX, y0 = blockIdx.y * kWinY, q0 = blockIdx.z * kWinChunk;
    const int nq = min(kWinChunk, g.O[0] - q0);

    // Centred by modes[0] when every real output's window lies inside the image, else modes[1].
    bool inside = true;
    {
        const int lo[3] = {q0, y0, x0};
        const int hi[3] = {q0 + nq, min(y0 + kWinY, g.O[1]), min(x0 + kWinX, g.O[2])};
        for (int a = 0; a < 3; ++a) inside &= lo[a] >= g.P[a] && hi[a] <= g.S[a] - g.T[a] + g.P[a] + 1;
    }
    const TileMode m = g.modes[inside ? 0 : 1];
    const WindowFactor factor_of(m, g.modes[0], g.n);
    const bool scaled = m.scale != 1;

    const float* __restrict__ image = g.frame->image;
    const int64_t image_plane = int64_t(g.S[1]) * g.S[2];
    int off[kWinOwned];   // the owned positions' offsets in an image plane
    unsigned own = 0;     // bit j: position j is in the patch and inside the image along x and y
#pragma unroll
    for (int j = 0; j < kWinOwned; ++j) {
        const int i = tid + j * kWinThreads, r = i / pw, col = i - r * pw;
        const int y = y0 - g.P[1] + r, x = x0 - g.P[2] + col;
        const bool ok = i < patch && y >= 0 && y < g.S[1] && x >= 0 && x < g.S[2];
        off[j] = ok ? y * g.S[2] + x : 0;
        own |= unsigned(ok) << j;
    }
    // The raw values of plane z at the owned positions (zero outside the image), and a raw
    // value centred as rows_frame centres its box.
    const auto load = [&](int z, float (&v)[kWinOwned]) {
        const bool in = z >= 0 && z < g.S[0];
        const float* plane = image + (in ? z : 0) * image_plane;
#pragma unroll
        for (int j = 0; j < kWinOwned; ++j) v[j] = in && (own >> j & 1u) ? __ldg(plane + off[j]) : 0.f;
    };
    const auto centred = [&](float raw, int j, bool in) -> double {
        const float v = scaled ? float((double(raw) - double(m.c)) * m.scale) : raw - m.c;
        return in && (own >> j & 1u) ? double(v) : 0.0;
    };
    const int zw = q0 - g.P[0];   // the first window's first plane
    const auto in_image = [&](int z) { return z >= 0 && z < g.S[0]; };
    double z1[kWinOwned], z2[kWinOwned];
#pragma unroll
    for (int j = 0; j < kWinOwned; ++j) z1[j] = z2[j] = 0;
    for (int a = 0; a < T0; ++a) {
        float v[kWinOwned];
        load(zw + a, v);
#pragma unroll
        for (int j = 0; j < kWinOwned; ++j) {
            const double c = centred(v[j], j, in_image(zw + a));
            z1[j] += c;
            z2[j] = fma(c, c, z2[j]);
        }
    }
    float enter[kWinOwned], leave[kWinOwned];   // plane u + 1's
    if (nq > 1) {
        load(zw + T0, enter);
        load(zw, leave);
    }

    const int hrun = tid / ph, hrow = tid - hrun * ph;   // the horizontal task (rows fastest: bank-free)
    const int ox = x0 + lane, vrow = warp * kWinRunY;    // the vertical task
    for (int u = 0; u < nq; ++u) {
        if (u > 0) {
            const bool ein = in_image(zw + u + T0 - 1), lin = in_image(zw + u - 1);
#pragma unroll
            for (int j = 0; j < kWinOwned; ++j) {
                const double e = centred(enter[j], j, ein), l = centred(leave[j], j, lin);
                z1[j] += e - l;
                z2[j] += fma(e, e, -(l * l));
            }
            if (u + 1 < nq) {
                load(zw + u + T0, enter);
                load(zw + u, leave);
            }
        }
        double2* zb = zsum + (u & 1) * kWinPatch;
#pragma unroll
        for (int j = 0; j < kWinOwned; ++j)
            if (tid + j * kWinThreads < patch) zb[tid + j * kWinThreads] = {z1[j], z2[j]};
        __syncthreads();
        double2* hb = hsum + (u & 1) * kWinHRows * kWinX;
        if (hrun < kWinX / kWinRunX) {
            const double2* src = zb + hrow * pw + hrun * kWinRunX;
            double2* dst = hb + hrow * kWinX + hrun * kWinRunX;
            double a1 = 0, a2 = 0;
#pragma unroll
            for (int j = 0; j < kSlabMaxT; ++j)
                if (j < T2) a1 += src[j].x, a2 += src[j].y;
            dst[0] = {a1, a2};
#pragma unroll
            for (int x = 1; x < kWinRunX; ++x) {
                a1 = (a1 + src[x + T2 - 1].x) - src[x - 1].x;
                a2 = (a2 + src[x + T2 - 1].y) - src[x - 1].y;
                dst[x] = {a1, a2};
            }
        }
        __syncthreads();
        if (ox < g.O[2]) {
            const double2* src = hb + vrow * kWinX + lane;
            double s1 = 0, s2 = 0;
#pragma unroll
            for (int i = 0; i < kSlabMaxT; ++i)
                if (i < T1) s1 += src[i * kWinX].x, s2 += src[i * kWinX].y;
            float* o = g.frame->out + (int64_t(q0 + u) * g.O[1] + y0 + vrow) * g.O[2] + ox;
#pragma unroll
            for (int i = 0; i < kWinRunY; ++i) {
                if (i > 0) {
                    s1 = (s1 + src[(i + T1 - 1) * kWinX].x) - src[(i - 1) * kWinX].x;
                    s2 = (s2 + src[(i + T1 - 1) * kWinX].y) - src[(i - 1) * kWinX].y;
                }
                if (y0 + vrow + i < g.O[1]) o[int64_t(i) * g.O[2]] = factor_of(s1, s2);
            }
        }
    }
}

}  // namespace flcc::device
