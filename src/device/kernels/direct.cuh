// The GPU direct kernel: one block computes an output tile of OTZ planes x OTY rows x OTX
// columns, start to finish, in one launch:
//   1. gather the tile's input box (zero padding included) into shared memory, reducing the
//      statistics of its image values (sum, min, max, integral, finite) over the block;
//   2. for LCC, centre it on the block's mean (boundary rectangles: not centred), scaling by a
//      power of two when the magnitude is extreme, and decide exact or guarded mode;
//   3. per output plane: the numerator in registers (each thread RY rows x RX columns, template
//      rows outermost with the tap row in registers), then for LCC the window sums in double:
//      running plane sums in 3D, horizontal running sums in shared memory, vertical running
//      sums in each thread's registers for its own outputs; the guard, r = N * rsqrt(D) and
//      the clamp; store.
// The numerics are the host's (src/host/kernels/window_sums.h): exact mode for bounded integer
// data, a rigorous rounding bound otherwise, exactly 0 for zero-variance panels.
//
// T0C/T1C/T2C > 0 compile the template extent in (the generator instantiates the specialised
// sizes); 0 means run time (the generic kernels).
#pragma once

#include "device/kernels/lcc_common.cuh"

#include <cuda_pipeline.h>

#include <cfloat>
#include <cstdint>

namespace flcc::device {

template <int T0C, int T1C, int T2C, int RY_, int RX_, int OTZ_, int OTY_, int OTX_>
struct DirectConfig {
    static constexpr int T0 = T0C, T1 = T1C, T2 = T2C;
    static constexpr int RY = RY_, RX = RX_, OTZ = OTZ_, OTY = OTY_, OTX = OTX_;
    static constexpr int threads = (OTY / RY) * (OTX / RX);
    // Small 2D templates: window sums per thread in registers, no shared arrays for them.
    static constexpr bool small = T0 == 1 && T1 > 0 && T1 <= 8 && T2 > 0 && T2 <= 8;
    // Small templates are latency-bound: registers are capped so that 6 blocks fit a
    // multiprocessor for LCC (80 registers; tighter caps spill) and 8 for convolution (64
    // registers). performance.md's appendix gives the measurements behind both caps.
    static constexpr int min_blocks_lcorr = small ? 6 : 1;
    static constexpr int min_blocks_conv = small ? 8 : 1;
    static_assert(OTY % RY == 0 && OTX % RX == 0, "tile must be a multiple of the thread block");
};


// The numerator of one output plane for one thread: RY rows x RX columns of outputs. The loop
// runs over template rows i: the tap row sits in registers (shared-memory broadcasts), and for
// each of the thread's rows r the input segment of row r + i feeds RX x T2 fused multiply-adds.
template <class C>
__device__ inline void numerator_plane(const float* x, const float* taps, int q, int ty, int tx,
                                       const DirectLayout& L, int T0, int T1, int T2, int TR,
                                       float (&acc)[C::RY][C::RX])
{
    constexpr int RY = C::RY, RX = C::RX;
#pragma unroll
    for (int r = 0; r < RY; ++r)
#pragma unroll
        for (int c = 0; c < RX; ++c) acc[r][c] = 0.f;
    for (int a = 0; a < T0; ++a) {
        const float* xs = x + (q + a) * L.iy * L.xs + ty * RY * L.xs + tx * RX;
        const float* ts = taps + a * T1 * TR;
        for (int i = 0; i < T1; ++i) {
            if constexpr (C::T2 > 0) {
                constexpr int T2C = C::T2, TW = (T2C + 3) / 4 * 4, W = (RX + T2C - 1 + 3) / 4 * 4;
                float t[TW];
#pragma unroll
                for (int j = 0; j < TW; j += 4) {
                    const float4 v = *reinterpret_cast<const float4*>(ts + i * TR + j);
                    t[j] = v.x, t[j + 1] = v.y, t[j + 2] = v.z, t[j + 3] = v.w;
                }
#pragma unroll
                for (int r = 0; r < RY; ++r) {
                    const float* row = xs + (r + i) * L.xs;
                    float in[W];
#pragma unroll
                    for (int w = 0; w < W; w += 4) {
                        const float4 v = *reinterpret_cast<const float4*>(row + w);
                        in[w] = v.x, in[w + 1] = v.y, in[w + 2] = v.z, in[w + 3] = v.w;
                    }
#pragma unroll
                    for (int j = 0; j < T2C; ++j)
#pragma unroll
                        for (int c = 0; c < RX; ++c) acc[r][c] = fmaf(in[c + j], t[j], acc[r][c]);
                }
            } else {
                for (int j0 = 0; j0 < T2; j0 += 4) {
                    const float4 tv = *reinterpret_cast<const float4*>(ts + i * TR + j0);
                    const float t[4] = {tv.x, tv.y, tv.z, tv.w};
#pragma unroll
                    for (int r = 0; r < RY; ++r) {
                        const float* row = xs + (r + i) * L.xs + j0;
                        float in[RX + 4];
#pragma unroll
                        for (int w = 0; w < RX + 4; w += 4) {
                            const float4 v = *reinterpret_cast<const float4*>(row + w);
                            in[w] = v.x, in[w + 1] = v.y, in[w + 2] = v.z, in[w + 3] = v.w;
                        }
#pragma unroll
                        for (int j = 0; j < 4; ++j)
#pragma unroll
                            for (int c = 0; c < RX; ++c) acc[r][c] = fmaf(in[c + j], t[j], acc[r][c]);
                    }
                }
            }
        }
    }
}

// Small 2D templates in device memory (TileParams::user_templ): warp 0 of every block prepares
// the taps into shared memory itself, while the other warps start the gather, instead of a
// template kernel ahead of the frame, whose serial block reductions and launch cost a small
// call more than the preparation itself. The arithmetic is prepare_template's
// (src/device/template_prep.cu): double, scaled by the largest magnitude, rounded once. The
// butterfly reductions give every lane, and so every block, the same bits. A non-finite
// template with check_finite sets `bad` and prepares nothing.
template <int T1, int T2>
__device__ inline void warp_prepare_taps(const float* u, int lcorr, int check_finite, float* taps,
                                        double& tap_sum, int& bad)
{
    constexpr int n = T1 * T2, TR = (T2 + 3) / 4 * 4;
    static_assert(n <= 64, "two template values per lane");
    const int lane = threadIdx.x & 31;
    float lo = FLT_MAX, hi = -FLT_MAX;
    bool finite = true;
#pragma unroll
    for (int k = lane; k < n; k += 32) {
        const float v = u[k];
        lo = fminf(lo, v);
        hi = fmaxf(hi, v);
        finite &= isfinite(v);
    }
    const auto all_sum = [](double v) {
#pragma unroll
        for (int d = 16; d > 0; d >>= 1) v += __shfl_xor_sync(0xffffffffu, v, d);
        return v;
    };
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) {
        lo = fminf(lo, __shfl_xor_sync(0xffffffffu, lo, d));
        hi = fmaxf(hi, __shfl_xor_sync(0xffffffffu, hi, d));
    }
    finite = __all_sync(0xffffffffu, finite);
    if (lane == 0) bad = !finite && check_finite;
    if (!finite && check_finite) return;
    const bool constant = lo == hi;
    double mean = 0, inv = 0, scale = 1;
    if (lcorr && !constant) {
        scale = 1.0 / fmax(fabs(double(lo)), fabs(double(hi)));
        double part = 0;
        for (int k = lane; k < n; k += 32) part += double(u[k]) * scale;
        mean = all_sum(part) / double(n);
        part = 0;
        for (int k = lane; k < n; k += 32) {
            const double d = double(u[k]) * scale - mean;
            part += d * d;
        }
        const double norm2 = all_sum(part);
        inv = norm2 > 0 ? 1.0 / sqrt(norm2) : 0.0;
    }
    double part = 0;
    for (int k = lane; k < T1 * TR; k += 32) {
        const int r = k / TR, c = k - r * TR;
        float v = 0.f;
        if (c < T2) {
            const int i = r * T2 + c;
            if (!lcorr) v = u[n - 1 - i];
            else if (!constant) v = float((double(u[i]) * scale - mean) * inv);
        }
        taps[k] = v;
        part += v;
    }
    const double sum = all_sum(part);
    if (lane == 0) tap_sum = sum;
}

template <class C, bool LCORR>
__global__ void __launch_bounds__(C::threads, LCORR ? C::min_blocks_lcorr : C::min_blocks_conv)
    direct_kernel(const TileParams p)
{
    constexpr int RY = C::RY, RX = C::RX, OTY = C::OTY, OTX = C::OTX;
    const int T0 = C::T0 > 0 ? C::T0 : p.T[0];
    const int T1 = C::T1 > 0 ? C::T1 : p.T[1];
    const int T2 = C::T2 > 0 ? C::T2 : p.T[2];
    const int TR = p.tap_row;
    const DirectLayout L(C::OTZ, OTY, OTX, T0, T1, T2, TR, LCORR && !C::small);

    extern __shared__ double smem[];
    double* h1 = smem;
    double* h2 = h1 + L.h_doubles / 2;
    double* z1 = h2 + L.h_doubles / 2;
    double* z2 = z1 + L.z_doubles / 2;
    double* scratch = z1 + L.z_doubles;
    double& own_tap_sum = scratch[kScratchDoubles];                              // see warp_prepare_taps
    int& bad_template = *reinterpret_cast<int*>(scratch + kScratchDoubles + 1);
    float* x = reinterpret_cast<float*>(scratch + kScratchDoubles + kOwnTapDoubles);
    float* taps = x + L.x_floats;

    const detail::TileOf tile = detail::locate(p, blockIdx.x, C::OTZ, OTY, OTX);
    const float* image = p.image + int64_t(blockIdx.y) * p.image_frame;
    float* out = p.out + int64_t(blockIdx.y) * p.out_frame;
    const int tid = threadIdx.x;
    const int iz = tile.real[0] + T0 - 1;

    const bool own_taps = C::small && p.user_templ != nullptr;
    if constexpr (C::small) {
        if (own_taps && tid < 32) warp_prepare_taps<C::T1, C::T2>(p.user_templ, p.lcorr, p.check_finite, taps, own_tap_sum,
                                                                   bad_template);
    }
    if (!own_taps)
        for (int i = tid; i < T0 * T1 * TR; i += C::threads) taps[i] = p.taps[i];

    // 1. Gather the input box. The loops run over the box flattened (rows x xs columns, the
    //    statistics and the centring over float4s of it), so that every thread has elements
    //    whatever the box's width, and the index arithmetic of an element is a few integer
    //    operations: box extents are compile-time constants in the specialised kernels, so the
    //    divisions below are multiplications. (One warp per box row would spend more
    //    instructions on each row's indices than on its elements.)
    //    Image values are asynchronous copies straight into shared memory (cp.async: the whole
    //    box in flight at once, no registers held); padding and the columns past the box are
    //    written as zeros.
    constexpr int kXs = C::T2 > 0 ? (OTX + (C::T2 + 3) / 4 * 4 + 3) / 4 * 4 : 0;   // = L.xs
    constexpr int kIy = C::T1 > 0 ? OTY + C::T1 - 1 : 0;                            // = L.iy
    constexpr bool kOnePlane = C::T0 == 1 && C::OTZ == 1;
    const int xs = kXs > 0 ? kXs : L.xs, iy = kIy > 0 ? kIy : L.iy, xs4 = xs / 4;
    // One plane: only the rows the tile's real outputs read (a thin boundary tile needs a few;
    // the rows past them are never loaded, and feed only outputs that are not stored).
    const int rows = kOnePlane ? min(iy, tile.real[1] + T1 - 1) : iz * iy;
    const int b0 = tile.origin[0] - p.P[0], b1 = tile.origin[1] - p.P[1], b2 = tile.origin[2] - p.P[2];
    const int col_lo = max(0, -b2), col_hi = min(L.ix, p.S[2] - b2);   // image columns of a box row
    const auto image_row = [&](int row, int& g0, int& g1) {   // box row -> image plane and row
        const int a = kOnePlane ? 0 : row / iy;
        g0 = b0 + a;
        g1 = b1 + row - a * iy;
        return g0 >= 0 && g0 < p.S[0] && g1 >= 0 && g1 < p.S[1];
    };
    // Whole float4s of an image row go as one 16-byte copy when the row's start in the image is
    // 16-byte aligned (interior tiles of frames whose rows are whole float4s); the rest, padding
    // and image edges, element by element (one copy per element costs small kernels a large
    // share of their instructions).
    float4* x4 = reinterpret_cast<float4*>(x);   // rows of xs floats, xs a multiple of 4
    const bool aligned = ((reinterpret_cast<uintptr_t>(image) & 15) | (p.S[2] & 3) | (b2 & 3)) == 0;
    for (int e = tid; e < rows * xs4; e += C::threads) {
        const int row = e / xs4, c = (e - row * xs4) * 4;
        int g0, g1;
        float* dst = x + 4 * e;
        if (!image_row(row, g0, g1) || c + 4 <= col_lo || c >= col_hi) {
            x4[e] = make_float4(0.f, 0.f, 0.f, 0.f);
            continue;
        }
        const float* src = image + (int64_t(g0) * p.S[1] + g1) * p.S[2] + b2;   // box column 0
        if (aligned && c >= col_lo && c + 4 <= col_hi) {
            __pipeline_memcpy_async(dst, src + c, 4 * sizeof(float));
            continue;
        }
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            if (c + k >= col_lo && c + k < col_hi)
                __pipeline_memcpy_async(dst + k, src + c + k, sizeof(float));
            else
                dst[k] = 0.f;
        }
    }
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    // The statistics: float4s wholly inside the image skip the per-value column tests, and their
    // sum goes into the double in one step (a float sum of four, then one widening: the sum only
    // chooses the centring constant). Convolution gathers them only to check finiteness.
    detail::Stats s{0.0, FLT_MAX, -FLT_MAX, 1, 1, 0};
    if (LCORR || p.check_finite) {
        detail::Stats st{0.0, FLT_MAX, -FLT_MAX, 1, 1, 0};
        for (int e = tid; e < rows * xs4; e += C::threads) {
            const int row = e / xs4, c = (e - row * xs4) * 4;
            int g0, g1;
            if (!image_row(row, g0, g1)) continue;
            const float4 q = x4[e];
            const float v[4] = {q.x, q.y, q.z, q.w};
            if (c >= col_lo && c + 4 <= col_hi) {
                st.sum += double((v[0] + v[1]) + (v[2] + v[3]));
                st.lo = fminf(st.lo, fminf(fminf(v[0], v[1]), fminf(v[2], v[3])));
                st.hi = fmaxf(st.hi, fmaxf(fmaxf(v[0], v[1]), fmaxf(v[2], v[3])));
#pragma unroll
                for (int k = 0; k < 4; ++k) {
                    st.integral &= v[k] == truncf(v[k]);
                    st.finite &= isfinite(v[k]);
                }
                st.count += 4;
                continue;
            }
            // Partly inside (image edges, the box's last float4): the same, masked, without branches.
            float part = 0.f;
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                const bool in = c + k >= col_lo && c + k < col_hi;
                part += in ? v[k] : 0.f;
                st.lo = fminf(st.lo, in ? v[k] : FLT_MAX);
                st.hi = fmaxf(st.hi, in ? v[k] : -FLT_MAX);
                st.integral &= !in || v[k] == truncf(v[k]);
                st.finite &= !in || isfinite(v[k]);
                st.count += in;
            }
            st.sum += double(part);
        }
        s = detail::block_reduce(st, scratch);
        // (bad_template is set only with check_finite: without it, convolution never reads it.)
        if ((!s.finite && p.check_finite) || (own_taps && bad_template)) {
            if (tid == 0) *reinterpret_cast<volatile int*>(p.status) = 1;   // host memory: a plain store
            return;
        }
    }

    // 2. Centring, scaling and the mode of the denominator (the box's columns; those past it
    //    stay zero).
    TileMode mode{0.f, 1.0, 1, 0.0, 0.0, 0.0};
    if (LCORR) {
        mode = decide(s, tile.boundary, p.n, p.guard);
        // The mode is the block's: one loop per case, so that the common one (a subtraction) does
        // not also compute the scaled one's double arithmetic per value; an uncentred, unscaled
        // tile (the boundary) has nothing to do.
        const auto centre = [&](auto op) {
            for (int e = tid; e < rows * xs4; e += C::threads) {
                const int c = (e - e / xs4 * xs4) * 4;
                const float4 q = x4[e];
                float v[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
                for (int k = 0; k < 4; ++k)
                    if (c + k < L.ix) v[k] = op(v[k]);
                x4[e] = make_float4(v[0], v[1], v[2], v[3]);
            }
        };
        if (mode.scale != 1)
            centre([&](float v) { return float((double(v) - double(mode.c)) * mode.scale); });
        else if (mode.c != 0.f)
            centre([&](float v) { return v - mode.c; });
    }
    __syncthreads();

    const int ty = tid / (OTX / RX), tx = tid % (OTX / RX);
    // Small kernels meet no barrier past this point: threads without real outputs (most threads
    // of a thin boundary tile, whose box rows were not all loaded) are done.
    if (C::small && (ty * RY >= tile.real[1] || tx * RX >= tile.real[2])) return;
    for (int q = 0; q < tile.real[0]; ++q) {
        // 3. The numerator of output plane q.
        float acc[RY][RX];
        numerator_plane<C>(x, taps, q, ty, tx, L, T0, T1, T2, TR, acc);

        const int oq = tile.origin[0] + q;
        float* orow = out + (int64_t(oq) * p.O[1] + tile.origin[1]) * p.O[2] + tile.origin[2];
        if (!LCORR) {
#pragma unroll
            for (int r = 0; r < RY; ++r)
#pragma unroll
                for (int c = 0; c < RX; ++c) {
                    const int yy = ty * RY + r, xx = tx * RX + c;
                    if (yy < tile.real[1] && xx < tile.real[2]) orow[int64_t(yy) * p.O[2] + xx] = acc[r][c];
                }
            continue;
        }

        // 4. Window sums of plane q (3D: through the plane sums z) and 5. the finalisation.
        const Window win{{oq - p.P[0], tile.origin[1] - p.P[1], tile.origin[2] - p.P[2]},
                         {p.S[0], p.S[1], p.S[2]}, {T0, T1, T2}, TR, p.n, own_taps ? own_tap_sum : *p.tap_sum};
        if constexpr (C::small) {
            finalise_small<RY, RX, C::T1, C::T2>(acc, x, L.xs, ty * RY, tx * RX, tile.real[1], tile.real[2],
                                                 mode, p.n, orow, p.O[2], win, image, taps);
            continue;
        }
        if (T0 > 1) {
            plane_sums(x, q, T0, L.iy * L.xs, z1, z2);
            __syncthreads();
        }
        horizontal_sums(x, z1, z2, T0 > 1, L.xs, tile.real[1] + T1 - 1, tile.real[2], T2, OTX, h1, h2);
        __syncthreads();
        finalise<RY, RX>(acc, h1, h2, OTX, ty * RY, tx * RX, tile.real[1], tile.real[2], T1, mode, p.n,
                         orow, p.O[2], win, image, taps);
        __syncthreads();   // the next plane rewrites h and z
    }
}

}  // namespace flcc::device
