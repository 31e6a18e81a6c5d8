// The LCC window sums of device.fourier3.slabs (src/device/fourier_slabs_solver.cu): a kernel of
// their own after slab_frame, which leaves the numerators of the image centred by modes[0] in
// the output; slab_window finishes each output in place: the padding's share added back, times
// its WindowFactor (ratio / sqrt(D), 0 where the guard takes D for zero), clamped; windows to
// recompute listed for recompute_listed.
//
// Why not inside slab_frame: that kernel runs one 512-thread block per multiprocessor with the
// transforms' registers and ~140 KB of shared memory, where the window sums' dependent double
// chains find too few warps to hide their latency. Here two blocks
// of 12 warps share a multiprocessor, and slab_frame does what convolution does.
//
// slab_window: a block owns 32 x 32 outputs along x and y and a chunk of output planes (grid
// (tiles, chunks)), kWinThreads threads. Per output plane three stages, in double:
//   A. (all warps) each thread owns the patch positions tid + kWinThreads k (k < kWinOwned) of
//      the (32 + T1 - 1) x (32 + T2 - 1) patch and keeps there the sums over the window's planes
//      of x and x^2 (the plane that enters added, the one that leaves subtracted, both loaded
//      a plane ahead; the leaving one comes back from L1 or L2), in zs;
//   B. (warps 8-11) per patch row and run of kWinRun output columns, the sums over T2 columns
//      (the first directly, the next running), in hs;
//   C. (warps 0-7) per output column and run of kWinRun output rows, the sums over T1 rows
//      (likewise), then the outputs.
// The stages run as a pipeline, one barrier per plane: between two barriers A takes plane u,
// B plane u - 1 and C plane u - 2, so that no warp waits for a stage it does not run; zs and
// hs are double-buffered by plane (A writes zs[u & 1] from zs[(u - 1) & 1], which B reads).
//
// Modes (numerics.md): the values centred (and scaled) by modes[0] for the output planes where
// every real output's window of the block lies inside the image, plain (modes[1]) elsewhere; the
// plane sums are summed afresh where the mode changes, so no running sum mixes modes, and
// slab_window_guard counts the block's chunk of running steps.
#pragma once

#include "device/kernels/fourier3_frame.cuh"
#include "geometry/guard.h"
#include "device/kernels/slab_layout.h"

namespace flcc::device {

constexpr int kWinOut = 32;                              // outputs per block along x and y
constexpr int kWinThreads = 384;
constexpr int kWinRun = 4;                               // outputs per task of B and C
constexpr int kWinPatch = kWinOut + kSlabMaxT - 1;       // patch extent at most (39; odd pitch: bank-free)
constexpr int kWinOwned = (kWinPatch * kWinPatch + kWinThreads - 1) / kWinThreads;   // 4
constexpr int kWinHPitch = kWinOut + 1;                  // double2 per row of hs (bank-free)
constexpr int kWinRuns = kWinOut / kWinRun;              // runs per patch row or output column
constexpr int kWinCThreads = kWinOut * kWinRuns;         // C's threads (256), a task each; B's: the rest
constexpr int kWinBThreads = kWinThreads - kWinCThreads;
static_assert(kWinCThreads % 32 == 0 && kWinBThreads > 0, "whole warps per stage");
static_assert(kWinOut % kWinRun == 0, "whole runs");
// Dynamic shared memory: zs and hs, two planes each, and each C task's padding shares for the
// planes whose windows lie inside along z (kWinRun per task): 98 KB, two blocks per
// multiprocessor.
constexpr int kWinZs = kWinPatch * kWinPatch;            // double2 per plane of zs
constexpr int kWinHs = kWinPatch * kWinHPitch;           // double2 per plane of hs
constexpr size_t kWinSharedBytes = size_t(2) * (kWinZs + kWinHs) * sizeof(double2) +
                                   size_t(kWinRun) * kWinCThreads * sizeof(double);

// The error bound factor of slab_window's sums (geometry::frame_guard): running sums along
// `chunk` planes, then along runs of kWinRun columns and rows.
inline double slab_window_guard(int T0, int T1, int T2, int chunk)
{
    return geometry::frame_guard(T0, T1, T2, chunk, kWinRun, kWinRun);
}

namespace slab_window_detail {

// A raw value centred (and scaled) by a mode, rounded to float as the transforms see it.
template <bool Scaled>
__device__ __forceinline__ double centred(float x, float c, double scale)
{
    return Scaled ? double(float((double(x) - double(c)) * scale)) : double(x - c);
}

// One step of the running sums at the owned positions inside the patch (bit k of patch), from
// the previous plane's sums (prev) to this one's (next): the value that enters added, the one
// that leaves subtracted (raw values as loaded: zero where bit k of ein or lin is clear,
// outside the image).
template <bool Scaled>
__device__ __forceinline__ void running_step(const float (&enter)[kWinOwned], const float (&leave)[kWinOwned],
                                             unsigned ein, unsigned lin, float c, double scale, const double2* prev,
                                             double2* next, const int (&slot)[kWinOwned], unsigned patch)
{
#pragma unroll
    for (int k = 0; k < kWinOwned; ++k) {
        if (!(patch >> k & 1u)) continue;
        const double e = centred<Scaled>(ein >> k & 1u ? enter[k] : 0.f, c, scale);
        const double l = centred<Scaled>(lin >> k & 1u ? leave[k] : 0.f, c, scale);
        double2 z = prev[slot[k]];
        z.x += e - l;
        z.y += fma(e, e, -(l * l));
        next[slot[k]] = z;
    }
}

// The sums over `width` (1..kSlabMaxT; W when the kernel is compiled for it, else 0)
// consecutive values `stride` apart from src, for kWinRun consecutive starts: the first directly
// (a tree over 8, zeros beyond width: three dependent additions instead of seven), the next
// running (add the one that enters, subtract the one that leaves).
template <int W>
__device__ __forceinline__ void run_sums(const double2* src, int stride, int width, double2 (&o)[kWinRun])
{
    if (W != 0) width = W;
    double2 v[kSlabMaxT];
#pragma unroll
    for (int j = 0; j < kSlabMaxT; ++j) v[j] = j < width ? src[j * stride] : double2{0, 0};
    double a1 = ((v[0].x + v[1].x) + (v[2].x + v[3].x)) + ((v[4].x + v[5].x) + (v[6].x + v[7].x));
    double a2 = ((v[0].y + v[1].y) + (v[2].y + v[3].y)) + ((v[4].y + v[5].y) + (v[6].y + v[7].y));
    o[0] = {a1, a2};
#pragma unroll
    for (int i = 1; i < kWinRun; ++i) {
        const double2 e = src[(i + width - 1) * stride], l = src[(i - 1) * stride];
        a1 = (a1 + e.x) - l.x;
        a2 = (a2 + e.y) - l.y;
        o[i] = {a1, a2};
    }
}

}  // namespace slab_window_detail

// Grid (tiles_x * tiles along y, chunks), kWinThreads threads, kWinSharedBytes of dynamic shared
// memory; after slab_frame<true>, whose numerators it finishes in place. Full: compiled for
// T1 = T2 = kSlabMaxT (the sums' widths known).
template <bool Full>
__global__ void __launch_bounds__(kWinThreads, 2) slab_window(PlanesParams g, int tiles_x, int chunk)
{
    constexpr int W = Full ? kSlabMaxT : 0;
    extern __shared__ double2 win_shared[];
    double2* const zs = win_shared;                 // [2][kWinZs], patch rows of kWinPatch
    double2* const hs = win_shared + 2 * kWinZs;    // [2][kWinHs], rows of kWinHPitch
    double* const zshare = reinterpret_cast<double*>(hs + 2 * kWinHs);   // [kWinRun][kWinCThreads]
    __shared__ __align__(16) unsigned char wf_bytes[2 * sizeof(WindowFactor)];
    const WindowFactor* wf = reinterpret_cast<const WindowFactor*>(wf_bytes);
    // recompute_listed, launched as a dependent, waits for this grid's list from the start.
    cudaTriggerProgrammaticLaunchCompletion();
    const int tid = threadIdx.x;
    const int T0 = g.T[0], T1 = Full ? kSlabMaxT : g.T[1], T2 = Full ? kSlabMaxT : g.T[2];
    const int ty = blockIdx.x / tiles_x, tx = blockIdx.x - ty * tiles_x;
    const int ox0 = tx * kWinOut, oy0 = ty * kWinOut, q0 = blockIdx.y * chunk;
    const int nq = min(chunk, g.O[0] - q0);   // the block's output planes
    const int pw = kWinOut + T2 - 1, ph = kWinOut + T1 - 1;
    const int xi = ox0 - g.P[2], yi = oy0 - g.P[1], zi = q0 - g.P[0];   // the patch's image origin
    if (tid < 2) reinterpret_cast<WindowFactor*>(wf_bytes)[tid] = WindowFactor(g.modes[tid], g.modes[0], g.n);

    // Output planes [u0, u1) of the block: every real output's window inside the image.
    int u0 = 0, u1 = 0;
    {
        const int hy = min(oy0 + kWinOut, g.O[1]), hx = min(ox0 + kWinOut, g.O[2]);
        if (oy0 >= g.P[1] && hy <= g.S[1] - T1 + g.P[1] + 1 && ox0 >= g.P[2] && hx <= g.S[2] - T2 + g.P[2] + 1) {
            u0 = max(0, g.P[0] - q0);
            u1 = min(nq, g.S[0] - T0 + g.P[0] + 1 - q0);
        }
    }
    const auto mode_of = [&](int u) { return u >= u0 && u < u1 ? 0 : 1; };

    // A: the owned positions' offsets in an image plane (outside the image: 0, read and dropped;
    // own bit k clear) and their places in a plane of zs (bit k of patch: inside the patch).
    const float* __restrict__ image = g.frame->image;
    const int plane_elems = g.S[1] * g.S[2];   // the image's elements fit an int (the solver's plan())
    int off[kWinOwned], slot[kWinOwned];
    unsigned own = 0, patch = 0;
#pragma unroll
    for (int k = 0; k < kWinOwned; ++k) {
        const int i = tid + k * kWinThreads, r = i / pw, c = i - r * pw;
        const int y = yi + r, x = xi + c;
        const bool in = i < pw * ph && y >= 0 && y < g.S[1] && x >= 0 && x < g.S[2];
        off[k] = in ? y * g.S[2] + x : 0;
        own |= unsigned(in) << k;
        slot[k] = r * kWinPatch + c;
        patch |= unsigned(i < pw * ph) << k;
    }
    // Full: the patch has 39 x 39 positions, so that only the last owned one may fall outside.
    if (Full) patch |= (1u << (kWinOwned - 1)) - 1u;
    // The raw values of image plane z at the owned positions (plane 0's outside the image);
    // mask(z): bit k set where they lie inside the image (elsewhere they count as zero: the
    // padding, which plain mode reads as zero and the centred mode's real outputs never reach).
    // Masked where they are used, so that the loads stay in flight until then.
    const auto load = [&](int z, float (&v)[kWinOwned]) {
        const int base = z >= 0 && z < g.S[0] ? z * plane_elems : 0;
#pragma unroll
        for (int k = 0; k < kWinOwned; ++k) v[k] = __ldg(image + (base + off[k]));
    };
    const auto mask = [&](int z) { return z >= 0 && z < g.S[0] ? own : 0u; };

    // B's threads: tasks (patch row, run) t = tid - kWinCThreads + kWinBThreads j.
    const bool bthread = tid >= kWinCThreads;
    // C's task: output column vx, rows vy .. vy + kWinRun - 1 (bit i of creal: row vy + i is
    // real; of cwhole: its window lies inside along y and x). The transforms' centring constant
    // c0s: the numerators miss it times the taps in the padding, the share; zshare[i] holds row
    // vy + i's for the planes whose windows lie inside along z (all but 2 (T0 - 1) of them, the
    // same share each), the others take it afresh.
    const int vk = tid / kWinOut, vx = tid - vk * kWinOut;
    const int ox = ox0 + vx, vy = oy0 + kWinRun * vk;
    const double c0s = double(g.modes[0].c) * g.modes[0].scale;
    unsigned creal = 0, cwhole = 0;
    if (!bthread && ox < g.O[2]) {
        int lo[3] = {0, 0, 0}, hi[3] = {T0, 0, 0};
        window_inside(g, 2, ox, lo[2], hi[2]);
        const bool xw = lo[2] == 0 && hi[2] == T2;
#pragma unroll
        for (int i = 0; i < kWinRun; ++i) {
            window_inside(g, 1, vy + i, lo[1], hi[1]);
            const bool real = vy + i < g.O[1], whole = xw && lo[1] == 0 && hi[1] == T1;
            creal |= unsigned(real) << i;
            cwhole |= unsigned(whole) << i;
            zshare[i * kWinCThreads + tid] = real && !whole && c0s != 0 ? c0s * taps_outside(g, lo, hi) : 0.0;
        }
    }
    float* const out = g.frame->out;
    const int plane_out = g.O[1] * g.O[2];

    float enter[kWinOwned], leave[kWinOwned];   // the next plane's entering and leaving values
    float num[kWinRun], next_num[kWinRun];      // C: the numerators of its plane and of the next
    // Output (q0 + u, vy + i, ox) is out[e_first + u plane_out + i O2].
    const int row = g.O[2], e_first = q0 * plane_out + vy * row + ox;
    const auto load_num = [&](int uc, float (&v)[kWinRun]) {
        const float* const src = out + (e_first + uc * plane_out);
#pragma unroll
        for (int i = 0; i < kWinRun; ++i) v[i] = creal >> i & 1u ? __ldcg(src + i * row) : 0.f;
    };
#pragma unroll
    for (int i = 0; i < kWinRun; ++i) next_num[i] = 0.f;
    int wmode = -1;
    float wc = 0.f;
    double wscale = 1;
    for (int u = 0; u < nq + 2; ++u) {
        // Launched as slab_frame's dependent (launch_dependent): everything up to here and plane
        // 0's sums may run beside slab_frame; its numerators are read from plane 1 on.
        if (u == 1) cudaGridDependencySynchronize();
        // C's numerators: plane u - 2's arrived during the previous plane, plane u - 1's fly
        // until the next.
        const int uc = u - 2, e0 = e_first + uc * plane_out;
        if (!bthread && uc >= -1) {
#pragma unroll
            for (int i = 0; i < kWinRun; ++i) num[i] = next_num[i];
            if (uc + 1 < nq) load_num(uc + 1, next_num);
        }

        // A. Plane u's sums over the window's planes zi + u .. zi + u + T0 - 1.
        if (u < nq) {
            double2* const zn = zs + (u & 1) * kWinZs;
            const int mode = mode_of(u);
            if (mode != wmode) {
                wmode = mode;
                wc = g.modes[mode].c;
                wscale = g.modes[mode].scale;
                double2 z[kWinOwned];
#pragma unroll
                for (int k = 0; k < kWinOwned; ++k) z[k] = {0, 0};
                for (int dz = 0; dz < T0; ++dz) {
                    float v[kWinOwned];
                    load(zi + u + dz, v);
                    const unsigned in = mask(zi + u + dz);
#pragma unroll
                    for (int k = 0; k < kWinOwned; ++k) {
                        const float x = in >> k & 1u ? v[k] : 0.f;
                        const double e = wscale != 1 ? slab_window_detail::centred<true>(x, wc, wscale)
                                                     : slab_window_detail::centred<false>(x, wc, wscale);
                        z[k].x += e;
                        z[k].y = fma(e, e, z[k].y);
                    }
                }
#pragma unroll
                for (int k = 0; k < kWinOwned; ++k)
                    if (patch >> k & 1u) zn[slot[k]] = z[k];
            } else {
                const unsigned ein = mask(zi + u + T0 - 1), lin = mask(zi + u - 1);
                const double2* const zp = zs + ((u - 1) & 1) * kWinZs;
                if (wscale != 1)
                    slab_window_detail::running_step<true>(enter, leave, ein, lin, wc, wscale, zp, zn, slot, patch);
                else
                    slab_window_detail::running_step<false>(enter, leave, ein, lin, wc, wscale, zp, zn, slot, patch);
            }
            if (u + 1 < nq) {   // in flight until the next plane's step
                load(zi + u + T0, enter);
                load(zi + u, leave);
            }
        }

        if (bthread) {
            // B. Plane u - 1's sums over T2 columns: patch row, output columns kWinRun run ...
            const int ub = u - 1;
            if (ub >= 0 && ub < nq) {
                const double2* const zb = zs + (ub & 1) * kWinZs;
                double2* const hb = hs + (ub & 1) * kWinHs;
                for (int t = tid - kWinCThreads; t < ph * kWinRuns; t += kWinBThreads) {
                    const int run = t / ph, r = t - run * ph;   // rows fastest: bank-free
                    double2 o[kWinRun];
                    slab_window_detail::run_sums<W>(zb + r * kWinPatch + kWinRun * run, 1, T2, o);
#pragma unroll
                    for (int i = 0; i < kWinRun; ++i) hb[r * kWinHPitch + kWinRun * run + i] = o[i];
                }
            }
        } else if (uc >= 0 && creal != 0) {
            // C. Plane u - 2's sums over T1 rows: output column vx, rows vy ...; the padding's
            // share added back where the window reaches it, the factor, the clamp; windows to
            // recompute listed.
            double2 o[kWinRun];
            slab_window_detail::run_sums<W>(hs + (uc & 1) * kWinHs + kWinRun * vk * kWinHPitch + vx, kWinHPitch, T1,
                                            o);
            // The factors first: no store between them, so the factor's constants are read
            // from shared memory once (a store through a generic pointer could alias them).
            const WindowFactor& f = wf[mode_of(uc)];
            float factor[kWinRun];
#pragma unroll
            for (int i = 0; i < kWinRun; ++i) factor[i] = f(o[i].x, o[i].y);
            int lo[3], hi[3];
            window_inside(g, 0, q0 + uc, lo[0], hi[0]);
            const bool zw = lo[0] == 0 && hi[0] == T0;
            const unsigned whole = c0s == 0 ? ~0u : zw ? cwhole : 0u;
            // Branches per task, not per output: the padding's shares where some window
            // reaches the padding, the stores, the recompute list (rare).
            float v[kWinRun];
#pragma unroll
            for (int i = 0; i < kWinRun; ++i) v[i] = num[i];
            if ((whole & creal) != creal) {
#pragma unroll
                for (int i = 0; i < kWinRun; ++i) {
                    if (!(creal >> i & 1u) || (whole >> i & 1u)) continue;
                    double share = zshare[i * kWinCThreads + tid];
                    if (!zw) {
                        window_inside(g, 1, vy + i, lo[1], hi[1]);
                        window_inside(g, 2, ox, lo[2], hi[2]);
                        share = c0s * taps_outside(g, lo, hi);
                    }
                    v[i] = float(double(v[i]) - share);
                }
            }
            unsigned redo = 0;   // factor below zero: to recompute (stored as 0 here)
#pragma unroll
            for (int i = 0; i < kWinRun; ++i) {
                redo |= unsigned(factor[i] < 0.f) << i;
                v[i] = fminf(fmaxf(v[i] * fmaxf(factor[i], 0.f), -1.f), 1.f);
            }
            float* const dst = out + e0;
#pragma unroll
            for (int i = 0; i < kWinRun; ++i)
                if (creal >> i & 1u) __stcs(dst + i * row, v[i]);
            redo &= creal;
            if (redo != 0) {
#pragma unroll
                for (int i = 0; i < kWinRun; ++i)
                    if (redo >> i & 1u) g.redo[atomicAdd(g.redo_count, 1)] = e0 + i * row;
            }
        }
        __syncthreads();   // A's zs, B's hs are written; zs and hs of two planes back are read
    }
}

}  // namespace flcc::device
