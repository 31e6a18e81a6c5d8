// Element-wise passes over a tile: copying image values in, centred, while gathering their
// statistics (the finite check rides on this pass), the slow path for extreme magnitudes, and
// the Fourier numerator's copy into its transform buffer and its spectral product.
#pragma once

#include "host/kernels/kernel_set.h"
#include "host/kernels/simd.h"

#include <algorithm>
#include <cmath>

namespace flcc::host::FLCC_ISA_NS {

typedef int32_t vi32 __attribute__((vector_size(kVectorBytes)));

// dst = src - c, gathering the statistics of src: min, max, finiteness (x - x stays 0 for
// finite x and turns NaN otherwise) and whether every value is an integer.
inline void copy_centre(float* dst, const float* src, int64_t n, float c, TileStats& st)
{
    if (n <= 0) return;
    vf mn = splat(src[0]), mx = mn, nan_acc{};
    vi32 nonint{};
    const vf vc = splat(c);
    int64_t i = 0;
    for (; i + kFloats <= n; i += kFloats) {
        const vf v = loadu(src + i);
        storeu(dst + i, v - vc);
        mn = vmin(mn, v);
        mx = vmax(mx, v);
        nan_acc += v - v;
        nonint |= (vi32)(vtrunc(v) != v);   // NaN is never equal
    }
    float lo = mn[0], hi = mx[0], bad = 0;
    bool integral = true;
    for (int k = 0; k < kFloats; ++k) {
        lo = std::min(lo, mn[k]);
        hi = std::max(hi, mx[k]);
        bad += nan_acc[k];
        integral &= nonint[k] == 0;
    }
    for (; i < n; ++i) {
        const float v = src[i];
        dst[i] = v - c;
        lo = std::min(lo, v);
        hi = std::max(hi, v);
        bad += v - v;
        integral &= v == std::trunc(v);
    }
    if (st.count == 0) {
        st.vmin = lo;
        st.vmax = hi;
    } else {
        st.vmin = std::min(st.vmin, lo);
        st.vmax = std::max(st.vmax, hi);
    }
    st.finite = st.finite && bad == 0;
    st.integral = st.integral && integral;
    st.count += n;
}

// dst = (src - c) * scale in double, rounded to float (tiles of extreme magnitude).
inline void copy_scaled(float* dst, const float* src, int64_t n, double c, double scale)
{
    const vd vc = splat(c), vs = splat(scale);
    int64_t i = 0;
    for (; i + kDoubles <= n; i += kDoubles) {
        const vfh f = __builtin_convertvector((load_widen(src + i) - vc) * vs, vfh);
        std::memcpy(dst + i, &f, sizeof f);
    }
    for (; i < n; ++i) dst[i] = static_cast<float>((double(src[i]) - c) * scale);
}

// The sum of src in double; clears `integral` when some value is not an integer. Values outside
// int64's range (and NaN) count as not integers: they are not converted (the conversion would
// be undefined behaviour, its result up to the compiler). Fractional parts add up as absolute
// values, so that fractions of opposite signs cannot cancel.
inline double sum(const float* src, int64_t n, bool& integral)
{
    const vd lo = splat(-0x1p63), hi = splat(0x1p63), one = splat(1.0);
    vd acc{}, frac{};
    int64_t i = 0;
    for (; i + kDoubles <= n; i += kDoubles) {
        const vd v = load_widen(src + i);
        acc += v;
        const vl in = (v >= lo) & (v < hi);
        const vd w = in ? v : vd{};
        const vd f = w - __builtin_convertvector(__builtin_convertvector(w, vl), vd);
        frac += in ? (f < 0 ? -f : f) : one;
    }
    double s = 0, f = 0;
    for (int k = 0; k < kDoubles; ++k) {
        s += acc[k];
        f += frac[k];
    }
    for (; i < n; ++i) {
        s += src[i];
        f += std::fabs(double(src[i]) - std::trunc(double(src[i])));
    }
    if (!(f == 0)) integral = false;
    return s;
}

// The lowest and highest of n values, NaN left out, into lo and hi (their running values on
// entry).
inline void extent(const float* src, int64_t n, float& lo, float& hi)
{
    vf mn = splat(lo), mx = splat(hi);
    int64_t i = 0;
    for (; i + kFloats <= n; i += kFloats) {
        const vf v = loadu(src + i);
        mn = vmin(v, mn);   // v first: a NaN keeps the running value
        mx = vmax(v, mx);
    }
    for (int k = 0; k < kFloats; ++k) {
        lo = std::min(lo, mn[k]);
        hi = std::max(hi, mx[k]);
    }
    for (; i < n; ++i) {
        lo = std::min(lo, src[i]);
        hi = std::max(hi, src[i]);
    }
}

// The sum of the squares of n values in double (each square exact), one partial sum per lane.
inline double sum_squares(const float* src, int64_t n)
{
    vd acc{};
    int64_t i = 0;
    for (; i + kDoubles <= n; i += kDoubles) {
        const vd v = load_widen(src + i);
        acc += v * v;
    }
    double s = 0;
    for (int k = 0; k < kDoubles; ++k) s += acc[k];
    for (; i < n; ++i) s += double(src[i]) * double(src[i]);
    return s;
}

// Over the finite values of n values: their lowest and highest (into lo and hi, their running
// values on entry). A peak search's first pass over a map.
inline void finite_extent(const float* src, int64_t n, float& lo, float& hi)
{
    vf mn = splat(lo), mx = splat(hi);
    const vf zero = splat(0.f);
    int64_t i = 0;
    for (; i + kFloats <= n; i += kFloats) {
        const vf v = loadu(src + i);
        const vi32 finite = (vi32)(v - v == zero);   // x - x is NaN for NaN and infinities
        mn = (finite & (vi32)(v < mn)) ? v : mn;
        mx = (finite & (vi32)(v > mx)) ? v : mx;
    }
    for (int k = 0; k < kFloats; ++k) {
        lo = std::min(lo, mn[k]);
        hi = std::max(hi, mx[k]);
    }
    for (; i < n; ++i)
        if (std::isfinite(src[i])) {
            lo = std::min(lo, src[i]);
            hi = std::max(hi, src[i]);
        }
}

// Over the finite values of n values: their highest, sum and sum of squares in double and
// count, added to the running values m. A peak's sidelobe measures.
inline void finite_moments(const float* src, int64_t n, FiniteMoments& m)
{
    vd top = splat(m.top), s{}, s2{};
    vl count{};
    const vd zero = splat(0.0);
    int64_t i = 0;
    for (; i + kDoubles <= n; i += kDoubles) {
        const vd v = load_widen(src + i);
        const vl finite = (vl)(v - v == zero);
        top = (finite & (vl)(v > top)) ? v : top;
        s += finite ? v : zero;
        s2 += finite ? v * v : zero;
        count -= finite;   // true lanes are -1
    }
    for (int k = 0; k < kDoubles; ++k) {
        m.top = std::max(m.top, top[k]);
        m.sum += s[k];
        m.sum2 += s2[k];
        m.count += count[k];
    }
    for (; i < n; ++i) {
        const double v = src[i];
        if (!std::isfinite(v)) continue;
        m.top = std::max(m.top, v);
        m.sum += v;
        m.sum2 += v * v;
        ++m.count;
    }
}

// dst = src, with the sum and the sum of squares of src in float, one partial sum per lane.
inline void copy_moments(float* __restrict dst, const float* __restrict src, int64_t n,
                         float& sum, float& squares)
{
    vf s{}, q{};
    int64_t i = 0;
    for (; i + kFloats <= n; i += kFloats) {
        const vf v = loadu(src + i);
        storeu(dst + i, v);
        s += v;
        q = fmadd(v, v, q);
    }
    float ts = 0, tq = 0;
    for (int k = 0; k < kFloats; ++k) {
        ts += s[k];
        tq += q[k];
    }
    for (; i < n; ++i) {
        const float v = src[i];
        dst[i] = v;
        ts += v;
        tq += v * v;
    }
    sum = ts;
    squares = tq;
}

// s *= w over n interleaved complex values: with the filter's real parts duplicated into both
// lanes of a pair (c, c), its imaginary parts likewise (d, d) and the spectrum's pairs swapped
// (b, a), fmaddsub gives (a c - b d, b c + a d) in one fused step.
inline void multiply_spectra(float* __restrict s, const float* __restrict w, int64_t n)
{
    int64_t k = 0;
#if FLCC_VECTOR_BYTES == 64
    for (; k + kFloats / 2 <= n; k += kFloats / 2) {
        const __m512 a = _mm512_loadu_ps(s + 2 * k), b = _mm512_loadu_ps(w + 2 * k);
        const __m512 swapped = _mm512_permute_ps(a, 0xB1);
        const __m512 im = _mm512_mul_ps(swapped, _mm512_movehdup_ps(b));
        _mm512_storeu_ps(s + 2 * k, _mm512_fmaddsub_ps(a, _mm512_moveldup_ps(b), im));
    }
#elif FLCC_VECTOR_BYTES == 32
    for (; k + kFloats / 2 <= n; k += kFloats / 2) {
        const __m256 a = _mm256_loadu_ps(s + 2 * k), b = _mm256_loadu_ps(w + 2 * k);
        const __m256 swapped = _mm256_permute_ps(a, 0xB1);
        const __m256 im = _mm256_mul_ps(swapped, _mm256_movehdup_ps(b));
        _mm256_storeu_ps(s + 2 * k, _mm256_fmaddsub_ps(a, _mm256_moveldup_ps(b), im));
    }
#endif
    // The rest (all of it without FMA), value by value with the vector lanes' operations, so
    // that a product's bits depend neither on its index nor on the compiler: written out as
    // a * c - b * d, GCC's vectoriser recognises a complex product and fuses it its own way
    // (as fma(a, d, b * c) for the imaginary part, and for some remainders only) despite
    // -ffp-contract=off.
    for (; k < n; ++k) {
        const float a = s[2 * k], b = s[2 * k + 1], c = w[2 * k], d = w[2 * k + 1];
        if constexpr (kHasFma) {
            s[2 * k] = std::fma(a, c, -(b * d));
            s[2 * k + 1] = std::fma(b, c, a * d);
        } else {
            s[2 * k] = a * c - b * d;
            s[2 * k + 1] = a * d + b * c;
        }
    }
}

}  // namespace flcc::host::FLCC_ISA_NS
