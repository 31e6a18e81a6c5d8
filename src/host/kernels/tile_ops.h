// Element-wise passes over a tile: copying image values in while gathering their statistics
// (the finite check rides on the double sum: any NaN or Inf makes it non-finite), and centring.
#pragma once

#include "host/kernels/kernel_set.h"
#include "host/kernels/simd.h"

#include <algorithm>
#include <cmath>

namespace flcc::host::FLCC_ISA_NS {

typedef int32_t vi32 __attribute__((vector_size(kVectorBytes)));

inline void copy_stats(float* dst, const float* src, int64_t n, TileStats& st)
{
    if (n <= 0) return;
    vd s_lo{}, s_hi{};
    vf mn = splat(src[0]), mx = mn;
    vi32 nonint{};
    const vf limit = splat(2147483520.0f);   // largest float below 2^31
    int64_t i = 0;
    for (; i + kFloats <= n; i += kFloats) {
        const vf v = loadu(src + i);
        storeu(dst + i, v);
        s_lo += load_widen(src + i);
        s_hi += load_widen(src + i + kDoubles);
        mn = vmin(mn, v);
        mx = vmax(mx, v);
        // Integral and in int range: truncation round-trips exactly (NaN never does).
        const vf av = v < 0 ? -v : v;
        const vf safe = av <= limit ? v : vf{};   // NaN and out-of-range convert as 0
        const vf back = __builtin_convertvector(__builtin_convertvector(safe, vi32), vf);
        nonint |= (vi32)(back != v);
    }
    double sum = 0;
    for (int k = 0; k < kDoubles; ++k) sum += s_lo[k] + s_hi[k];
    float lo = mn[0], hi = mx[0];
    for (int k = 1; k < kFloats; ++k) {
        lo = std::min(lo, mn[k]);
        hi = std::max(hi, mx[k]);
    }
    bool integral = true;
    for (int k = 0; k < kFloats; ++k) integral &= nonint[k] == 0;
    for (; i < n; ++i) {
        const float v = src[i];
        dst[i] = v;
        sum += v;
        lo = std::min(lo, v);
        hi = std::max(hi, v);
        integral &= std::fabs(v) <= 2147483520.0f && v == std::trunc(v);
    }
    if (st.count == 0) {
        st.vmin = lo;
        st.vmax = hi;
    } else {
        st.vmin = std::min(st.vmin, lo);
        st.vmax = std::max(st.vmax, hi);
    }
    st.sum += sum;
    st.integral = st.integral && integral;
    st.count += n;
}

inline void centre(float* x, int64_t n, double c, double scale)
{
    const vd vc = splat(c), vs = splat(scale);
    int64_t i = 0;
    for (; i + kDoubles <= n; i += kDoubles) {
        const vd v = (load_widen(x + i) - vc) * vs;
        const vfh f = __builtin_convertvector(v, vfh);
        std::memcpy(x + i, &f, sizeof f);
    }
    for (; i < n; ++i) x[i] = static_cast<float>((x[i] - c) * scale);
}

}  // namespace flcc::host::FLCC_ISA_NS
