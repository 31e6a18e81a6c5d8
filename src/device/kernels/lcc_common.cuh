// Block-level pieces shared by the GPU tile kernels (the direct kernel and the Fourier
// finalisation): statistics of a tile and their reduction, the tile of a block, the window sums
// of one output plane, and the LCC finalisation with its recomputed windows. The numerics
// follow the host's (src/host/kernels/window_sums.h).
#pragma once

#include "device/kernels/tile_params.h"

#include <cfloat>
#include <cstdint>

namespace flcc::device {

namespace detail {

struct Stats {
    double sum;
    float lo, hi;
    int integral, finite, count;
};

// Every lane gets the warp's statistics (a butterfly: lane 0's sums add in the same order as a
// reduction down to lane 0; other lanes' may round differently). Whole warps only.
__device__ inline Stats warp_reduce(Stats s)
{
#if __CUDA_ARCH__ >= 800
    // One warp-wide reduction instruction per integer field instead of five shuffle steps.
    s.integral = int(__reduce_and_sync(0xffffffffu, unsigned(s.integral)));
    s.finite = int(__reduce_and_sync(0xffffffffu, unsigned(s.finite)));
    s.count = int(__reduce_add_sync(0xffffffffu, unsigned(s.count)));
#endif
    for (int d = 16; d > 0; d >>= 1) {
        s.sum += __shfl_xor_sync(0xffffffffu, s.sum, d);
        s.lo = fminf(s.lo, __shfl_xor_sync(0xffffffffu, s.lo, d));
        s.hi = fmaxf(s.hi, __shfl_xor_sync(0xffffffffu, s.hi, d));
#if __CUDA_ARCH__ < 800
        s.integral &= __shfl_xor_sync(0xffffffffu, s.integral, d);
        s.finite &= __shfl_xor_sync(0xffffffffu, s.finite, d);
        s.count += __shfl_xor_sync(0xffffffffu, s.count, d);
#endif
    }
    return s;
}

// Block-wide reduction of Stats; every thread gets the result. `scratch` holds kScratchDoubles.
__device__ inline Stats block_reduce(Stats s, double* scratch)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = (blockDim.x + 31) >> 5;
    s = warp_reduce(s);
    __syncthreads();
    if (lane == 0) {
        scratch[warp * 6 + 0] = s.sum;
        scratch[warp * 6 + 1] = s.lo;
        scratch[warp * 6 + 2] = s.hi;
        scratch[warp * 6 + 3] = s.integral;
        scratch[warp * 6 + 4] = s.finite;
        scratch[warp * 6 + 5] = s.count;
    }
    __syncthreads();
    Stats r{0.0, FLT_MAX, -FLT_MAX, 1, 1, 0};
    for (int w = 0; w < warps; ++w) {
        r.sum += scratch[w * 6 + 0];
        r.lo = fminf(r.lo, float(scratch[w * 6 + 1]));
        r.hi = fmaxf(r.hi, float(scratch[w * 6 + 2]));
        r.integral &= int(scratch[w * 6 + 3]);
        r.finite &= int(scratch[w * 6 + 4]);
        r.count += int(scratch[w * 6 + 5]);
    }
    return r;
}

// The tile of block b: its rectangle, origin and real extent.
struct TileOf {
    int origin[3], real[3], boundary;
};

__device__ inline TileOf locate(const TileParams& p, int b, int otz, int oty, int otx)
{
    int ri = 0;
    while (ri + 1 < p.nrects && b >= p.rects[ri + 1].first_block) ++ri;
    const ZoneRect& R = p.rects[ri];
    const int local = b - R.first_block, rest = local / R.blocks[2];   // two run-time divisions
    const int t[3] = {rest / R.blocks[1], rest - rest / R.blocks[1] * R.blocks[1], local - rest * R.blocks[2]};
    const int ot[3] = {otz, oty, otx};
    TileOf tile;
    for (int a = 0; a < 3; ++a) {
        tile.origin[a] = R.origin[a] + t[a] * ot[a];
        tile.real[a] = min(ot[a], R.origin[a] + R.size[a] - tile.origin[a]);
    }
    tile.boundary = R.boundary;
    return tile;
}

}  // namespace detail

// Windows whose float numerator or tile-wide guard cannot be trusted (see the host's
// window_sums.h: kappa > 32, or energy far below the tile's) are recomputed from the original
// image values around their own mean, in double. Rare; O(n) each.
struct Window {
    int box[3];   // image coordinates of the window's first element (may be padding)
    int S[3];     // image extent
    int T[3];     // template extent
    int tap_row;
    double n;
    double tap_sum;   // sum of the taps in double (0 but for rounding)
};

// The recomputation, inlined where it is called: the batch finalisations (batch_kernels.cuh)
// and the 2D tiles' (fourier.cuh) call it inside loops over their outputs, and a call there
// makes ptxas keep the loops' values on the stack across it, reloaded in every trip.
__device__ __forceinline__ float recomputed_inline(const Window& w, const float* image, const float* taps)
{
    // Only the part of the window inside the image is visited: the padding contributes
    // analytically (its values are 0, its taps sum to tap_sum minus those visited), so windows
    // that are mostly padding cost what their real values cost.
    int lo[3], hi[3];
    for (int a = 0; a < 3; ++a) {
        lo[a] = max(0, -w.box[a]);
        hi[a] = min(w.T[a], w.S[a] - w.box[a]);
        if (hi[a] <= lo[a]) return 0.f;   // all padding: constant
    }
    double sum = 0, count = 0;
    for (int a = lo[0]; a < hi[0]; ++a)
        for (int i = lo[1]; i < hi[1]; ++i) {
            const float* row = image + (int64_t(w.box[0] + a) * w.S[1] + w.box[1] + i) * w.S[2] + w.box[2];
            for (int j = lo[2]; j < hi[2]; ++j) sum += row[j];
            count += hi[2] - lo[2];
        }
    const double mean = sum / w.n, pad = w.n - count;
    double num = 0, d = 0, off = 0, treal = 0;
    for (int a = lo[0]; a < hi[0]; ++a)
        for (int i = lo[1]; i < hi[1]; ++i) {
            const float* row = image + (int64_t(w.box[0] + a) * w.S[1] + w.box[1] + i) * w.S[2] + w.box[2];
            const float* t = taps + (a * w.T[1] + i) * w.tap_row;
            for (int j = lo[2]; j < hi[2]; ++j) {
                const double v = double(row[j]) - mean;
                num += v * t[j];
                d += v * v;
                off += v;
                treal += t[j];
            }
        }
    num -= mean * (w.tap_sum - treal);   // the padding's (0 - mean) * t
    d += pad * mean * mean;
    off -= pad * mean;
    d -= off * off / w.n;         // the rounding of the mean
    return d > 0 ? float(num / sqrt(d)) : 0.f;
}

// The recomputation as a call, for the kernels that recompute after their loops over outputs
// (the direct tiles) or in a kernel of their own (the 3D tiles). Arguments by value: a
// reference to the kernel's parameters would copy them all to local memory.
static __device__ __noinline__ float recomputed(const Window w, const float* image, const float* taps)
{
    return recomputed_inline(w, image, taps);
}

// Decisions of one tile for LCC: the centring constant, the scale, exact or guarded mode, the
// guard tau and the energy below which guarded windows are recomputed.
struct TileMode {
    float c;
    double scale;
    int exact;
    double tau, small;
    double m2;   // the tile's largest squared magnitude after centring
};

__device__ inline TileMode decide(const detail::Stats& s, int boundary, double n, double guard)
{
    TileMode t;
    double c = (boundary || s.count == 0) ? 0.0 : s.sum / s.count;
    if (!isfinite(c)) c = 0;
    if (s.integral && fabs(c) < 0x1p30) c = rint(c);
    t.c = float(c);
    double m = fmax(fabs(double(s.hi) - t.c), fabs(double(s.lo) - t.c));
    t.scale = 1;
    if (m > 0x1p40 || (m > 0 && m < 0x1p-40)) {
        t.scale = ldexp(1.0, -ilogb(m));
        m *= t.scale;
    }
    t.exact = s.integral && double(t.c) == rint(double(t.c)) && t.scale == 1 && m < 0x1p24 &&
              (n + 1) * m * m <= 0x1p52 && n * m <= 0x1p26;
    t.tau = t.small = 0;
    t.m2 = m * m;
    if (!t.exact) {
        const double u = 0x1p-53;
        t.tau = (3.5 * n * guard * u + guard * guard * u * u) * m * m;
        t.small = 1e-6 * n * m * m;
    }
    return t;
}

// Horizontal running sums over T2 columns of the window-sum source rows (x and x^2 from the
// centred box `x`, or the plane sums z1/z2 in 3D) into h1/h2 (rows x otx doubles), for the
// rows and columns real outputs need; tasks of 8 columns over the block's threads.
__device__ inline void horizontal_sums(const float* x, const double* z1, const double* z2, bool planes,
                                       int xs, int rows, int cols, int T2, int otx, double* h1, double* h2)
{
    const auto source = [&](int i, int col, double& v1, double& v2) {
        if (planes) {
            v1 = z1[i * xs + col];
            v2 = z2[i * xs + col];
        } else {
            v1 = x[i * xs + col];
            v2 = v1 * v1;
        }
    };
    const int chunks = (cols + 7) / 8;
    for (int task = threadIdx.x; task < rows * chunks; task += blockDim.x) {
        const int i = task / chunks, c0 = (task - i * chunks) * 8, c1 = min(c0 + 8, cols);
        double a1 = 0, a2 = 0, v1, v2;
        for (int j = 0; j < T2; ++j) {
            source(i, c0 + j, v1, v2);
            a1 += v1;
            a2 += v2;
        }
        for (int c = c0; c < c1; ++c) {
            h1[i * otx + c] = a1;
            h2[i * otx + c] = a2;
            if (c + 1 < c1) {
                double n1, n2, g1, g2;
                source(i, c + T2, n1, n2);
                source(i, c, g1, g2);
                a1 = (a1 + n1) - g1;
                a2 = (a2 + n2) - g2;
            }
        }
    }
}

// Plane sums of 3D window sums: z = sum over T0 planes of x and x^2, for output plane q of the
// box (running from plane q-1 when q > 0).
__device__ inline void plane_sums(const float* x, int q, int T0, int plane, double* z1, double* z2)
{
    for (int i = threadIdx.x; i < plane; i += blockDim.x) {
        if (q == 0) {
            double a1 = 0, a2 = 0;
            for (int a = 0; a < T0; ++a) {
                const double v = x[a * plane + i];
                a1 += v;
                a2 = fma(v, v, a2);
            }
            z1[i] = a1;
            z2[i] = a2;
        } else {
            const double gone = x[(q - 1) * plane + i], come = x[(q + T0 - 1) * plane + i];
            z1[i] = (z1[i] + come) - gone;
            z2[i] = fma(-gone, gone, fma(come, come, z2[i]));
        }
    }
}

// 1/sqrt(d) for a normal d (rsqrtf's own scaling of subnormal arguments costs four
// instructions per output; the callers have ruled them out).
__device__ inline float rsqrt_normal(float d)
{
    float r;
    asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(d));
    return r;
}

// The variance sum D = n S2 - S1^2 (p1 = n S2) at or below which coefficient() takes a window as
// flat: the guard tau and the rounding of p1 (exact mode: 0).
__device__ inline double flat_limit(const TileMode& t, double p1)
{
    return t.exact ? 0.0 : t.tau + 4 * 0x1p-53 * p1;
}

// One output from its window sums: the guard, r = N * rsqrt(D), the clamp; `redo` says the
// window must be recomputed (see Window).
__device__ inline float coefficient(float num, double s1, double s2, const TileMode& t, double n,
                                    double inv_n, bool& redo)
{
    const double p1 = n * s2;
    const double dn = fma(-s1, s1, p1);
    const double limit = flat_limit(t, p1);
    const float d = dn > limit ? float(dn * inv_n) : 0.f;
    const float v = d >= FLT_MIN ? num * rsqrt_normal(d) : 0.f;
    // s1^2 > 1024 dn, as p1 = s1^2 + dn (a threshold: its rounding does not matter); bitwise,
    // without branches (this function runs once per output, a large share of the small LCC
    // kernels' instructions).
    redo = (dn > limit) & (p1 > 1025.0 * dn) | (dn <= limit) & (s2 > 0) & (s2 < t.small);
    return fminf(fmaxf(v, -1.f), 1.f);
}

// The outputs a thread's finalisation noted in `redo` (bit r * RX + c: output (y0 + r, x0 + c)),
// recomputed directly from their windows and clamped: done after the thread's stores, once its
// accumulators are dead.
template <int RX>
__device__ inline void store_recomputed(unsigned redo, int y0, int x0, float* orow, int64_t ostride, Window win,
                                        const float* image, const float* taps)
{
    while (redo != 0) {
        const int bit = __ffs(redo) - 1;
        redo &= redo - 1;
        const int yy = y0 + bit / RX, xx = x0 + bit % RX;
        Window w = win;
        w.box[1] += yy;
        w.box[2] += xx;
        orow[int64_t(yy) * ostride + xx] = fminf(fmaxf(recomputed(w, image, taps), -1.f), 1.f);
    }
}

// Small 2D templates (T1, T2 <= 8): each thread forms its own outputs' window sums straight
// from the centred box x (row stride xs, a multiple of 4; x0 too) in registers, with no shared
// arrays. Column sums over T1 rows come first, for the RX + T2 - 1 columns the thread's windows
// cover, running down the rows (each value is widened to double once per use: float-to-double
// conversions are a slow pipe); each output row then adds T2 of them per window. Reads whole
// float4s, up to round4(RX + T2 - 1) columns from x0, within the block's box row; values past
// `cols` only feed outputs that are not stored. Every sum has at most T1 + 2 (RY - 1) terms down
// and T2 across, within the rounding bound of guard_factor (src/device/zones.cpp), which
// assumes running sums over the whole tile. Same guard, store and recomputes as finalise below.
template <int RY, int RX, int T1, int T2>
__device__ inline void finalise_small(const float (&acc)[RY][RX], const float* x, int xs, int y0, int x0,
                                      int rows, int cols, const TileMode& t, double n, float* orow,
                                      int64_t ostride, Window win, const float* image, const float* taps)
{
    static_assert(RY * RX <= 32, "one bit per output of a thread");
    static_assert(RX % 4 == 0, "float4 loads from x0");
    constexpr int W = RX + T2 - 1, W4 = (W + 3) / 4 * 4;
    const double inv_n = 1.0 / n;
    const auto load_row = [&](int i, float (&v)[W4]) {
        const float4* src = reinterpret_cast<const float4*>(x + (y0 + i) * xs + x0);
#pragma unroll
        for (int j = 0; j < W4 / 4; ++j) {
            const float4 q = src[j];
            v[4 * j] = q.x, v[4 * j + 1] = q.y, v[4 * j + 2] = q.z, v[4 * j + 3] = q.w;
        }
    };
    double c1[W], c2[W];   // column sums of x and x^2 over the window rows of output row r
#pragma unroll
    for (int j = 0; j < W; ++j) c1[j] = c2[j] = 0;
    // Rolled: unrolled, the compiler hoists every load of the window at once.
#pragma unroll 1
    for (int i = 0; i < T1; ++i) {
        float v[W4];
        load_row(i, v);
#pragma unroll
        for (int j = 0; j < W; ++j) {
            const double d = v[j];
            c1[j] += d;
            c2[j] = fma(d, d, c2[j]);
        }
    }
    unsigned redo = 0;
#pragma unroll
    for (int r = 0; r < RY; ++r) {
        if (y0 + r >= rows) break;
        if (r > 0) {   // row r + T1 - 1 enters, r - 1 leaves
            float come[W4], gone[W4];
            load_row(r + T1 - 1, come);
            load_row(r - 1, gone);
#pragma unroll
            for (int j = 0; j < W; ++j) {
                const double a = come[j], b = gone[j];
                c1[j] = (c1[j] + a) - b;
                c2[j] = fma(-b, b, fma(a, a, c2[j]));
            }
        }
#pragma unroll
        for (int c = 0; c < RX; ++c) {
            if (x0 + c >= cols) break;
            double s1 = c1[c], s2 = c2[c];
#pragma unroll
            for (int j = 1; j < T2; ++j) s1 += c1[c + j], s2 += c2[c + j];
            bool again;
            orow[int64_t(y0 + r) * ostride + x0 + c] = coefficient(acc[r][c], s1, s2, t, n, inv_n, again);
            if (again) redo |= 1u << (r * RX + c);
        }
    }
    store_recomputed<RX>(redo, y0, x0, orow, ostride, win, image, taps);
}

// The vertical window sums of one thread's RY x RX outputs (rows y0.., columns x0..) from h,
// the guard, r = N * rsqrt(D), the clamp and the store into orow (row stride ostride); windows
// to recompute are noted and done last, once the accumulators are dead. `win` locates the
// window of output (0, 0) of the plane in the image (box) and the extents.
template <int RY, int RX>
__device__ inline void finalise(const float (&acc)[RY][RX], const double* h1, const double* h2, int otx,
                                int y0, int x0, int rows, int cols, int T1, const TileMode& t, double n,
                                float* orow, int64_t ostride, Window win, const float* image, const float* taps)
{
    static_assert(RY * RX <= 32, "one bit per output of a thread");
    const double inv_n = 1.0 / n;
    unsigned redo = 0;
#pragma unroll
    for (int c = 0; c < RX; ++c) {
        const int xx = x0 + c;
        if (xx >= cols) break;
        double s1 = 0, s2 = 0;
        if (y0 < rows)
            for (int i = 0; i < T1; ++i) s1 += h1[(y0 + i) * otx + xx], s2 += h2[(y0 + i) * otx + xx];
#pragma unroll
        for (int r = 0; r < RY; ++r) {
            const int yy = y0 + r;
            if (yy >= rows) break;
            if (r > 0) {
                s1 = (s1 + h1[(yy + T1 - 1) * otx + xx]) - h1[(yy - 1) * otx + xx];
                s2 = (s2 + h2[(yy + T1 - 1) * otx + xx]) - h2[(yy - 1) * otx + xx];
            }
            bool again;
            orow[int64_t(yy) * ostride + xx] = coefficient(acc[r][c], s1, s2, t, n, inv_n, again);
            if (again) redo |= 1u << (r * RX + c);
        }
    }
    store_recomputed<RX>(redo, y0, x0, orow, ostride, win, image, taps);
}

}  // namespace flcc::device
