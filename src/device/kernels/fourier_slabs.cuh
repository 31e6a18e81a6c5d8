// The kernel of device.fourier3.slabs (src/device/fourier_slabs_solver.cu): 3D convolution and
// LCC for templates up to 8 x 8 x 8 by 2D transforms of 32 x 32 tiles, the sum over the
// template's planes per frequency bin, and 2D inverse transforms, in one kernel that marches
// along the planes (slab_frame). For LCC it leaves the numerators in the output, and
// slab_window (kernels/slab_window.cuh) finishes them with the window sums.
//
// slab_frame: a block owns one tile of 25 x 25 outputs (overlap-save along x and y: a 32 x 32
// tile of the image) and a chunk of output planes, and takes its input planes 16 at a time
// (a step). Per step:
//   1. the step's raw tiles are there (asynchronous copies issued during the previous step);
//   2. warp w transforms plane w: a lane per tile row (32-point real FFT in registers), then a
//      lane pair per spectrum column (the two halves of a 32-point complex FFT), in place in
//      shared memory, warp-synchronous;
//   3. a thread per frequency bin (512) sums the bins of the step's planes times the template
//      planes' conjugate spectra into running accumulators of the 23 output planes they reach,
//      taps and accumulators in registers (the direct sum along the planes: 8 complex
//      multiply-adds per input bin), and hands over the 16 output planes completed;
//   4. warp w inverts output plane w (column halves, then rows) and stores it (LCC: the
//      numerators, which slab_window finishes).
// Against device.fourier3.rows (one 32-point transform per row, the sum over the template's 64
// (dz, dy) rows per bin: ~160 multiply-adds per output) the 2D transforms leave 8 per bin, and
// the box halo along z is gone (the block marches).
//
// Numerics (LCC) follow rows: one centring constant c (modes[0]) for the transforms with the
// padding at zero (slab_window adds c times the taps over the padding back in double, and takes
// the window sums, guard, modes and recompute rule). The transforms are 2D here (10 stages
// against rows' 5), still short: error ~1e-7 of the tile's RMS.
#pragma once

#include "device/kernels/fft32.h"
#include "device/kernels/fourier3_frame.cuh"
#include "device/kernels/slab_layout.h"
#include "device/kernels/template_taps.cuh"

#include <cuda_pipeline.h>

#include <cstdint>

namespace flcc::device {

constexpr int kSlabPlanes = 16;                          // input planes per step: a warp each
constexpr int kSlabThreads = 32 * kSlabPlanes;           // 512: a thread per frequency bin
constexpr int kSlabAcc = kSlabPlanes + kSlabMaxT - 1;    // output planes one step's inputs reach
constexpr int kSlabRawPitch = 36;                        // floats per raw tile row: nine 16-byte copies
constexpr int kSlabColPitch = kSlabFFT + 1;              // float2 per spectrum column (bank-free)
constexpr int kSlabPlaneSpec = kSlabCols * kSlabColPitch;   // float2 per plane's spectrum
constexpr size_t kSlabRawBytes = size_t(kSlabPlanes) * kSlabFFT * kSlabRawPitch * sizeof(float);
constexpr size_t kSlabSpecBytes = size_t(kSlabPlanes) * kSlabPlaneSpec * sizeof(float2);
constexpr size_t kSlabSharedBytes = kSlabRawBytes + kSlabSpecBytes;   // 138 KB: one block per SM
static_assert(kSlabThreads == kSlabSlots, "a thread per bin");
static_assert(kSlabOut * kSlabOut * sizeof(float) <= kSlabPlaneSpec * sizeof(float2), "outputs staged in a plane");

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

}  // namespace slab_detail

// Grid (tiles, chunks), kSlabThreads threads, kSlabSharedBytes of dynamic shared memory.
// xtaps: slab_template_spectra. LCC: the numerators of the image centred by modes[0] (the
// padding at zero), which slab_window finishes.
template <bool Lcc>
__global__ void __launch_bounds__(kSlabThreads, 1) slab_frame(SlabParams sp, const float4* __restrict__ xtaps)
{
    constexpr int kPlaneRaw = kSlabFFT * kSlabRawPitch;   // floats per plane's raw tile
    extern __shared__ float4 slab_shared[];
    float* raw = reinterpret_cast<float*>(slab_shared);   // the step's raw tiles
    float2* spec = reinterpret_cast<float2*>(reinterpret_cast<char*>(slab_shared) + kSlabRawBytes);
    const PlanesParams& g = sp.g;
    // LCC: slab_window, launched as a dependent (launch_dependent), may put its blocks on the
    // multiprocessors this grid leaves free and sum its first planes while this one runs.
    if (Lcc) cudaTriggerProgrammaticLaunchCompletion();
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int ty = blockIdx.x / sp.tiles_x, tx = blockIdx.x - ty * sp.tiles_x;
    const int ox0 = tx * kSlabOut, oy0 = ty * kSlabOut, q0 = blockIdx.y * sp.chunk;
    const int nq = min(sp.chunk, g.O[0] - q0);   // the block's output planes
    const int xi = ox0 - g.P[2], yi = oy0 - g.P[1], zi = q0 - g.P[0];   // the tile's image origin
    const int xa = xi & ~3, shift = xi - xa;
    const float* __restrict__ image = g.frame->image;
    float* out = g.frame->out;
    const bool aligned = (reinterpret_cast<uintptr_t>(image) & 15u) == 0 && (g.S[2] & 3) == 0;
    // The raw tiles of step s's 16 planes.
    const auto load_step = [&](int s) {
        if (aligned)
            slab_detail::copy_planes<4, kSlabPlanes>(raw, image, g, zi + s * kSlabPlanes, yi, xa);
        else
            slab_detail::copy_planes<1, kSlabPlanes>(raw, image, g, zi + s * kSlabPlanes, yi, xa);
        __pipeline_commit();
    };
    load_step(0);

    // LCC: the transforms take the image centred (and scaled) by modes[0], the padding at zero.
    const TileMode m0 = Lcc ? g.modes[0] : TileMode{0.f, 1.0, 1, 0.0, 0.0, 0.0};
    const bool centre = m0.c != 0.f || m0.scale != 1;
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
        // Row transforms: warp = input plane of the step, lane = tile row.
        float2* const plane = spec + warp * kSlabPlaneSpec;
        {
            const int z = zi + s * kSlabPlanes + warp, y = yi + lane;
            float r[kSlabRawPitch], v[kSlabFFT];
            const float4* src = reinterpret_cast<const float4*>(raw + warp * kPlaneRaw + lane * kSlabRawPitch);
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
        for (int r = 0; r < rows; ++r) out[e0 + int64_t(r) * g.O[2]] = stage[r * kSlabOut + lane];
    }
}

// A device template, prepared on the device in the frame that first uses it: kSlabTemplateBlocks
// blocks of slab_head, beside the statistics blocks (each block prepares the template itself from
// the caller's values, tap_form: 512 values, cheaper than waiting for another kernel). Blocks
// 0 .. kSlabTemplateBlocks - 2 take a quarter plane's slots, a thread per slot, a direct DFT over
// the plane's taps in double from a table of the 32 roots (the host's slab_template_spectra sums
// the same terms separably); the last block writes the taps and their sum (what the recomputed
// windows read) and the prefix sums taps_outside reads (tap_prefix_sums' values, summed along one
// axis at a time). A non-finite template (with the check on) sets the status and changes nothing.
constexpr int kSlabTemplateThreads = kSlabSlots / 4;   // threads with a slot in a DFT block
constexpr int kSlabTemplateBlocks = kSlabMaxT * 4 + 1;

struct SlabTemplateWork {
    const float* user;   // the caller's template (device memory)
    int T0, T1, T2;
    int lcorr, check_finite;
    float4* spectra;     // kSlabMaxT planes of kSlabSlots
    float* taps;         // T0 x T1 rows of tap_row
    int tap_row;
    double* tap_sum;     // then the prefix sums
    int* status;
};

__device__ inline void slab_template_block(const SlabTemplateWork& w, int b)
{
    __shared__ double scratch[kScratchDoubles];
    __shared__ double wc[kSlabFFT], ws[kSlabFFT];
    __shared__ float plane[kSlabMaxT * kSlabMaxT];
    __shared__ double q[(kSlabMaxT + 1) * (kSlabMaxT + 1) * (kSlabMaxT + 1)];
    const int tid = threadIdx.x, threads = blockDim.x;
    const int T0 = w.T0, T1 = w.T1, T2 = w.T2;
    const int64_t n = int64_t(T0) * T1 * T2;
    const bool lcorr = w.lcorr != 0;
    const TapForm form = tap_form(w.user, n, lcorr, scratch);
    if (!form.finite && w.check_finite) {
        if (b == kSlabTemplateBlocks - 1 && tid == 0) *reinterpret_cast<volatile int*>(w.status) = 1;
        return;
    }
    if (b < kSlabTemplateBlocks - 1) {
        const int dz = b / 4, slot = b % 4 * kSlabTemplateThreads + tid;
        if (tid < kSlabFFT) sincospi(tid / 16.0, &ws[tid], &wc[tid]);
        if (dz < T0 && tid < T1 * T2) plane[tid] = tap_value(w.user, n, int64_t(dz) * T1 * T2 + tid, lcorr, form);
        __syncthreads();
        if (tid >= kSlabTemplateThreads) return;
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
        w.spectra[dz * kSlabSlots + slot] = make_float4(o[0], o[1], o[2], o[3]);
        return;
    }
    const int s1 = T2 + 1, s0 = (T1 + 1) * s1, total = (T0 + 1) * s0;
    double part = 0;
    for (int k = tid; k < T0 * T1 * w.tap_row; k += threads) {
        const int r = k / w.tap_row, c = k % w.tap_row;
        const float v = c < T2 ? tap_value(w.user, n, int64_t(r) * T2 + c, lcorr, form) : 0.f;
        w.taps[k] = v;
        part += v;
    }
    for (int i = tid; i < total; i += threads) {
        const int a = i / s0, bb = i / s1 % (T1 + 1), c = i % s1;
        q[i] = a > 0 && bb > 0 && c > 0 ? double(tap_value(w.user, n, (int64_t(a - 1) * T1 + bb - 1) * T2 + c - 1, lcorr, form))
                                        : 0.0;
    }
    const double sum = block_sum(part, scratch);   // (its barriers order q's writes too)
    if (tid == 0) *w.tap_sum = sum;
    for (int i = tid; i < (T0 + 1) * (T1 + 1); i += threads)   // along the columns
        for (int c = 1; c <= T2; ++c) q[i * s1 + c] += q[i * s1 + c - 1];
    __syncthreads();
    for (int i = tid; i < (T0 + 1) * s1; i += threads) {   // along the rows
        const int base = i / s1 * s0 + i % s1;
        for (int r = 1; r <= T1; ++r) q[base + r * s1] += q[base + (r - 1) * s1];
    }
    __syncthreads();
    for (int i = tid; i < s0; i += threads)   // along the planes
        for (int a = 1; a <= T0; ++a) q[a * s0 + i] += q[(a - 1) * s0 + i];
    __syncthreads();
    for (int i = tid; i < total; i += threads) w.tap_sum[1 + i] = q[i];
}

// The first kernel of a slabs frame, before its graph: block 0 sets the frame slot; with a device
// template new to the plan, kSlabTemplateBlocks blocks prepare it (first, so that they start at
// once); LCC, then stats_blocks blocks of image statistics (finishing the modes). One launch
// for the frame slot, the template and the statistics, and the template work overlaps the
// statistics.
__global__ void __launch_bounds__(kStatsThreads)
    slab_head(PlanesParams g, int64_t count, int stats_blocks, int template_blocks, FrameSlot* slot,
              const float* image, float* out, SlabTemplateWork w)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) *slot = FrameSlot{image, out};
    const int b = int(blockIdx.x);
    if (b < template_blocks)
        slab_template_block(w, b);
    else if (b - template_blocks < stats_blocks)
        image_statistics(g, count, b - template_blocks, stats_blocks, image);
}

}  // namespace flcc::device
