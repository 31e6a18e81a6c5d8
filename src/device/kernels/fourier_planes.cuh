// Kernels of device.fourier3.planes (src/device/fourier_planes_solver.cu): 3D convolution and
// LCC with one 2D transform per image plane, the sum over the template's planes taken in the
// frequency domain (direct along the planes), and one 2D inverse transform per output plane.
// For an 8^3 template and a 256^3 image the batched 2D transforms cost ~2/3 of the 3D ones of
// the same volume (H100: 151 + 158 us against 222 + 226 us at 270^3), and the sum over 8 planes
// is one pass over the spectra. Per frame:
//   LCC: stats_reset -> image_stats -> plane_modes -> gather_planes -> R2C (batched 2D) ->
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
#pragma once

#include "device/kernels/frame_slot.cuh"
#include "device/kernels/lcc_common.cuh"

#include <cufft.h>

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
    int* redo_count;             // outputs finalise_planes left to recompute_listed
    int* redo;                   // their indices (room for every output)
    int* status;
};

__global__ void stats_reset(PlanesParams g)
{
    *g.stats = merged_stats_init();
    *g.redo_count = 0;
}

// Statistics of the whole image (every image value lies in some window, whatever the region):
// a grid-stride pass merged by atomics, min and max on the ordered-int image of floats.
__global__ void image_stats(PlanesParams g, int64_t count)
{
    __shared__ double scratch[kScratchDoubles];
    const float* __restrict__ image = g.frame->image;
    detail::Stats st{0.0, FLT_MAX, -FLT_MAX, 1, 1, 0};
    const int64_t step = int64_t(gridDim.x) * blockDim.x;
    for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += step) {
        const float v = image[i];
        add_value(st, v);
    }
    const detail::Stats s = detail::block_reduce(st, scratch);
    if (threadIdx.x == 0 && s.count > 0) {
        detail::Stats* d = g.stats;
        merge_stats(d, s);
    }
}

// One thread: the two modes. Both bound the FFT numerator's error by the values transformed
// (centred by modes[0].c), each in its own scale.
__global__ void plane_modes(PlanesParams g)
{
    const detail::Stats s = read_merged(*g.stats);
    if (!s.finite && g.check_finite) *reinterpret_cast<volatile int*>(g.status) = 1;   // host memory
    TileMode centred = decide(s, 0, g.n, g.guard), plain = decide(s, 1, g.n, g.guard);
    const double m = fmax(fabs(double(s.hi) - centred.c), fabs(double(s.lo) - centred.c));
    centred.m2 = (m * centred.scale) * (m * centred.scale);
    plain.m2 = (m * plain.scale) * (m * plain.scale);
    g.modes[0] = centred;
    g.modes[1] = plain;
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
__global__ void template_planes(PlanesParams g, float* box)
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

__global__ void __launch_bounds__(256) plane_sums(PlanesParams g)
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
// A block of kPlanesWarps warps owns 32 output columns (kPlanesRX per warp) and 33 - T1 output
// rows, and marches along a chunk of output planes. Lane r of each warp owns patch row r (32
// rows: the block's output rows and the T1 - 1 below them) and, for its warp's T2 + 3 patch
// columns, the sums over the window's T0 planes of x and x^2 in registers (double): each step
// adds the plane that enters the window and subtracts the one that leaves, both staged in
// shared memory from the image. Then, per row, the horizontal sums of its 4 outputs run in
// registers, and the vertical sums over T1 rows are warp shuffles (lane r gets rows r ..
// r + T1 - 1). O(1) per output and step, all in double; the numerator comes from the inverse
// transforms, staged through shared memory so that loads and stores stay coalesced. Windows
// to recompute are listed for recompute_listed: a call here cost the march its registers
// (spills of the plane sums on every step). Profile on the H100 (256^3 / 8^3, full): 756 us,
// 255 M warp instructions at 11.8 cycles per issue with 16 warps per multiprocessor
// (124 registers): bound by instruction issue and latency, not by memory (~15% of bandwidth).
constexpr int kPlanesWarps = 8, kPlanesRX = 4, kPlanesCols = kPlanesWarps * kPlanesRX;
constexpr int kPlanesMaxT = 16;   // T1 and T2 at most (T2 is compiled in)

inline int planes_rows(int T1) { return 33 - T1; }
inline int planes_pitch(int T2) { return (kPlanesCols + T2 - 1) | 1; }   // odd: no bank conflicts
inline size_t planes_shared_bytes(int T1, int T2)
{
    return (size_t(2) * 32 * planes_pitch(T2) + size_t(planes_rows(T1)) * (kPlanesCols + 1)) * sizeof(float);
}

// The error bound factor of finalise_planes' sums (see fourier_solver.cu's
// fourier_guard_factor for its meaning), for chunks of `chunk` steps: the plane sums (a first
// window of T0 planes, then two roundings of at most (T0 + 2) m per step), T2 of them summed
// and run along kPlanesRX columns, T1 of those summed by the shuffles.
inline double planes_guard_factor(int T0, int T1, int T2, int chunk)
{
    const double t0 = T0, t1 = T1, t2 = T2;
    const double ez = t0 * t0 + chunk * (t0 + 4);
    const double eh = t2 * ez + t0 * ((t2 - 1) * t2 + 2 * kPlanesRX * (t2 + 1));
    return 2 * (t1 * eh + t1 * t1 * t2 * t0);
}

// Sum of the taps over the part of output o's window in the padding (prefix sums, double): the
// transforms saw zeros there, the centred padded image -c.
__device__ __forceinline__ double taps_in_padding(const PlanesParams& g, const int o[3])
{
    int lo[3], hi[3];
    bool whole = true;
    for (int a = 0; a < 3; ++a) {
        lo[a] = max(0, g.P[a] - o[a]);
        hi[a] = min(g.T[a], g.S[a] + g.P[a] - o[a]);
        whole &= lo[a] == 0 && hi[a] == g.T[a];
    }
    if (whole) return 0.0;
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

// v summed over lanes r .. r + T1 - 1 (valid in lanes 0 .. 32 - T1): windows doubled per bit of
// T1, the set bits gathered.
template <int K>
__device__ inline void lane_window_sums(double (&v)[K], int T1)
{
    double acc[K];
#pragma unroll
    for (int k = 0; k < K; ++k) acc[k] = 0;
    int off = 0;
    for (int b = 1; b <= T1; b <<= 1) {
        if (T1 & b) {
#pragma unroll
            for (int k = 0; k < K; ++k) acc[k] += __shfl_down_sync(0xffffffffu, v[k], off);
            off += b;
        }
        if (2 * b > T1) break;
#pragma unroll
        for (int k = 0; k < K; ++k) v[k] += __shfl_down_sync(0xffffffffu, v[k], b);
    }
#pragma unroll
    for (int k = 0; k < K; ++k) v[k] = acc[k];
}

template <int T2>
__global__ void __launch_bounds__(kPlanesWarps * 32, 2) finalise_planes(PlanesParams g, int chunk)
{
    constexpr int W = kPlanesRX + T2 - 1;   // a thread's patch columns
    extern __shared__ float planes_shared[];
    const int T0 = g.T[0], T1 = g.T[1], rows = 33 - T1;
    const int pitch = (kPlanesCols + T2 - 1) | 1, pw = kPlanesCols + T2 - 1;
    float* enter = planes_shared;
    float* leave = enter + 32 * pitch;
    float* tile = leave + 32 * pitch;   // rows x (kPlanesCols + 1): numerators, then outputs
    constexpr int tp = kPlanesCols + 1;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int x0 = blockIdx.x * kPlanesCols, y0 = blockIdx.y * rows, q0 = blockIdx.z * chunk;
    const int q1 = min(q0 + chunk, g.O[0]);

    // Centred only when every window of the block lies inside the image.
    bool inside = true;
    const int lo[3] = {q0, y0, x0}, hi[3] = {q1, min(y0 + rows, g.O[1]), min(x0 + kPlanesCols, g.O[2])};
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

    const float* __restrict__ image = g.frame->image;
    // The thread's staging positions, fixed for the block: patch rows warp + 8k, columns
    // lane + 32c (bit k * kColsPer + c of `real`: inside the image's rows and columns).
    constexpr int kRowsPer = 32 / kPlanesWarps, kColsPer = (kPlanesCols + kPlanesMaxT - 1 + 31) / 32;
    int rowoff[kRowsPer], coloff[kColsPer];
    unsigned real = 0;
#pragma unroll
    for (int k = 0; k < kRowsPer; ++k) {
        const int y = y0 - g.P[1] + warp + kPlanesWarps * k;
        rowoff[k] = y * g.S[2];
#pragma unroll
        for (int cc = 0; cc < kColsPer; ++cc) {
            const int x = x0 - g.P[2] + lane + 32 * cc;
            coloff[cc] = x;
            if (y >= 0 && y < g.S[1] && x >= 0 && x < g.S[2]) real |= 1u << (k * kColsPer + cc);
        }
    }
    const int64_t image_plane = int64_t(g.S[1]) * g.S[2];
    // Stages image plane z (padding outside) of the block's patch into buf.
    const auto stage = [&](float* buf, int z) {
        const unsigned here = z >= 0 && z < g.S[0] ? real : 0u;
        const float* src = image + z * image_plane;
#pragma unroll
        for (int k = 0; k < kRowsPer; ++k)
#pragma unroll
            for (int cc = 0; cc < kColsPer; ++cc) {
                if (lane + 32 * cc >= pw) continue;
                float v = pad;
                if (here >> (k * kColsPer + cc) & 1u) {
                    const float raw = __ldg(src + rowoff[k] + coloff[cc]);
                    v = unscaled ? raw - c : float((double(raw) - double(c)) * scale);
                }
                buf[(warp + kPlanesWarps * k) * pitch + lane + 32 * cc] = v;
            }
    };

    double z1[W], z2[W];
#pragma unroll
    for (int j = 0; j < W; ++j) z1[j] = z2[j] = 0;
    const float* mine_e = enter + lane * pitch + warp * kPlanesRX;
    const float* mine_l = leave + lane * pitch + warp * kPlanesRX;
    for (int dz = 0; dz < T0; ++dz) {   // the first window
        __syncthreads();
        stage(enter, q0 - g.P[0] + dz);
        __syncthreads();
#pragma unroll
        for (int j = 0; j < W; ++j) {
            const double v = mine_e[j];
            z1[j] += v;
            z2[j] = fma(v, v, z2[j]);
        }
    }

    const double n = g.n, inv_n = 1.0 / n, u = 0x1p-53;
    float* __restrict__ out = g.frame->out;
    const int64_t out_plane = int64_t(g.O[1]) * g.O[2];
    for (int q = q0; q < q1; ++q) {
        __syncthreads();   // the previous step's buffers are consumed
        if (q > q0) {
            stage(enter, q - g.P[0] + T0 - 1);
            stage(leave, q - 1 - g.P[0]);
        }
        for (int i = warp; i < rows; i += kPlanesWarps) {   // numerators of plane q
            const int y = y0 + i;
            const float* src = g.num + (int64_t(q) * g.F1 + y) * g.F2 + x0;
            for (int j = lane; j < kPlanesCols; j += 32)
                tile[i * tp + j] = y < g.O[1] && x0 + j < g.O[2] ? src[j] : 0.f;
        }
        __syncthreads();
        if (q > q0) {
#pragma unroll
            for (int j = 0; j < W; ++j) {
                const double e = mine_e[j], l = mine_l[j];
                z1[j] += e - l;
                z2[j] += fma(e, e, -(l * l));
            }
        }
        // Horizontal sums of the thread's kPlanesRX outputs, then the vertical ones (x, then
        // x^2: fewer registers live at once).
        double s1[kPlanesRX], s2[kPlanesRX];
        {
            double h1 = 0, h2 = 0;
#pragma unroll
            for (int j = 0; j < T2; ++j) h1 += z1[j], h2 += z2[j];
            s1[0] = h1;
            s2[0] = h2;
#pragma unroll
            for (int x = 1; x < kPlanesRX; ++x) {
                h1 = (h1 + z1[x + T2 - 1]) - z1[x - 1];
                h2 = (h2 + z2[x + T2 - 1]) - z2[x - 1];
                s1[x] = h1;
                s2[x] = h2;
            }
        }
        lane_window_sums(s1, T1);
        lane_window_sums(s2, T1);
        if (lane < rows && y0 + lane < g.O[1]) {
            float* row = tile + lane * tp + warp * kPlanesRX;
            const int o[3] = {q, y0 + lane, 0};
#pragma unroll
            for (int x = 0; x < kPlanesRX; ++x) {
                                int ox[3] = {o[0], o[1], x0 + warp * kPlanesRX + x};
                const double numd = double(row[x]) * ratio - (inside ? 0.0 : c0s * taps_in_padding(g, ox));
                const double p1 = n * s2[x];
                const double dn = fma(-s1[x], s1[x], p1);
                const double limit = m.exact ? 0.0 : m.tau + 4 * u * p1;
                const float d = dn > limit ? float(dn * inv_n) : 0.f;
                float v = d >= FLT_MIN ? float(numd) * rsqrt_normal(d) : 0.f;
                // As in window_sums_finalise (fourier.cuh): recompute where the transforms'
                // error could matter, and guarded windows of little energy; listed for
                // recompute_listed (a call here would cost the march its registers).
                if (ox[2] < g.O[2] &&
                    ((dn > limit && n * m.m2 > 2.0 * dn) || (dn <= limit && s2[x] > 0 && s2[x] < m.small)))
                    g.redo[atomicAdd(g.redo_count, 1)] = int((int64_t(q) * g.O[1] + ox[1]) * g.O[2] + ox[2]);
                row[x] = fminf(fmaxf(v, -1.f), 1.f);
            }
        }
        __syncthreads();
        for (int i = warp; i < rows; i += kPlanesWarps) {
            const int y = y0 + i;
            if (y >= g.O[1]) break;
            float* dst = out + q * out_plane + int64_t(y) * g.O[2] + x0;
            for (int j = lane; j < kPlanesCols; j += 32)
                if (x0 + j < g.O[2]) dst[j] = tile[i * tp + j];
        }
    }
}

// The outputs finalise_planes listed, recomputed from the image (rare; grid-stride over the
// list, whose length is only known on the device).
__global__ void recompute_listed(PlanesParams g)
{
    const int count = *g.redo_count;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
        const int64_t e = g.redo[i];
        const int64_t plane = int64_t(g.O[1]) * g.O[2];
        const int q = int(e / plane), y = int((e - q * plane) / g.O[2]), x = int(e - q * plane - int64_t(y) * g.O[2]);
        const Window w{{q - g.P[0], y - g.P[1], x - g.P[2]}, {g.S[0], g.S[1], g.S[2]}, {g.T[0], g.T[1], g.T[2]},
                       g.tap_row, g.n, *g.tap_sum};
        g.frame->out[e] = fminf(fmaxf(recomputed(w, g.frame->image, g.taps), -1.f), 1.f);
    }
}

using PlanesKernel = void (*)(PlanesParams, int);
inline PlanesKernel planes_kernel(int T2)
{
    switch (T2) {
    case 1: return finalise_planes<1>;
    case 2: return finalise_planes<2>;
    case 3: return finalise_planes<3>;
    case 4: return finalise_planes<4>;
    case 5: return finalise_planes<5>;
    case 6: return finalise_planes<6>;
    case 7: return finalise_planes<7>;
    case 8: return finalise_planes<8>;
    case 9: return finalise_planes<9>;
    case 10: return finalise_planes<10>;
    case 11: return finalise_planes<11>;
    case 12: return finalise_planes<12>;
    case 13: return finalise_planes<13>;
    case 14: return finalise_planes<14>;
    case 15: return finalise_planes<15>;
    case 16: return finalise_planes<16>;
    default: return nullptr;
    }
}

}  // namespace flcc::device
