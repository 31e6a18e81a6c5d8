// Window sums and LCC finalisation over one tile, O(1) per output.
//
// For each output row the running column sums V (of x and x^2 over t1 rows) are updated with
// one added and one removed row, a prefix scan Q of V across the row gives the window sums as
// S = Q[c + t2] - Q[c], and the output is r = N / sqrt(D), D = (n*S2 - S1^2) / n. Sums run in
// double and restart at every tile, so their rounding error is bounded by the tile's own
// magnitude, never by the whole image's energy. In exact mode (integer data of bounded size:
// every sum and both products n*S2 and S1^2 are integers below 2^53) n*S2 - S1^2 is exact, so a
// constant panel gives exactly 0 and no real variance is ever lost; otherwise panels whose value
// is below the rigorous rounding bound tau (scaled to the tile's magnitude) give 0.
//
// The numerator N = sum x t' was computed in float on data centred on the tile's mean; a window
// whose own mean lies far from it compared with its spread (kappa = |mean|/sigma large) loses
// digits there, both in the accumulation and in the float centring itself. Such windows
// (kappa > kRecentre) are recomputed from the original image values around their own mean, in
// double (two passes: mean, then N and D): O(n) for them alone, accurate for all. So are the
// windows the tile-wide guard would zero although their own values are tiny next to the tile's
// magnitude (a few real values among zero padding, a faint region beside a bright one): the
// guard's bound is the tile's, theirs is far smaller. Windows of exactly zero energy (S2 = 0)
// stay on the fast path.
#pragma once

#include "host/kernels/kernel_set.h"
#include "host/kernels/simd.h"

#include <cmath>

namespace flcc::host::FLCC_ISA_NS {

constexpr double kRecentre = 32;

// r of the window at (r, c) of the plane, from the original image values in double: the mean,
// then N = sum (v - mean) t' and D = sum (v - mean)^2. Only the part of the window inside the
// image is visited: the padding contributes analytically (its values are 0; its taps sum to
// tap_sum minus those visited).
inline float recomputed(const LccPlaneArgs& a, int64_t r, int64_t c)
{
    const int64_t box[3] = {a.box[0], a.box[1] + r, a.box[2] + c}, t[3] = {a.t0, a.t1, a.t2};
    int64_t lo[3], hi[3];
    for (int k = 0; k < 3; ++k) {
        lo[k] = std::max<int64_t>(0, -box[k]);
        hi[k] = std::min<int64_t>(t[k], a.image[k] - box[k]);
        if (hi[k] <= lo[k]) return 0.0f;   // all padding: constant
    }
    const auto row = [&](int64_t p, int64_t i) {
        return a.frame + ((box[0] + p) * a.image[1] + box[1] + i) * a.image[2] + box[2];
    };
    double sum = 0, count = 0;
    for (int64_t p = lo[0]; p < hi[0]; ++p)
        for (int64_t i = lo[1]; i < hi[1]; ++i) {
            const float* v = row(p, i);
            for (int64_t j = lo[2]; j < hi[2]; ++j) sum += v[j];
            count += double(hi[2] - lo[2]);
        }
    const double mean = sum / a.n, pad = a.n - count;
    double num = 0, d = 0, off = 0, treal = 0;
    for (int64_t p = lo[0]; p < hi[0]; ++p)
        for (int64_t i = lo[1]; i < hi[1]; ++i) {
            const float* v = row(p, i);
            const float* tp = a.taps + (p * a.t1 + i) * a.t2;
            for (int64_t j = lo[2]; j < hi[2]; ++j) {
                const double x = double(v[j]) - mean;
                num += x * tp[j];
                d += x * x;
                off += x;
                treal += tp[j];
            }
        }
    num -= mean * (a.tap_sum - treal);   // the padding's (0 - mean) t, over taps summing to tap_sum - treal
    d += pad * mean * mean;
    off -= pad * mean;
    d -= off * off / a.n;  // the rounding of the mean
    return d > 0 ? float(num / std::sqrt(d)) : 0.0f;
}

// rr with the lanes flagged in far0 (outputs c .. c+kDoubles-1) and far1 (the next kDoubles)
// recomputed from the image. Out of line: the caller's vectors then stay in registers.
__attribute__((noinline)) inline vf recompute_far(const LccPlaneArgs& a, int64_t r, int64_t c,
                                                  vf rr, vl far0, vl far1)
{
    for (int k = 0; k < kFloats; ++k) {
        const int64_t far = k < kDoubles ? far0[k] : far1[k - kDoubles];
        if (far != 0 && c + k < a.cols) rr[k] = recomputed(a, r, c + k);
    }
    return rr;
}

// One running step of the column sums followed by their prefix scan, in a single pass:
// V += row `add` - row `sub` (sub: a row of zeros when nothing is removed),
// Q[c+1] = V[0] + ... + V[c].
// The scan's carry is a serial chain (an addition, then a broadcast of the last lane), so two
// vectors are scanned per step: the second one's lane prefix takes the first one's total off
// the chain, and the carry is added to both. (With one vector per step, the chain bounds the
// loop.) Each Q still sums its terms in at most len + 2 additions, as guard_factor
// (host/tile_runner.cpp) assumes.
template <class Row>
FLCC_INLINE void step_and_scan(const Row add, const Row sub, int64_t width, double* __restrict v1,
                               double* __restrict v2, double* __restrict q1,
                               double* __restrict q2)
{
    vd carry1{}, carry2{};
    q1[0] = q2[0] = 0;
    const auto step = [&](int64_t c, vd& s1, vd& s2) {
        vd a1, a2, b1, b2;
        add.load(c, a1, a2);
        sub.load(c, b1, b2);
        s1 = (loadu(v1 + c) + a1) - b1;
        s2 = (loadu(v2 + c) + a2) - b2;
        storeu(v1 + c, s1);
        storeu(v2 + c, s2);
    };
    int64_t c = 0;
    for (; c + 2 * kDoubles <= width; c += 2 * kDoubles) {
        vd s1, s2, t1, t2;
        step(c, s1, s2);
        step(c + kDoubles, t1, t2);
        const vd l1 = lane_prefix(s1), l2 = lane_prefix(s2);
        const vd m1 = lane_prefix(t1) + last_lane(l1), m2 = lane_prefix(t2) + last_lane(l2);
        const vd p1 = m1 + carry1, p2 = m2 + carry2;
        storeu(q1 + 1 + c, l1 + carry1);
        storeu(q2 + 1 + c, l2 + carry2);
        storeu(q1 + 1 + c + kDoubles, p1);
        storeu(q2 + 1 + c + kDoubles, p2);
        carry1 = last_lane(p1);
        carry2 = last_lane(p2);
    }
    if (c < width) {   // width is a whole number of vectors: one is left
        vd s1, s2;
        step(c, s1, s2);
        storeu(q1 + 1 + c, lane_prefix(s1) + carry1);
        storeu(q2 + 1 + c, lane_prefix(s2) + carry2);
    }
}

// A source row of the window sums: the centred input itself (2D: values x and x^2) or the
// plane sums z1, z2 (3D). `zero` rows read a shared row of zeros.
struct FloatRow {
    const float* x;
    FLCC_INLINE void load(int64_t c, vd& s1, vd& s2) const
    {
        s1 = load_widen(x + c);
        s2 = s1 * s1;
    }
};
struct DoubleRow {
    const double* z1;
    const double* z2;
    FLCC_INLINE void load(int64_t c, vd& s1, vd& s2) const
    {
        s1 = loadu(z1 + c);
        s2 = loadu(z2 + c);
    }
};

// The LCC rows of one output plane; `row(r)` gives source row r, `zero` a row of zeros.
// Exact: exact mode (a.tau_abs < 0). Compiled in, it leaves the inner loop free of branches
// and of constants that AVX2's 16 registers would spill.
template <bool Exact, class Row, class RowAt>
FLCC_INLINE void lcc_plane_rows(const LccPlaneArgs& args, const RowAt& row, const Row zero_row)
{
    const LccPlaneArgs a = args;   // locals: the stores below cannot alias them
    const int64_t width = a.cols + a.t2 - 1;                      // source columns in use
    const int64_t vwidth = (width + kDoubles - 1) / kDoubles * kDoubles;
    const vd n = splat(a.n), inv_n = splat(1.0 / a.n);
    const vd tau = splat(Exact ? 0.0 : a.tau_abs);
    // Relative slack for the final subtraction when it is not exact (guarded mode only).
    const vd rel = splat(Exact ? 0.0 : 4 * 0x1p-53);
    const vf one = splat(1.0f), zero{}, tiny = splat(0x1p-126f);

    for (int64_t c = 0; c < vwidth; c += kDoubles) {
        storeu(a.v1 + c, vd{});
        storeu(a.v2 + c, vd{});
    }
    for (int64_t i = 0; i < a.t1 - 1; ++i) {
        const Row src = row(i);
        for (int64_t c = 0; c < vwidth; c += kDoubles) {
            vd a1, a2;
            src.load(c, a1, a2);
            storeu(a.v1 + c, loadu(a.v1 + c) + a1);
            storeu(a.v2 + c, loadu(a.v2 + c) + a2);
        }
    }

    // D = n * window variance, or 0 when unresolvable. n*s2 - s1^2 in double: exact in exact
    // mode; otherwise its rounding (at most 2u * n*s2) is inside the guard's relative term.
    // `far` flags resolvable windows whose mean is far from the centring (kappa > kRecentre).
    const vd k2 = splat(kRecentre * kRecentre), small = splat(Exact ? 0.0 : a.small_s2);
    const vd zero_num_d = splat(a.zero_num_d);
    const auto variance = [&](int64_t c, vd& d, vl& far) {
        const vd s1 = loadu(a.q1 + c + a.t2) - loadu(a.q1 + c);
        const vd s2 = loadu(a.q2 + c + a.t2) - loadu(a.q2 + c);
        const vd p1 = n * s2;
        const vd dn = fmadd(-s1, s1, p1);
        const vd limit = Exact ? vd{} : tau + rel * p1;
        d = dn > limit ? dn * inv_n : vd{};
        far = (dn > limit) & (s1 * s1 > k2 * dn);
        if constexpr (!Exact) far |= (dn <= limit) & (s2 > 0) & (s2 < small);   // exact: small = 0
    };

    const int64_t whole = a.cols / kFloats * kFloats;
    for (int64_t r = 0; r < a.rows; ++r) {
        step_and_scan(row(r + a.t1 - 1), r > 0 ? row(r - 1) : zero_row, vwidth, a.v1, a.v2, a.q1, a.q2);
        const float* num = a.num + r * a.num_row;
        float* out = a.out + r * a.out_row;
        for (int64_t c = 0; c < a.cols; c += kFloats) {
            vd d0, d1;
            vl f0, f1;
            variance(c, d0, f0);
            variance(c + kDoubles, d1, f1);
            // D fits float: tiles are scaled so their magnitude is within 2^-40 .. 2^40.
            const vf d = join(__builtin_convertvector(d0, vfh), __builtin_convertvector(d1, vfh));
            const vf ok = d >= tiny ? one : zero;
            const vf safe = d >= tiny ? d : one;
            if (a.zero_num_d > 0) {
                // A Fourier numerator that came out exactly 0 says nothing of its window: r is
                // recomputed where D is small enough for the transform's error to matter.
                f0 |= (load_widen(num + c) == 0) & (d0 > 0) & (d0 < zero_num_d);
                f1 |= (load_widen(num + c + kDoubles) == 0) & (d1 > 0) & (d1 < zero_num_d);
            }
            vf rr = loadu(num + c) * vrsqrt(safe) * ok;
            if (a.taps != nullptr && any_lane(f0 | f1))   // rare: lanes looked at only then
                rr = recompute_far(a, r, c, rr, f0, f1);
            rr = vmin(vmax(rr, -one), one);
            if (c < whole)
                storeu(out + c, rr);
            else
                std::memcpy(out + c, &rr, sizeof(float) * size_t(a.cols - c));
        }
    }
}

template <bool Exact>
void lcc_plane_mode(const LccPlaneArgs& a)
{
    if (a.z1 == nullptr) {
        const float* x = a.x;
        const int64_t xr = a.x_row;
        lcc_plane_rows<Exact, FloatRow>(a, [=](int64_t r) { return FloatRow{x + r * xr}; },
                                                   FloatRow{reinterpret_cast<const float*>(a.zeros)});
    } else {
        const double* z1 = a.z1;
        const double* z2 = a.z2;
        const int64_t zr = a.z_row;
        lcc_plane_rows<Exact, DoubleRow>(
            a, [=](int64_t r) { return DoubleRow{z1 + r * zr, z2 + r * zr}; }, DoubleRow{a.zeros, a.zeros});
    }
}

inline void lcc_plane(const LccPlaneArgs& a)
{
    if (a.tau_abs < 0)
        lcc_plane_mode<true>(a);
    else
        lcc_plane_mode<false>(a);
}

// 3D: z = sum over planes [p, p + t0) of x and x^2.
inline void plane_sums_init(const float* x, int64_t x_row, int64_t x_plane, int64_t t0,
                            int64_t rows, int64_t cols, double* z1, double* z2, int64_t z_row)
{
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; c += kDoubles) {
            vd s1{}, s2{};
            for (int64_t q = 0; q < t0; ++q) {
                const vd v = load_widen(x + q * x_plane + r * x_row + c);
                s1 += v;
                s2 = fmadd(v, v, s2);
            }
            storeu(z1 + r * z_row + c, s1);
            storeu(z2 + r * z_row + c, s2);
        }
}

// Moves z from planes [p, p + t0) to [p + 1, p + t0 + 1).
inline void plane_sums_advance(const float* x, int64_t x_row, int64_t x_plane, int64_t t0,
                               int64_t p, int64_t rows, int64_t cols, double* z1, double* z2,
                               int64_t z_row)
{
    const float* gone = x + p * x_plane;
    const float* come = x + (p + t0) * x_plane;
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; c += kDoubles) {
            const vd g = load_widen(gone + r * x_row + c), n = load_widen(come + r * x_row + c);
            double* p1 = z1 + r * z_row + c;
            double* p2 = z2 + r * z_row + c;
            storeu(p1, (loadu(p1) + n) - g);
            storeu(p2, fmadd(-g, g, fmadd(n, n, loadu(p2))));
        }
}

}  // namespace flcc::host::FLCC_ISA_NS
