// Window sums and LCC finalisation over one tile, O(1) per output.
//
// For each output row the running column sums V (of x and x^2 over t1 rows) are updated with
// one added and one removed row, a prefix scan Q of V across the row gives the window sums as
// S = Q[c + t2] - Q[c], and the output is r = N * sqrt(n / (n*S2 - S1^2)). Sums run in double
// and restart at every tile, so their rounding error is bounded by the tile's own magnitude,
// never by the whole image's energy. n*S2 - S1^2 is formed from error-free products: in exact
// mode (integer data of bounded size, where every sum above is an exact integer) it is exact,
// so a constant panel gives exactly 0 and no real variance is ever lost; otherwise panels whose
// value is below the rigorous rounding bound tau (scaled to the tile's magnitude) give 0.
#pragma once

#include "host/kernels/kernel_set.h"
#include "host/kernels/simd.h"

#include <cmath>

namespace flcc::host::FLCC_ISA_NS {

// Adds (sign +1) or removes (-1) one row of x / x^2 to the running column sums.
template <class Row>
FLCC_INLINE void update_columns(const Row& row, int64_t r, double sign, int64_t width, double* v1,
                                double* v2)
{
    const vd s = splat(sign);
    for (int64_t c = 0; c < width; c += kDoubles) {
        vd a1, a2;
        row(r, c, a1, a2);
        storeu(v1 + c, fmadd(s, a1, loadu(v1 + c)));
        storeu(v2 + c, fmadd(s, a2, loadu(v2 + c)));
    }
}

// q[0] = 0, q[c+1] = v[0] + ... + v[c], for c < width (width rounded up to whole vectors).
FLCC_INLINE void prefix(const double* v, int64_t width, double* q)
{
    q[0] = 0;
    vd carry{};
    for (int64_t c = 0; c < width; c += kDoubles) {
        const vd p = lane_prefix(loadu(v + c)) + carry;
        storeu(q + 1 + c, p);
        carry = last_lane(p);
    }
}

// The LCC rows of one output plane. `row(r, c, a1, a2)` yields kDoubles consecutive values of
// the per-row source (x and x^2 in 2D, the plane sums z1 and z2 in 3D) at source row r, column c.
template <class Row>
FLCC_INLINE void lcc_plane_rows(const LccPlaneArgs& a, const Row& row)
{
    const int64_t width = a.cols + a.t2 - 1;                      // source columns in use
    const int64_t vwidth = (width + kDoubles - 1) / kDoubles * kDoubles;
    const vd n = splat(a.n);
    const bool exact = a.tau_abs < 0;
    const vd tau = splat(exact ? 0.0 : a.tau_abs);
    // Relative slack for the final subtraction when it is not exact (guarded mode only).
    const vd rel = splat(exact ? 0.0 : 4 * 0x1p-53);
    const vd one = splat(1.0), zero{};

    for (int64_t c = 0; c < vwidth; c += kDoubles) {
        storeu(a.v1 + c, zero);
        storeu(a.v2 + c, zero);
    }
    for (int64_t i = 0; i < a.t1 - 1; ++i) update_columns(row, i, 1.0, vwidth, a.v1, a.v2);

    for (int64_t r = 0; r < a.rows; ++r) {
        update_columns(row, r + a.t1 - 1, 1.0, vwidth, a.v1, a.v2);
        prefix(a.v1, vwidth, a.q1);
        prefix(a.v2, vwidth, a.q2);

        float* num = a.num + r * a.num_row;
        for (int64_t c = 0; c < a.cols; c += kDoubles) {
            const vd s1 = loadu(a.q1 + c + a.t2) - loadu(a.q1 + c);
            const vd s2 = loadu(a.q2 + c + a.t2) - loadu(a.q2 + c);
            vd p1, e1, p2, e2;
            two_product(n, s2, p1, e1);
            two_product(s1, s1, p2, e2);
            const vd dn = (p1 - p2) + (e1 - e2);   // n * (window variance * n), error-free parts
            const vd limit = exact ? zero : tau + rel * p1;
            const vd ok = dn > limit ? one : zero;
            const vd safe = dn > limit ? dn : one;
            vd rr = load_widen(num + c) * vsqrt(n / safe) * ok;
            rr = vmin(vmax(rr, -one), one);
            const vfh out = __builtin_convertvector(rr, vfh);
            std::memcpy(num + c, &out, sizeof out);   // num rows are padded to whole vectors
        }
        update_columns(row, r, -1.0, vwidth, a.v1, a.v2);
    }
}

inline void lcc_plane(const LccPlaneArgs& a)
{
    if (a.z1 == nullptr) {
        // 2D: the source rows are the centred input itself.
        const auto row = [&](int64_t r, int64_t c, vd& s1, vd& s2) {
            s1 = load_widen(a.x + r * a.x_row + c);
            s2 = s1 * s1;
        };
        lcc_plane_rows(a, row);
    } else {
        const auto row = [&](int64_t r, int64_t c, vd& s1, vd& s2) {
            s1 = loadu(a.z1 + r * a.z_row + c);
            s2 = loadu(a.z2 + r * a.z_row + c);
        };
        lcc_plane_rows(a, row);
    }
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
