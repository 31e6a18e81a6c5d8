// Kernels of device.fourier3.planes (src/device/fourier_planes_solver.cu): 3D convolution and
// LCC with one 2D transform per image plane, the sum over the template's planes taken in the
// frequency domain (direct along the planes), and one 2D inverse transform per output plane.
// Batched 2D transforms of the planes cost less than 3D transforms of the same volume, and the
// sum over the template's planes is one pass over the spectra. Per frame:
//   LCC: image_stats (and the modes) -> gather_planes -> R2C (batched 2D) ->
//        plane_sums -> C2R (batched 2D) -> finalise_planes
//   convolution: gather_planes -> R2C -> plane_sums -> C2R -> crop_planes
//
// The frame parameters, statistics, modes and recompute list are those of fourier3_frame.cuh.
#pragma once

#include "device/kernels/fourier3_frame.cuh"

#include <cufft.h>

#include <algorithm>

namespace flcc::device {

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

}  // namespace flcc::device
