// The kernels of the GPU batch engine (batch_engine.cu), one job each, in frame order: cutting,
// converting and preprocessing the subregions into FFT boxes; the spectra's products, pair by
// pair; the LCC window sums and finalisation (the numerics of kernels/lcc_common.cuh, whose
// guard and recomputed windows they reuse); the best map over templates; the peaks of each map.
// device.fourier2.box (kernels/fourier_box.cuh) runs one pair through them too: the kernels are
// static, an instance per translation unit that launches them.
#pragma once

#include "device/kernels/lcc_common.cuh"
#include "device/kernels/template_taps.cuh"
#include "plan/batch_engine.h"

#include <cufft.h>

#include <algorithm>
#include <cfloat>
#include <climits>
#include <cstdint>
#include <type_traits>

namespace flcc::device::batch {

constexpr int kItemThreads = 1024;   // the most; launches take fewer for small subregions
constexpr int kPeakThreads = 512;     // likewise

// Grid extents: enough blocks to fill the GPU, the rest by grid-stride loops.
inline unsigned blocks_for(int64_t n, int threads)
{
    return unsigned(std::min<int64_t>((n + threads - 1) / threads, 1024));
}

// Threads of a block that runs over n elements: a warp per 16 elements, 64 to `most`.
inline unsigned threads_for(int64_t n, int most)
{
    return unsigned(std::min<int64_t>(most, std::max<int64_t>(64, (n / 16 + 31) / 32 * 32)));
}

// i / n for 0 <= i, 0 < n: a float reciprocal and one correction below 2^24 (exact there), the
// integer division above. Per-element divisions by a run-time extent are otherwise a large
// share of these small kernels' instructions.
__device__ inline int quotient(int i, int n, float inv_n)
{
    if (i >= (1 << 24)) return i / n;
    int q = int(float(i) * inv_n);
    if (q * n > i) --q;
    else if ((q + 1) * n <= i) ++q;
    return q;
}

// One side's subregions as the kernels read them. A launch runs several frames: item
// g * count + i is subregion i of the launch's frame g.
struct SideParams {
    const void* in;        // the launch's frames (cut) or stacks, back to back
    flcc_dtype type;
    int count;             // subregions per frame
    int64_t frame_elems;   // input elements per frame
    int h, w;              // subregion extent
    int row;               // row length of the input: the frame's width, or w for a stack
    const int2* origins;   // (row, column) per subregion when cut, else nullptr
    int zero_mean, hann, check_finite;
    int bh, bw;            // the FFT box
    float* compact;        // count x h x w preprocessed values
    float* box;            // count x bh x bw: what is transformed, zero beyond h x w
    int* bad;              // the lowest index of a subregion holding NaN or Inf (atomicMin)
};

// How the pairs are formed (flcc.h: PAIRWISE by multiples, ALL_PAIRS), over the launch's
// `frames` frames: pair g * pairs + p is pair p of frame g, with that frame's images and its own
// template set (templ_sets) or the one set.
struct Pairing {
    int pairs, images, templates, all_pairs, frames, templ_sets;
    __device__ int total() const { return frames * pairs; }
    __device__ int image_of(int pair) const
    {
        const int g = pair / pairs, p = pair - g * pairs;
        return g * images + (all_pairs ? p / templates : int(int64_t(p) * images / pairs));
    }
    __device__ int templ_of(int pair) const
    {
        const int g = pair / pairs, p = pair - g * pairs;
        const int t = all_pairs ? p % templates : int(int64_t(p) * templates / pairs);
        return templ_sets ? g * templates + t : t;
    }
};

// Where subregion `item` starts in the launch's input, and its row stride.
struct ItemView {
    int64_t base;
    int64_t row;
};

__device__ inline ItemView item_view(const SideParams& p, int item)
{
    const int g = item / p.count, k = item - g * p.count;
    if (p.origins != nullptr)
        return {g * p.frame_elems + int64_t(p.origins[k].x) * p.row + p.origins[k].y, p.row};
    return {g * p.frame_elems + int64_t(k) * p.h * p.w, p.w};
}

__device__ inline float load(const SideParams& p, const ItemView& v, int r, int c)
{
    const int64_t i = v.base + r * v.row + c;
    switch (p.type) {
    case FLCC_UINT16: return float(static_cast<const uint16_t*>(p.in)[i]);
    case FLCC_UINT8: return float(static_cast<const uint8_t*>(p.in)[i]);
    case FLCC_FLOAT32: break;
    }
    return static_cast<const float*>(p.in)[i];
}

// numpy.hanning(n) at i (1 for n = 1), in double as the host's preprocessing.
__device__ inline double hann_weight(int i, int n)
{
    return n == 1 ? 1.0 : 0.5 - 0.5 * cos(2 * 3.14159265358979323846 * double(i) / double(n - 1));
}

// Converts and preprocesses subregion `item` into p.compact (zero mean, then Hann, each rounded
// to float as on the host) and returns the statistics of the result, every thread of the block
// taking part.
__device__ inline detail::Stats write_compact(const SideParams& p, int item, double* scratch)
{
    const int n = p.h * p.w;
    const float inv_w = 1.f / float(p.w);
    const ItemView view = item_view(p, item);
    double mean = 0;
    if (p.zero_mean) {
        double part = 0;
        for (int i = threadIdx.x; i < n; i += blockDim.x) {
            const int r = quotient(i, p.w, inv_w);
            part += load(p, view, r, i - r * p.w);
        }
        mean = block_sum(part, scratch) / double(n);
    }
    float* out = p.compact + int64_t(item) * n;
    detail::Stats s{0.0, FLT_MAX, -FLT_MAX, 1, 1, 0};
#pragma unroll 4
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        const int r = quotient(i, p.w, inv_w), c = i - r * p.w;
        float v = load(p, view, r, c);
        if (p.zero_mean) v = float(double(v) - mean);
        if (p.hann) v = float(double(v) * (hann_weight(r, p.h) * hann_weight(c, p.w)));
        out[i] = v;
        s.sum += v;
        s.lo = fminf(s.lo, v);
        s.hi = fmaxf(s.hi, v);
        s.integral &= v == rintf(v);
        s.finite &= isfinite(v);
        ++s.count;
    }
    s = detail::block_reduce(s, scratch);
    if (!s.finite && p.check_finite && threadIdx.x == 0) atomicMin(p.bad, item);
    __syncthreads();   // out is read by other threads next
    return s;
}

// LCC's per-image decisions (kernels/lcc_common.cuh's TileMode): the whole subregion is one tile,
// a boundary tile (not centred) unless the region is VALID, where no window reaches the padding.
struct ImageForm {
    int lcc, boundary;
    double n, guard;
    double log2_box;   // log2 of the transform's volume
    TileMode* modes;
    double* bounds;    // the FFT numerator's error bound per image (see finalise)
};

// The host's rule for its Fourier numerators (src/host/fourier_accuracy.h): the FFT's rounding
// error in a numerator is relative to the whole transform's energy, |dN| <= E =
// 4 u sqrt(log2 V) rms(x), so a coefficient whose window has sqrt(D) = |N / r| < E / 1e-6 is
// recomputed directly in double.
constexpr double kFftError = 4, kTargetError = 1e-6;

// The a-posteriori rule for an output of numerator num, coefficient v and window sums s1, s2
// (coefficient()'s arguments): recompute when the window's deviation sqrt(d) lies below
// bound / kTargetError. Where v != 0, sqrt(d) = |num / v|. A numerator that came out exactly
// 0 (its terms cancelled within the transform's error: a window of small variance beside large
// values) says nothing of d, which is then taken from the window sums, unless coefficient()
// zeroed the window as flat.
__device__ inline bool fft_suspect(float num, float v, double s1, double s2, const TileMode& t, double n,
                                   double inv_n, double bound)
{
    if (v != 0.f) return fabs(double(num)) * kTargetError < bound * fabs(double(v));
    if (num != 0.f) return false;
    const double p1 = n * s2, dn = fma(-s1, s1, p1);
    return dn > flat_limit(t, p1) && sqrt(dn * inv_n) * kTargetError < bound;
}

// Image `item` by one block: its compact values, then its box (LCC: centred and scaled by its
// mode; the box's zeros beyond the image are written once, when it is allocated). Returns the
// compact values' statistics.
__device__ inline detail::Stats prepare_image_item(const SideParams& p, const ImageForm& f, int item, double* scratch)
{
    const detail::Stats s = write_compact(p, item, scratch);
    TileMode t{};
    t.c = 0.f;
    t.scale = 1;
    if (f.lcc) {
        t = decide(s, f.boundary, f.n, f.guard);
        if (threadIdx.x == 0) f.modes[item] = t;
    }
    const float* src = p.compact + int64_t(item) * p.h * p.w;
    float* box = p.box + int64_t(item) * p.bh * p.bw;
    const float scale = float(t.scale), inv_w = 1.f / float(p.w);
    double energy = 0;
#pragma unroll 4
    for (int i = threadIdx.x; i < p.h * p.w; i += blockDim.x) {
        const int r = quotient(i, p.w, inv_w), c = i - r * p.w;
        float v = src[i];
        if (f.lcc) {
            v = (v - t.c) * scale;
            energy = fma(double(v), double(v), energy);
        }
        box[r * p.bw + c] = v;
    }
    if (f.lcc) {
        energy = block_sum(energy, scratch);
        if (threadIdx.x == 0)
            f.bounds[item] = kFftError * 0x1p-24 * sqrt(f.log2_box * energy / (double(p.h) * p.w));
    }
    return s;
}

// One block per image.
static __global__ void __launch_bounds__(kItemThreads) prepare_images(SideParams p, ImageForm f)
{
    __shared__ double scratch[kScratchDoubles];
    prepare_image_item(p, f, blockIdx.x, scratch);
}

struct TemplForm {
    int lcc;
    float* taps;       // LCC: count x h x w, the normalised zero-mean template (correlation order)
    double* tap_sum;   // LCC: their sums
};

// Template `item` by one block: its compact values, then its box: LCC the taps (zeros for a
// constant template, whose maps are then 0), else the values (the zeros beyond, as for the
// images). Returns the compact values' statistics.
__device__ inline detail::Stats prepare_template_item(const SideParams& p, const TemplForm& f, int item, double* scratch)
{
    const int n = p.h * p.w;
    const detail::Stats s = write_compact(p, item, scratch);
    const float* src = p.compact + int64_t(item) * n;
    TapForm form{};
    if (f.lcc) form = tap_form_in_range(src, n, true, s, scratch);   // s: the same values' range
    float* box = p.box + int64_t(item) * p.bh * p.bw;
    const float inv_w = 1.f / float(p.w);
    double part = 0;
#pragma unroll 4
    for (int k = threadIdx.x; k < n; k += blockDim.x) {
        const int r = quotient(k, p.w, inv_w), c = k - r * p.w;
        const float v = f.lcc ? tap_value(src, n, k, true, form) : src[k];
        if (f.lcc) f.taps[int64_t(item) * n + k] = v;
        part += v;
        box[r * p.bw + c] = v;
    }
    const double sum = block_sum(part, scratch);
    if (f.lcc && threadIdx.x == 0) f.tap_sum[item] = sum;
    return s;
}

// One block per template.
static __global__ void __launch_bounds__(kItemThreads) prepare_templates(SideParams p, TemplForm f)
{
    __shared__ double scratch[kScratchDoubles];
    prepare_template_item(p, f, blockIdx.x, scratch);
}

// Per pair: the image's spectrum times the template's (conjugated to correlate), scaled by
// 1 / box so that the inverse transform gives the sums themselves. V complex values per thread
// (2: as float4, when a spectrum's length is even).
template <int V>
static __global__ void multiply(const cufftComplex* images, const cufftComplex* templs, cufftComplex* out,
                         int64_t half, Pairing pairing, int correlate, float scale)
{
    using Vec = std::conditional_t<V == 2, float4, float2>;
    const int64_t n = half / V;
    const float sign = correlate ? -1.f : 1.f;
    for (int p = blockIdx.y; p < pairing.total(); p += gridDim.y) {
        const Vec* a = reinterpret_cast<const Vec*>(images + int64_t(pairing.image_of(p)) * half);
        const Vec* b = reinterpret_cast<const Vec*>(templs + int64_t(pairing.templ_of(p)) * half);
        Vec* o = reinterpret_cast<Vec*>(out + int64_t(p) * half);
        for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n;
             e += int64_t(gridDim.x) * blockDim.x) {
            const Vec x = a[e], y = b[e];
            Vec r;
            r.x = (x.x * y.x - x.y * (sign * y.y)) * scale;
            r.y = (x.x * (sign * y.y) + x.y * y.x) * scale;
            if constexpr (V == 2) {
                r.z = (x.z * y.z - x.w * (sign * y.w)) * scale;
                r.w = (x.z * (sign * y.w) + x.w * y.z) * scale;
            }
            o[e] = r;
        }
    }
}

// The horizontal window sums of LCC: for each image row and output column, the sums of x and
// x^2 over the output's window columns [oc - P2, oc - P2 + T2) inside the image (the padding
// is zero), in double. Tasks of kChunk output columns: a first window of up to T2 terms, then
// one add and one subtract per step (rounding bound: geometry::tile_kernel_guard).
constexpr int kChunk = 16;

struct SumsParams {
    const float* box;   // the images' boxes (centred and scaled)
    int items, bh, bw, h, w, T2, O2, P2;
    double* h1;         // items x h x O2
    double* h2;
};

static __global__ void window_rows(SumsParams q)
{
    const int chunks = (q.O2 + kChunk - 1) / kChunk;
    const int64_t tasks = int64_t(q.items) * q.h * chunks;
    const float inv_chunks = 1.f / float(chunks), inv_h = 1.f / float(q.h);
    for (int64_t t = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; t < tasks;
         t += int64_t(gridDim.x) * blockDim.x) {
        const int row = t < (1 << 24) ? quotient(int(t), chunks, inv_chunks) : int(t / chunks);
        const int chunk = int(t - int64_t(row) * chunks);
        const int item = quotient(row, q.h, inv_h), r = row - item * q.h;
        const float* x = q.box + (int64_t(item) * q.bh + r) * q.bw;
        const int c0 = chunk * kChunk, c1 = min(c0 + kChunk, q.O2);
        double a1 = 0, a2 = 0;
        for (int j = max(0, c0 - q.P2); j <= min(q.w - 1, c0 - q.P2 + q.T2 - 1); ++j) {
            const double v = x[j];
            a1 += v;
            a2 = fma(v, v, a2);
        }
        double* h1 = q.h1 + int64_t(row) * q.O2;
        double* h2 = q.h2 + int64_t(row) * q.O2;
        for (int oc = c0; oc < c1; ++oc) {
            h1[oc] = a1;
            h2[oc] = a2;
            const int come = oc - q.P2 + q.T2, gone = oc - q.P2;
            const double a = come >= 0 && come < q.w ? double(x[come]) : 0.0;
            const double b = gone >= 0 && gone < q.w ? double(x[gone]) : 0.0;
            a1 = (a1 + a) - b;
            a2 = fma(-b, b, fma(a, a, a2));
        }
    }
}

struct FinalParams {
    const float* circ;   // pairs x bh x bw: the circular correlations (convolutions)
    int bh, bw, h, w, T1, T2, O1, O2, P1, P2;
    Pairing pairing;
    int lcc, correlate;
    double n;
    const double* h1;    // the images' horizontal window sums (window_rows)
    const double* h2;
    const TileMode* modes;
    const double* bounds;
    const float* images;    // the images' compact values (recomputed windows)
    const float* taps;      // the templates' taps
    const double* tap_sum;
    float* maps;            // pairs x O1 x O2
};

// Where output (r, c) lies in its pair's circular result: correlation the lag (r - P1, c - P2),
// convolution the full index (r + T1 - 1 - P1, c + T2 - 1 - P2), wrapped by the box.
// A pair's box holds fewer than 2^31 values: the index is an int, so that the finalisations'
// per-output address arithmetic stays in 32 bits.
__device__ inline int circular_index(const FinalParams& q, int r, int c)
{
    int i0 = q.correlate ? r - q.P1 : r + q.T1 - 1 - q.P1, i1 = q.correlate ? c - q.P2 : c + q.T2 - 1 - q.P2;
    if (i0 < 0) i0 += q.bh;
    if (i1 < 0) i1 += q.bw;
    return i0 * q.bw + i1;
}

// Output (r, c) of a pair of `image` and `templ` recomputed in double from the compact values
// (lcc_common.cuh's Window), clamped.
__device__ inline float recomputed_output(const FinalParams& q, int image, int templ, int r, int c)
{
    Window win;
    win.box[0] = 0;
    win.box[1] = r - q.P1;
    win.box[2] = c - q.P2;
    win.S[0] = 1, win.S[1] = q.h, win.S[2] = q.w;
    win.T[0] = 1, win.T[1] = q.T1, win.T[2] = q.T2;
    win.tap_row = q.T2;
    win.n = q.n;
    win.tap_sum = q.tap_sum[templ];
    const float v =
        recomputed_inline(win, q.images + int64_t(image) * q.h * q.w, q.taps + int64_t(templ) * q.T1 * q.T2);
    return fminf(fmaxf(v, -1.f), 1.f);
}

// Output rows per finalise task: its window sums run down them after a first window of T1.
constexpr int kFinalRows = 32;

// Per pair and output: the map value from the circular result (a linear one, as the box leaves
// no wrap inside the region) and, for LCC, the vertical window sums over the window rows
// [r - P1, r - P1 + T1) inside the image, the guard and the recomputed windows. A task is one
// output column over kFinalRows rows, neighbouring tasks neighbouring columns.
static __global__ void finalise(FinalParams q)
{
    const int chunks = (q.O1 + kFinalRows - 1) / kFinalRows, tasks = chunks * q.O2;
    const int64_t outs = int64_t(q.O1) * q.O2, boxes = int64_t(q.bh) * q.bw;
    const float inv_o2 = 1.f / float(q.O2);
    const double inv_n = 1.0 / q.n;
    for (int p = blockIdx.y; p < q.pairing.total(); p += gridDim.y) {
        const float* circ = q.circ + p * boxes;
        float* map = q.maps + p * outs;
        const int image = q.pairing.image_of(p), templ = q.pairing.templ_of(p);
        const double* h1 = q.h1 + int64_t(image) * q.h * q.O2;
        const double* h2 = q.h2 + int64_t(image) * q.h * q.O2;
        for (int t = blockIdx.x * blockDim.x + threadIdx.x; t < tasks; t += gridDim.x * blockDim.x) {
            const int chunk = quotient(t, q.O2, inv_o2), c = t - chunk * q.O2;
            const int r0 = chunk * kFinalRows, r1 = min(r0 + kFinalRows, q.O1);
            if (!q.lcc) {
                for (int r = r0; r < r1; ++r) map[int64_t(r) * q.O2 + c] = circ[circular_index(q, r, c)];
                continue;
            }
            const TileMode tm = q.modes[image];
            const double bound = q.bounds[image];
            double s1 = 0, s2 = 0;
            for (int j = max(0, r0 - q.P1); j <= min(q.h - 1, r0 - q.P1 + q.T1 - 1); ++j) {
                s1 += h1[int64_t(j) * q.O2 + c];
                s2 += h2[int64_t(j) * q.O2 + c];
            }
            for (int r = r0; r < r1; ++r) {
                const float num = circ[circular_index(q, r, c)];
                bool redo;
                float v = coefficient(num, s1, s2, tm, q.n, inv_n, redo);
                redo |= fft_suspect(num, v, s1, s2, tm, q.n, inv_n, bound);
                if (redo) {
                    v = recomputed_output(q, image, templ, r, c);
                }
                map[int64_t(r) * q.O2 + c] = v;
                const int come = r - q.P1 + q.T1, gone = r - q.P1;
                if (come >= 0 && come < q.h) s1 += h1[int64_t(come) * q.O2 + c], s2 += h2[int64_t(come) * q.O2 + c];
                if (gone >= 0 && gone < q.h) s1 -= h1[int64_t(gone) * q.O2 + c], s2 -= h2[int64_t(gone) * q.O2 + c];
            }
        }
    }
}

// The LCC finalisation for subregions of up to kBandedWidth columns, one block per pair, with
// the window sums made in shared memory, band by band of kBand output rows:
// - the vertical running sums of x and x^2 over each output row's window rows, one thread per
//   image column, carried from band to band;
// - their prefix sums along each band row (a warp per row), so that an output's horizontal
//   window sum is one difference;
// - the coefficient of every output of the band, as in finalise.
// This is the summation of the GPU's 2D Fourier tiles with rows and columns swapped (the first
// window in runs of rows, see below); its rounding bound is geometry::fourier_tile_guard_2d's.
constexpr int kBand = 16;
constexpr int kBandedWidth = 256;    // a thread per column; 2 x kBand x 257 doubles: 64 KiB
constexpr int kBandedThreads = 256;

// The band buffer of finalise_pair_banded for subregions w columns wide: two sums, kBand rows
// of w + 1 prefix sums each.
__host__ __device__ inline int64_t banded_doubles(int64_t w) { return 2 * int64_t(kBand) * (w + 1); }

// Inclusive prefix sums of a[0], a[stride], ..., a[(n - 1) stride] and of b likewise, by one
// warp, 32 entries at a time.
__device__ inline void warp_prefix_sums(double* a, double* b, int n, int stride)
{
    const int lane = threadIdx.x & 31;
    double carry1 = 0, carry2 = 0;
    for (int j0 = 0; j0 < n; j0 += 32) {
        const int j = j0 + lane;
        double v1 = j < n ? a[j * stride] : 0.0, v2 = j < n ? b[j * stride] : 0.0;
        for (int d = 1; d < 32; d <<= 1) {
            const double u1 = __shfl_up_sync(0xffffffffu, v1, d);
            const double u2 = __shfl_up_sync(0xffffffffu, v2, d);
            if (lane >= d) v1 += u1, v2 += u2;
        }
        v1 += carry1;
        v2 += carry2;
        if (j < n) a[j * stride] = v1, b[j * stride] = v2;
        carry1 = __shfl_sync(0xffffffffu, v1, 31);
        carry2 = __shfl_sync(0xffffffffu, v2, 31);
    }
}

// Loads a thread keeps in flight where it reads many values from global memory, each used once
// (a map's values in the peak search, the numerators in the finalisations): a loop that uses
// each value before the next load issues waits on every load's latency. Readers of shared
// memory take one at a time: its latency is short, and the registers of more would cost the
// per-block kernels occupancy.
constexpr int kLoadsInFlight = 8;

// f(i, load(i)) for this thread's i = rank + k size < n, in ascending order, Loads loads issued
// before the first value is used.
template <int Loads, class Load, class F>
__device__ inline void for_each_loaded(int n, int rank, int size, Load load, F f)
{
    for (int base = rank; base < n; base += Loads * size) {
        float v[Loads];
#pragma unroll
        for (int u = 0; u < Loads; ++u) {
            const int i = base + u * size;
            v[u] = i < n ? load(i) : 0.f;
        }
#pragma unroll
        for (int u = 0; u < Loads; ++u) {
            const int i = base + u * size;
            if (i < n) f(i, v[u]);
        }
    }
}

// f(i, values[i]) as for_each_loaded.
template <class F>
__device__ inline void for_each_value(const float* values, int n, int rank, int size, F f)
{
    for_each_loaded<kLoadsInFlight>(n, rank, size, [&](int i) { return values[i]; }, f);
}

// The outputs t, t + step, t + 2 step, ... of a row-major run of rows `cols` wide, from row r0
// on, as (row, column) advanced by additions, so that no output of the finalisations' loops
// costs a division.
struct OutputWalk {
    int r, oc, dr, dc, cols;

    __device__ OutputWalk(int t, int step, int r0, int cols_) : cols(cols_)
    {
        const float inv = 1.f / float(cols);
        const int k = quotient(t, cols, inv), d = quotient(step, cols, inv);
        r = r0 + k;
        oc = t - k * cols;
        dr = d;
        dc = step - d * cols;
    }

    __device__ void advance()
    {
        r += dr;
        oc += dc;
        if (oc >= cols) oc -= cols, ++r;
    }
};

// The coefficients of pair p's outputs from row r0 on, `count` of them in row-major order:
// sums(r, oc, s1, s2) gives output (r, oc)'s window sums of x and x^2, num(r, oc) its numerator.
// A coefficient whose |numerator| lies within `bound` x 1e6 of its error is recomputed (0: only
// what coefficient() asks). Each thread notes its outputs to recompute (a FULL region's corner
// windows, in nearly every map) in a bit mask and recomputes them after its loop, 64 outputs
// per thread at a time, so that the call and its registers stay out of the loop. The numerators
// are read Loads at a time (for_each_loaded).
template <int Loads, class Sums, class Num>
__device__ inline void store_coefficients(const FinalParams& q, int p, int r0, int count, Sums sums, Num num,
                                          double bound)
{
    const float inv_o2 = 1.f / float(q.O2);
    const double inv_n = 1.0 / q.n;
    float* map = q.maps + p * int64_t(q.O1) * q.O2;
    const int image = q.pairing.image_of(p);
    const TileMode tm = q.modes[image];
    const auto place = [&](int t, int& r, int& oc) {
        const int k = quotient(t, q.O2, inv_o2);
        oc = t - k * q.O2;
        r = r0 + k;
    };
    const int templ = q.pairing.templ_of(p), chunk = 64 * int(blockDim.x);
    // The thread's outputs in the order it visits them, chunk after chunk: the loads' walk and
    // the stores' (the same outputs, Loads behind).
    OutputWalk loads(threadIdx.x, blockDim.x, r0, q.O2), stores = loads;
    for (int first = 0; first < count; first += chunk) {
        const int n = min(count - first, chunk);
        uint64_t marks = 0;
        int bit = 0;
        // Output (r, oc)'s coefficient from its numerator, stored, its recomputation noted.
        const auto store = [&](int r, int oc, float nu) {
            double s1, s2;
            sums(r, oc, s1, s2);
            bool redo;
            const float v = coefficient(nu, s1, s2, tm, q.n, inv_n, redo);
            redo |= fft_suspect(nu, v, s1, s2, tm, q.n, inv_n, bound);
            map[r * q.O2 + oc] = v;
            marks |= uint64_t(redo) << bit++;
        };
        // One load at a time (the shared-memory readers, see kLoadsInFlight): a plain loop.
        if constexpr (Loads == 1) {
            for (int i = threadIdx.x; i < n; i += blockDim.x) {
                store(stores.r, stores.oc, num(stores.r, stores.oc));
                stores.advance();
            }
        } else {
            for_each_loaded<Loads>(
                n, threadIdx.x, blockDim.x,
                [&](int) {
                    const float v = num(loads.r, loads.oc);
                    loads.advance();
                    return v;
                },
                [&](int, float nu) {
                    store(stores.r, stores.oc, nu);
                    stores.advance();
                });
        }
        while (marks != 0) {
            int r, oc;
            place(first + threadIdx.x + (__ffsll(marks) - 1) * blockDim.x, r, oc);
            marks &= marks - 1;
            map[int64_t(r) * q.O2 + oc] = recomputed_output(q, image, templ, r, oc);
        }
    }
}

// The window sums of x and x^2 of output column oc in band row k, from the band's prefix sums
// that banded_window_sums leaves: b1 = band, b2 = band + kBand row, row = w + 1.
__device__ inline void band_sums(const FinalParams& q, const double* b1, const double* b2, int row, int k, int oc,
                                 double& s1, double& s2)
{
    const int lo = max(0, oc - q.P2), hi = min(q.w, oc - q.P2 + q.T2);
    const double* v1 = b1 + k * row;
    const double* v2 = b2 + k * row;
    s1 = v1[hi] - v1[lo];
    s2 = v2[hi] - v2[lo];
}

// The window sums of the output rows [first, last), band by band of kBand rows: x(j, c) is the
// image's box value (centred and scaled) at image row j, column c. `band` holds 2 x kBand x
// (w + 1) doubles; blockDim.x >= w (a thread per column, at least). Loads: values of x loaded
// before the first is used (for_each_loaded). Per band, done(r0, rows) once its sums are
// ready (band_sums), every thread of the block calling it.
// The vertical running sums start with a window of T1 rows at `first` and run last - first
// steps: fourier_tile_guard_2d(T1, T2, O2, last - first) bounds their rounding.
template <int Loads, class X, class Done>
__device__ inline void banded_window_sums(const FinalParams& q, X x, double* band, int first, int last, Done done)
{
    const int row = q.w + 1;
    double* b1 = band;
    double* b2 = band + kBand * row;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    // The first window: `parts` threads per column each sum a run of its rows (the block's
    // threads beyond w would idle, and this is the block's longest chain of loads), then the
    // column's thread adds the runs in order.
    const int parts = min(kBand, int(blockDim.x) / q.w);
    const int c = threadIdx.x % q.w, part = threadIdx.x / q.w;
    double a1 = 0, a2 = 0;
    {
        const int lo = max(0, first - q.P1), hi = min(q.h - 1, first + q.T1 - 1 - q.P1) + 1;
        const int run = (max(0, hi - lo) + parts - 1) / parts;
        if (part < parts) {
#pragma unroll 8
            for (int j = lo + part * run; j < min(hi, lo + (part + 1) * run); ++j) {
                const double v = x(j, c);
                a1 += v;
                a2 = fma(v, v, a2);
            }
            if (part > 0) {
                b1[part * q.w + c] = a1;
                b2[part * q.w + c] = a2;
            }
        }
        __syncthreads();
        if (part == 0)
            for (int k = 1; k < parts; ++k) {
                a1 += b1[k * q.w + c];
                a2 += b2[k * q.w + c];
            }
        __syncthreads();   // the runs are read before the band rows overwrite them
    }
    for (int r0 = first; r0 < last; r0 += kBand) {
        const int rows = min(kBand, last - r0);
        if (part == 0) {
            // The rows that enter and leave the windows, loaded Loads rows at a time.
            for (int k0 = 0; k0 < rows; k0 += Loads) {
                float come[Loads], gone[Loads];
#pragma unroll
                for (int u = 0; u < Loads; ++u) {
                    const int j = r0 + k0 + u - q.P1;   // row j leaves, row j + T1 enters
                    const bool step = k0 + u < rows;
                    come[u] = step && j + q.T1 >= 0 && j + q.T1 < q.h ? x(j + q.T1, c) : 0.f;
                    gone[u] = step && j >= 0 && j < q.h ? x(j, c) : 0.f;
                }
#pragma unroll
                for (int u = 0; u < Loads; ++u) {
                    if (k0 + u < rows) {
                        b1[(k0 + u) * row + c + 1] = a1;
                        b2[(k0 + u) * row + c + 1] = a2;
                        const double a = come[u], b = gone[u];
                        a1 = (a1 + a) - b;
                        a2 = fma(-b, b, fma(a, a, a2));
                    }
                }
            }
        }
        __syncthreads();
        // Inclusive scans along each band row (entry 0 stays 0).
        for (int k = warp; k < rows; k += warps) {
            warp_prefix_sums(b1 + k * row + 1, b2 + k * row + 1, q.w, 1);
            if (lane == 0) b1[k * row] = 0, b2[k * row] = 0;
        }
        __syncthreads();
        done(r0, rows);
        __syncthreads();
    }
}

// The banded finalisation of pair p over output rows [first, last): banded_window_sums, then
// each band's coefficients; num(r, oc) the numerator of output (r, oc), `bound` as in
// store_coefficients, the rest as in banded_window_sums (Loads: of num too).
template <int Loads, class X, class Num>
__device__ inline void finalise_pair_banded(const FinalParams& q, int p, X x, Num num, double bound,
                                            double* band, int first, int last)
{
    const int row = q.w + 1;
    const double* b1 = band;
    const double* b2 = band + kBand * row;
    banded_window_sums<Loads>(q, x, band, first, last, [&](int r0, int rows) {
        store_coefficients<Loads>(
            q, p, r0, rows * q.O2,
            [&](int r, int oc, double& s1, double& s2) { band_sums(q, b1, b2, row, r - r0, oc, s1, s2); }, num, bound);
    });
}

// The table finalisation's summed-area tables for h x w subregions: two sums, (h + 1) x (w + 1)
// entries each.
__host__ __device__ inline int64_t table_doubles(int64_t h, int64_t w) { return 2 * (h + 1) * (w + 1); }

// The finalisation of pair p for subregions whose summed-area tables fit shared memory
// (`table`: table_doubles(h, w)): the tables of x and x^2 (entry (j, c): the sum over image
// rows < j and columns < c), then every output's window sums as four entries each, in one
// pass with no band barriers. x, num and bound as in finalise_pair_banded;
// geometry::summed_area_guard(h, w) bounds the sums' rounding.
template <class X, class Num>
__device__ inline void finalise_pair_table(const FinalParams& q, int p, X x, Num num, double bound, double* table)
{
    const int row = q.w + 1, entries = (q.h + 1) * row;
    double* t1 = table;
    double* t2 = table + entries;
    const int warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    const float inv_row = 1.f / float(row);
    for (int e = threadIdx.x; e < entries; e += blockDim.x) {
        const int j = quotient(e, row, inv_row), c = e - j * row;
        const double v = j > 0 && c > 0 ? double(x(j - 1, c - 1)) : 0.0;
        t1[e] = v;
        t2[e] = v * v;
    }
    __syncthreads();
    for (int j = warp; j < q.h; j += warps) warp_prefix_sums(t1 + (j + 1) * row + 1, t2 + (j + 1) * row + 1, q.w, 1);
    __syncthreads();
    for (int c = warp; c < q.w; c += warps) warp_prefix_sums(t1 + row + c + 1, t2 + row + c + 1, q.h, row);
    __syncthreads();
    store_coefficients<1>(
        q, p, 0, q.O1 * q.O2,
        [&](int r, int oc, double& s1, double& s2) {
            const int r_lo = min(max(0, r - q.P1), q.h), r_hi = max(min(q.h, r - q.P1 + q.T1), r_lo);
            const int c_lo = min(max(0, oc - q.P2), q.w), c_hi = max(min(q.w, oc - q.P2 + q.T2), c_lo);
            const int a = r_lo * row, b = r_hi * row;
            s1 = (t1[b + c_hi] - t1[a + c_hi]) - (t1[b + c_lo] - t1[a + c_lo]);
            s2 = (t2[b + c_hi] - t2[a + c_hi]) - (t2[b + c_lo] - t2[a + c_lo]);
        },
        num, bound);
}

// Blocks of finalise_banded a multiprocessor holds at least: at most 80 registers a thread
// (latency is hidden by more warps, not by more registers per thread).
constexpr int kBandedBlocks = 3;

// Pair p's output rows in blockIdx.y's part of gridDim.y (whole bands each): a launch of fewer
// pairs than the GPU holds blocks splits each pair's rows over several blocks, each with its
// own first window.
static __global__ void __launch_bounds__(kBandedThreads, kBandedBlocks) finalise_banded(FinalParams q, const float* box)
{
    extern __shared__ double band[];   // [2][kBand][w + 1]: exclusive prefix sums per band row
    const int64_t boxes = int64_t(q.bh) * q.bw;
    const int bands = (q.O1 + kBand - 1) / kBand, per_part = (bands + gridDim.y - 1) / gridDim.y;
    const int first = blockIdx.y * per_part * kBand, last = min(q.O1, first + per_part * kBand);
    if (first >= last) return;
    for (int p = blockIdx.x; p < q.pairing.total(); p += gridDim.x) {
        const float* circ = q.circ + p * boxes;
        const float* x = box + int64_t(q.pairing.image_of(p)) * boxes;
        finalise_pair_banded<kLoadsInFlight>(
            q, p, [&](int j, int c) { return x[int64_t(j) * q.bw + c]; },
            [&](int r, int oc) { return circ[circular_index(q, r, oc)]; }, q.bounds[q.pairing.image_of(p)], band,
            first, last);
    }
}

// best_over_templates: per image and output, the highest value over its templates' maps and the
// template (the lower index on ties), into images x 2 x outs (value plane, index plane).
static __global__ void best_of_templates(const float* maps, int images, int templates, int64_t outs, float* best)
{
    for (int i = blockIdx.y; i < images; i += gridDim.y)
        for (int64_t o = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; o < outs;
             o += int64_t(gridDim.x) * blockDim.x) {
            const float* m = maps + int64_t(i) * templates * outs + o;
            float v = m[0];
            int index = 0;
            for (int t = 1; t < templates; ++t)
                if (m[int64_t(t) * outs] > v) {
                    v = m[int64_t(t) * outs];
                    index = t;
                }
            best[int64_t(i) * 2 * outs + o] = v;
            best[int64_t(i) * 2 * outs + outs + o] = float(index);
        }
}

struct PeakParams {
    const float* maps;    // the maps searched, `stride` floats apart
    int64_t stride;
    int index_plane;      // best_over_templates: the index plane follows each map
    int O1, O2, k, exclusion, radius;
    int flat_at[2];
    EnginePeak* peaks;    // per map, k
    float* patches;       // per peak, (2 radius + 1)^2
};

struct Candidate {
    float v;
    int i;
};

// The higher value, then the lower index.
__device__ inline Candidate better(Candidate a, Candidate b)
{
    return b.v > a.v || (b.v == a.v && b.i < a.i) ? b : a;
}

// The threads that search one map (find_peaks): a whole block, for large maps, or one warp, for
// small ones, many maps to a block with no barriers. rank() and size() give a thread's place in
// the team; reduce, sum and argmax give every thread of the team the team's result (a warp's
// sums round per lane: the search writes thread 0's).
struct WarpTeam {
    __device__ int rank() const { return threadIdx.x & 31; }
    __device__ int size() const { return 32; }
    __device__ detail::Stats reduce(detail::Stats s) const { return detail::warp_reduce(s); }
    __device__ double sum(double v) const
    {
        for (int d = 16; d > 0; d >>= 1) v += __shfl_xor_sync(0xffffffffu, v, d);
        return v;
    }
    __device__ Candidate argmax(Candidate c) const
    {
        for (int d = 16; d > 0; d >>= 1)
            c = better(c, {__shfl_xor_sync(0xffffffffu, c.v, d), __shfl_xor_sync(0xffffffffu, c.i, d)});
        return c;
    }
};

struct BlockTeam {
    double* scratch;     // kScratchDoubles
    Candidate* shared;   // 32
    __device__ int rank() const { return threadIdx.x; }
    __device__ int size() const { return blockDim.x; }
    __device__ detail::Stats reduce(detail::Stats s) const { return detail::block_reduce(s, scratch); }
    __device__ double sum(double v) const { return block_sum(v, scratch); }
    __device__ Candidate argmax(Candidate c) const
    {
        c = WarpTeam{}.argmax(c);
        __syncthreads();
        if ((threadIdx.x & 31) == 0) shared[threadIdx.x >> 5] = c;
        __syncthreads();
        Candidate best{-INFINITY, INT_MAX};
        for (int w = 0; w < int(blockDim.x + 31) / 32; ++w) best = better(best, shared[w]);
        return best;
    }
};

// Peaks per map the kernels find at most (flcc.h: batch.peaks).
constexpr int kMostPeaks = 64;

// Map m's peaks by `team`: greedy non-maximum suppression for k peaks, each with its sidelobe
// measures and its patch (host/peaks.h's rules; a flat map gives one unrefined peak at
// flat_at). The first search also finds whether the map is flat. Every thread keeps the peaks
// found so far, known to the whole team, so that no search waits for another thread's write.
template <class Team>
__device__ inline void search_map(const PeakParams& q, int m, const Team& team)
{
    int found_r[kMostPeaks], found_c[kMostPeaks];
    const int outs = q.O1 * q.O2, tid = team.rank(), size = team.size();
    const float inv_o2 = 1.f / float(q.O2);
    const float* map = q.maps + m * q.stride;
    const float* index = q.index_plane ? map + outs : nullptr;
    EnginePeak* out = q.peaks + int64_t(m) * q.k;
    const int side = 2 * q.radius + 1;
    float* patches = q.patches + int64_t(m) * q.k * side * side;
    // Thread 0 writes every peak, so that the team's writes to `out` need no ordering.
    if (tid == 0)
        for (int j = 0; j < q.k; ++j) out[j] = EnginePeak{NAN, {-1, -1, -1}, NAN, NAN, 0, -1, {0, 0, 0}, {0, 0, 0}};

    for (int j = 0; j < q.k; ++j) {
        Candidate c{-INFINITY, INT_MAX};
        detail::Stats range{0.0, FLT_MAX, -FLT_MAX, 1, 1, 0};
        for_each_value(map, outs, tid, size, [&](int i, float v) {
            if (!isfinite(v)) return;
            if (j == 0) {
                range.lo = fminf(range.lo, v);
                range.hi = fmaxf(range.hi, v);
                ++range.count;
            }
            if (!(v > c.v)) return;   // ascending i: ties keep the first
            bool near = false;
            if (j > 0) {
                const int r = quotient(i, q.O2, inv_o2), col = i - r * q.O2;
                for (int e = 0; e < j; ++e)
                    near |= abs(r - found_r[e]) <= q.exclusion && abs(col - found_c[e]) <= q.exclusion;
            }
            if (!near) c = {v, i};
        });
        if (j == 0) {
            range = team.reduce(range);
            if (!(range.count > 0 && range.lo < range.hi)) {   // flat: every finite value equal, or none
                if (tid == 0) {
                    EnginePeak& p = out[0];
                    p.value = range.count > 0 ? range.hi : NAN;
                    p.at[0] = 0, p.at[1] = q.flat_at[0], p.at[2] = q.flat_at[1];
                    p.quality = 0.f;
                    p.psr = 0.f;
                    p.flat = 1;
                    p.templ = index != nullptr ? int(index[q.flat_at[0] * q.O2 + q.flat_at[1]]) : -1;
                }
                return;
            }
        }
        c = team.argmax(c);
        if (c.i == INT_MAX) return;   // fewer candidates than peaks
        const int pr = quotient(c.i, q.O2, inv_o2), pc = c.i - pr * q.O2;
        found_r[j] = pr, found_c[j] = pc;
        // The sidelobe: the finite values farther than `exclusion` from this peak.
        detail::Stats lobe{0.0, FLT_MAX, -FLT_MAX, 1, 1, 0};
        double sum2 = 0;
        for_each_value(map, outs, tid, size, [&](int i, float v) {
            if (!isfinite(v)) return;
            const int r = quotient(i, q.O2, inv_o2), col = i - r * q.O2;
            if (abs(r - pr) <= q.exclusion && abs(col - pc) <= q.exclusion) return;
            lobe.sum += v;
            sum2 = fma(double(v), double(v), sum2);
            lobe.hi = fmaxf(lobe.hi, v);
            ++lobe.count;
        });
        lobe = team.reduce(lobe);
        sum2 = team.sum(sum2);
        const int lo0 = max(pr - q.radius, 0), hi0 = min(pr + q.radius, q.O1 - 1);
        const int lo1 = max(pc - q.radius, 0), hi1 = min(pc + q.radius, q.O2 - 1);
        const int e0 = hi0 - lo0 + 1, e1 = hi1 - lo1 + 1;
        float* patch = patches + int64_t(j) * side * side;
        for (int i = tid; i < e0 * e1; i += size) patch[i] = map[int64_t(lo0 + i / e1) * q.O2 + lo1 + i % e1];
        if (tid == 0) {
            EnginePeak& p = out[j];
            p.value = c.v;
            p.at[0] = 0, p.at[1] = pr, p.at[2] = pc;
            const double second = lobe.count > 0 ? double(lobe.hi) : -INFINITY;
            p.quality = float(lobe.count == 0 || second <= 0 ? INFINITY : double(c.v) / second);
            p.psr = 0.f;
            if (lobe.count > 0) {
                const double mean = lobe.sum / double(lobe.count);
                const double var = fmax(0.0, sum2 / double(lobe.count) - mean * mean);
                p.psr = var > 0 ? float((double(c.v) - mean) / sqrt(var)) : 0.f;
            }
            p.flat = 0;
            p.templ = index != nullptr ? int(index[c.i]) : -1;
            p.patch_lo[0] = 0, p.patch_lo[1] = lo0, p.patch_lo[2] = lo1;
            p.patch_extent[0] = 1, p.patch_extent[1] = e0, p.patch_extent[2] = e1;
        }
    }
}

// Maps of up to kWarpMapValues values, at least kPeakWarps per multiprocessor, are searched by a
// warp each, kPeakWarps maps per block; others by a block each. A block's search of a small map
// spends its time in its barriers and reductions, and a multiprocessor holds only a few such
// blocks; a warp's search takes longer than a block's, which only many maps at once hide.
constexpr int kWarpMapValues = 64 * 64;
constexpr int kPeakWarps = 8;

// One block per map.
static __global__ void __launch_bounds__(kPeakThreads) find_peaks(PeakParams q)
{
    __shared__ double scratch[kScratchDoubles];
    __shared__ Candidate shared[32];
    search_map(q, blockIdx.x, BlockTeam{scratch, shared});
}

// One warp per map, of `maps`.
static __global__ void __launch_bounds__(kPeakWarps * 32) find_peaks_by_warps(PeakParams q, int maps)
{
    const int m = blockIdx.x * kPeakWarps + (threadIdx.x >> 5);
    if (m < maps) search_map(q, m, WarpTeam{});
}

}  // namespace flcc::device::batch
