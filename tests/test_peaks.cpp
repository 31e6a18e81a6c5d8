// Peaks of maps (src/host/peaks.h): the search against an independent greedy selection over
// values sorted in double, the sub-pixel fits on sampled functions whose maximum is known, the
// upsampled refinement against the map's DFT interpolation evaluated term by term from its DFT
// and on band-limited peaks, and the quality measures on maps built for them.
#include "host/peaks.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <complex>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

using flcc::Extent;
using flcc::host::find_peaks;
using flcc::host::MapPeak;
using flcc::host::PeakSearch;
using flcc::host::Refine;

namespace {

// The reference search: every finite value sorted by (value descending, index ascending), each
// accepted when farther than `exclusion` (Chebyshev) from those accepted before.
std::vector<int64_t> reference_peaks(const std::vector<float>& m, const Extent& e, int k, int exclusion)
{
    std::vector<int64_t> order(m.size());
    std::iota(order.begin(), order.end(), 0);
    order.erase(std::remove_if(order.begin(), order.end(), [&](int64_t i) { return !std::isfinite(m[size_t(i)]); }),
                order.end());
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return double(m[size_t(a)]) > double(m[size_t(b)]); });
    const auto coords = [&](int64_t i) {
        return std::array<int64_t, 3>{i / (e[1] * e[2]), i / e[2] % e[1], i % e[2]};
    };
    std::vector<int64_t> taken;
    for (int64_t i : order) {
        if (int(taken.size()) == k) break;
        const auto a = coords(i);
        bool far = true;
        for (int64_t t : taken) {
            const auto b = coords(t);
            if (std::llabs(a[0] - b[0]) <= exclusion && std::llabs(a[1] - b[1]) <= exclusion &&
                std::llabs(a[2] - b[2]) <= exclusion)
                far = false;
        }
        if (far) taken.push_back(i);
    }
    return taken;
}

PeakSearch search(int k, int exclusion, Refine refine, int fit)
{
    PeakSearch s;
    s.k = k;
    s.exclusion = exclusion;
    s.refine = refine;
    s.fit = fit;
    return s;
}

int64_t linear(const MapPeak& p, const Extent& e) { return (p.at[0] * e[1] + p.at[1]) * e[2] + p.at[2]; }

// f sampled on the grid of e.
template <class F>
std::vector<float> sample(const Extent& e, F&& f)
{
    std::vector<float> m(size_t(e[0] * e[1] * e[2]));
    for (int64_t q = 0; q < e[0]; ++q)
        for (int64_t r = 0; r < e[1]; ++r)
            for (int64_t c = 0; c < e[2]; ++c) m[size_t((q * e[1] + r) * e[2] + c)] = float(f(double(q), double(r), double(c)));
    return m;
}

}  // namespace

TEST_CASE("the k peaks are the greedy selection with the exclusion radius", "[peaks]")
{
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    for (const Extent e : {Extent{1, 31, 40}, Extent{1, 1, 50}, Extent{6, 9, 11}})
        for (int exclusion : {0, 1, 3})
            for (int k : {1, 2, 5}) {
                std::vector<float> m(size_t(e[0] * e[1] * e[2]));
                for (float& v : m) v = std::round(u(rng) * 8) / 8;   // ties on purpose
                m[3] = std::numeric_limits<float>::quiet_NaN();
                m[5] = std::numeric_limits<float>::infinity();   // never a peak
                INFO("extent " << e[0] << "x" << e[1] << "x" << e[2] << " exclusion " << exclusion << " k " << k);
                std::vector<MapPeak> got(static_cast<size_t>(k));
                find_peaks(m.data(), e, search(k, exclusion, Refine::none, 3), got.data());
                const auto want = reference_peaks(m, e, k, exclusion);
                for (int j = 0; j < k; ++j) {
                    if (j < int(want.size())) {
                        CHECK(linear(got[size_t(j)], e) == want[size_t(j)]);
                        CHECK(got[size_t(j)].value == m[size_t(want[size_t(j)])]);
                    } else {
                        CHECK(std::isnan(got[size_t(j)].value));
                        CHECK(got[size_t(j)].at[0] == -1);
                    }
                }
            }
}

TEST_CASE("sub-pixel fits recover the maximum of functions they model exactly", "[peaks]")
{
    const double y0 = 12.3, x0 = 20.71, z0 = 4.42;
    SECTION("parabolic on a separable parabola, 2D")
    {
        const Extent e{1, 25, 40};
        const auto m = sample(e, [&](double, double r, double c) { return 100 - (r - y0) * (r - y0) - 2 * (c - x0) * (c - x0); });
        MapPeak p;
        find_peaks(m.data(), e, search(1, 2, Refine::parabolic, 3), &p);
        CHECK(p.refined[1] == Approx(y0).margin(1e-4));
        CHECK(p.refined[2] == Approx(x0).margin(1e-4));
        CHECK(p.refined[0] == 0);
    }
    SECTION("gaussian on a sampled Gaussian, 2D and 3D")
    {
        const Extent e2{1, 25, 40}, e3{9, 25, 40};
        const auto g = [&](double q, double r, double c) {
            return std::exp(-((q - z0) * (q - z0) / 4 + (r - y0) * (r - y0) / 3 + (c - x0) * (c - x0) / 5));
        };
        const auto m2 = sample(e2, [&](double, double r, double c) { return g(z0, r, c); });
        const auto m3 = sample(e3, g);
        MapPeak p2, p3;
        find_peaks(m2.data(), e2, search(1, 2, Refine::gaussian, 3), &p2);
        find_peaks(m3.data(), e3, search(1, 2, Refine::gaussian, 3), &p3);
        CHECK(p2.refined[1] == Approx(y0).margin(1e-4));
        CHECK(p2.refined[2] == Approx(x0).margin(1e-4));
        CHECK(p3.refined[0] == Approx(z0).margin(1e-4));
        CHECK(p3.refined[1] == Approx(y0).margin(1e-4));
        CHECK(p3.refined[2] == Approx(x0).margin(1e-4));
        // The parabola through the same samples is biased on a Gaussian.
        MapPeak q;
        find_peaks(m2.data(), e2, search(1, 2, Refine::parabolic, 3), &q);
        CHECK(std::fabs(q.refined[2] - x0) > 1e-3);
    }
    SECTION("quadratic on a rotated quadratic surface (cross terms), F = 3, 5, 7, 2D and 3D")
    {
        const Extent e2{1, 25, 40}, e3{9, 25, 40};
        const auto f = [&](double q, double r, double c) {
            const double a = q - z0, b = r - y0, d = c - x0;
            return 50 - (2 * a * a + 3 * b * b + 2.5 * d * d + 1.2 * a * b + 0.8 * b * d - 0.6 * a * d);
        };
        const auto m2 = sample(e2, [&](double, double r, double c) { return f(z0, r, c); });
        const auto m3 = sample(e3, f);
        for (int fit : {3, 5, 7}) {
            INFO("fit " << fit);
            MapPeak p2, p3, q;
            find_peaks(m2.data(), e2, search(1, 2, Refine::quadratic, fit), &p2);
            find_peaks(m3.data(), e3, search(1, 2, Refine::quadratic, fit), &p3);
            CHECK(p2.refined[1] == Approx(y0).margin(1e-3));
            CHECK(p2.refined[2] == Approx(x0).margin(1e-3));
            CHECK(p3.refined[0] == Approx(z0).margin(1e-3));
            CHECK(p3.refined[1] == Approx(y0).margin(1e-3));
            CHECK(p3.refined[2] == Approx(x0).margin(1e-3));
            // Per-axis parabolas miss the cross terms.
            find_peaks(m2.data(), e2, search(1, 2, Refine::parabolic, fit), &q);
            CHECK(std::fabs(q.refined[1] - y0) + std::fabs(q.refined[2] - x0) > 1e-2);
        }
    }
    SECTION("at an edge the three-point fits keep the integer position")
    {
        const Extent e{1, 10, 10};
        const auto m = sample(e, [&](double, double r, double c) { return -(r - 0.2) * (r - 0.2) - (c - 4.3) * (c - 4.3); });
        MapPeak p;
        find_peaks(m.data(), e, search(1, 1, Refine::parabolic, 3), &p);
        CHECK(p.at[1] == 0);
        CHECK(p.refined[1] == 0);
        CHECK(p.refined[2] == Approx(4.3).margin(1e-4));
    }
}

TEST_CASE("quality is peak over second peak, psr the sidelobe's z-score; flat maps give 0", "[peaks]")
{
    const Extent e{1, 9, 9};
    std::vector<float> m(81, 0.f);
    m[4 * 9 + 4] = 1.0f;   // the peak
    m[4 * 9 + 5] = 0.9f;   // inside the exclusion radius: not the second peak
    m[0] = 0.5f;           // the second peak
    m[80] = -0.5f;
    MapPeak p[2];
    find_peaks(m.data(), e, search(2, 1, Refine::none, 3), p);
    CHECK(p[0].value == 1.0f);
    CHECK(p[0].quality == Approx(2.0));
    // The sidelobe: the 72 values outside the 3 x 3 square around the peak.
    double sum = 0, sum2 = 0;
    int n = 0;
    for (int r = 0; r < 9; ++r)
        for (int c = 0; c < 9; ++c)
            if (std::abs(r - 4) > 1 || std::abs(c - 4) > 1) {
                sum += m[size_t(r * 9 + c)];
                sum2 += double(m[size_t(r * 9 + c)]) * m[size_t(r * 9 + c)];
                ++n;
            }
    const double mean = sum / n, sd = std::sqrt(sum2 / n - mean * mean);
    CHECK(p[0].psr == Approx((1.0 - mean) / sd).epsilon(1e-5));
    CHECK(p[1].value == 0.5f);
    CHECK(p[1].at[1] == 0);
    CHECK(p[1].quality == Approx(0.5));   // its second peak is the first

    // No positive value outside the radius: quality infinite.
    std::vector<float> lone(81, -1.f);
    lone[40] = 2.f;
    find_peaks(lone.data(), e, search(1, 1, Refine::none, 3), p);
    CHECK(std::isinf(p[0].quality));

    // Flat maps: one peak at the origin, quality and psr 0, the rest not found.
    for (float v : {0.f, 3.5f}) {
        std::vector<float> flat(81, v);
        flat[7] = std::numeric_limits<float>::quiet_NaN();
        find_peaks(flat.data(), e, search(2, 1, Refine::quadratic, 5), p);
        CHECK(p[0].value == v);
        CHECK(p[0].at[1] == 0);
        CHECK(p[0].at[2] == 0);
        CHECK(p[0].quality == 0);
        CHECK(p[0].psr == 0);
        CHECK(std::isnan(p[1].value));
    }
    std::vector<float> nans(81, std::numeric_limits<float>::quiet_NaN());
    find_peaks(nans.data(), e, search(1, 1, Refine::none, 3), p);
    CHECK(std::isnan(p[0].value));
    CHECK(p[0].at[0] == 0);
    CHECK(p[0].quality == 0);
}

TEST_CASE("maps wider than a vector with NaN and infinities: the finite values decide", "[peaks]")
{
    // Rows of 70 values (vector bodies and tails for every kernel set), non-finite values
    // sprinkled over them and next to the highest one.
    const Extent e{1, 13, 70};
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    std::vector<float> m(size_t(e[1] * e[2]));
    for (float& v : m) v = u(rng);
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    m[5 * 70 + 33] = 1.5f;   // the peak
    m[5 * 70 + 34] = inf;
    m[5 * 70 + 32] = nan;
    m[0] = -inf;
    m[100] = nan;
    m[12 * 70 + 69] = inf;
    m[9 * 70 + 17] = 1.25f;   // the second peak
    const int radius = 3;
    MapPeak p[1];
    find_peaks(m.data(), e, search(1, radius, Refine::none, 3), p);
    CHECK(p[0].value == 1.5f);
    CHECK(p[0].at[1] == 5);
    CHECK(p[0].at[2] == 33);
    double sum = 0, sum2 = 0, top = -1e300;
    int n = 0;
    for (int r = 0; r < 13; ++r)
        for (int c = 0; c < 70; ++c) {
            const float v = m[size_t(r * 70 + c)];
            if (!std::isfinite(v) || (std::abs(r - 5) <= radius && std::abs(c - 33) <= radius)) continue;
            sum += v;
            sum2 += double(v) * v;
            top = std::max(top, double(v));
            ++n;
        }
    CHECK(top == 1.25);
    CHECK(p[0].quality == Approx(1.5 / 1.25));
    const double mean = sum / n, sd = std::sqrt(sum2 / n - mean * mean);
    CHECK(p[0].psr == Approx((1.5 - mean) / sd).epsilon(1e-6));
}

namespace {

const double kPi = std::acos(-1.0);

// The map's DFT interpolation at t, from its DFT coefficients M (computed term by term here):
// (1/V) sum_k M[k] prod_axes phi(k_a, t_a), phi = exp(2 pi i k t / N) with k wrapped to
// (-N/2, N/2), and cos(pi t) for the Nyquist index of an even N (its two aliases halved).
class Interpolation {
public:
    Interpolation(const std::vector<float>& m, const Extent& e) : e_(e), M_(m.size())
    {
        for (int64_t k = 0; k < int64_t(m.size()); ++k) {
            const auto kk = coords(k);
            std::complex<double> s = 0;
            for (int64_t n = 0; n < int64_t(m.size()); ++n) {
                const auto nn = coords(n);
                double phase = 0;
                for (int a = 0; a < 3; ++a) phase += double(kk[size_t(a)] * nn[size_t(a)] % e[size_t(a)]) / double(e[size_t(a)]);
                s += double(m[size_t(n)]) * std::polar(1.0, -2 * kPi * phase);
            }
            M_[size_t(k)] = s;
        }
    }

    double operator()(const double t[3]) const
    {
        std::complex<double> s = 0;
        for (int64_t k = 0; k < int64_t(M_.size()); ++k) {
            const auto kk = coords(k);
            std::complex<double> f = M_[size_t(k)];
            for (int a = 0; a < 3; ++a) {
                const int64_t n = e_[size_t(a)];
                int64_t w = kk[size_t(a)];
                if (2 * w == n)
                    f *= std::cos(kPi * t[a]);
                else
                    f *= std::polar(1.0, 2 * kPi * double(2 * w > n ? w - n : w) * t[a] / double(n));
            }
            s += f;
        }
        return s.real() / double(M_.size());
    }

private:
    std::array<int64_t, 3> coords(int64_t i) const
    {
        return {i / (e_[1] * e_[2]), i / e_[2] % e_[1], i % e_[2]};
    }
    Extent e_;
    std::vector<std::complex<double>> M_;
};

// The reference upsampled refinement of the peak at `at`: the grid point of highest value of
// the interpolation, ties to the nearest to `at`, then the first in (plane, row, column) order.
std::array<double, 3> reference_upsampled(const Interpolation& f, const Extent& e, const int64_t at[3], int upsample,
                                          double* best_value)
{
    const int reach = int(std::ceil(0.75 * upsample));
    int lo[3], hi[3];
    for (int a = 0; a < 3; ++a) {
        lo[a] = e[size_t(a)] > 1 ? -reach : 0;
        hi[a] = -lo[a];
    }
    double best = -std::numeric_limits<double>::infinity();
    int best_j[3] = {0, 0, 0}, best_d2 = 0;
    for (int j0 = lo[0]; j0 <= hi[0]; ++j0)
        for (int j1 = lo[1]; j1 <= hi[1]; ++j1)
            for (int j2 = lo[2]; j2 <= hi[2]; ++j2) {
                const double t[3] = {double(at[0]) + double(j0) / upsample, double(at[1]) + double(j1) / upsample,
                                     double(at[2]) + double(j2) / upsample};
                const double v = f(t);
                const int d2 = j0 * j0 + j1 * j1 + j2 * j2;
                if (v > best || (v == best && d2 < best_d2)) {   // scan order settles the rest
                    best = v;
                    best_d2 = d2;
                    best_j[0] = j0;
                    best_j[1] = j1;
                    best_j[2] = j2;
                }
            }
    *best_value = best;
    return {double(at[0]) + double(best_j[0]) / upsample, double(at[1]) + double(best_j[1]) / upsample,
            double(at[2]) + double(best_j[2]) / upsample};
}

PeakSearch upsampled_search(const Extent& e, int upsample, std::vector<double>& scratch)
{
    PeakSearch s;
    s.refine = Refine::upsampled;
    s.upsample = upsample;
    scratch.assign(size_t(flcc::host::upsample_scratch_doubles(e, upsample)), 0.0);
    s.scratch = scratch.data();
    s.scratch_doubles = int64_t(scratch.size());
    return s;
}

// A band-limited periodic peak at c: sum over the frequencies below Nyquist of
// exp(-2 pi^2 sigma^2 |f|^2) cos(2 pi f . (x - c)), every cosine 1 at c alone (per period).
std::vector<float> band_limited_peak(const Extent& e, const double c[3], double sigma)
{
    std::vector<double> m(size_t(e[0] * e[1] * e[2]), 0.0);
    const auto range = [&](int a) { return (e[size_t(a)] - 1) / 2; };   // |k| < N/2
    for (int64_t k0 = -range(0); k0 <= range(0); ++k0)
        for (int64_t k1 = -range(1); k1 <= range(1); ++k1)
            for (int64_t k2 = -range(2); k2 <= range(2); ++k2) {
                const double f[3] = {double(k0) / double(e[0]), double(k1) / double(e[1]), double(k2) / double(e[2])};
                const double amp = std::exp(-2 * kPi * kPi * sigma * sigma * (f[0] * f[0] + f[1] * f[1] + f[2] * f[2]));
                for (int64_t q = 0; q < e[0]; ++q)
                    for (int64_t r = 0; r < e[1]; ++r)
                        for (int64_t x = 0; x < e[2]; ++x) {
                            const double phase = f[0] * (double(q) - c[0]) + f[1] * (double(r) - c[1]) + f[2] * (double(x) - c[2]);
                            m[size_t((q * e[1] + r) * e[2] + x)] += amp * std::cos(2 * kPi * phase);
                        }
            }
    return std::vector<float>(m.begin(), m.end());
}

}  // namespace

TEST_CASE("the DFT kernel is exact at integers and is the interpolation's sum elsewhere", "[peaks]")
{
    using flcc::host::dft_kernel;
    for (int64_t n : {1, 2, 5, 8, 9}) {
        INFO("n " << n);
        for (int64_t t = -3 * n; t <= 3 * n; ++t) CHECK(dft_kernel(n, double(t)) == (t % n == 0 ? 1.0 : 0.0));
        for (double x : {0.3, -0.45, 1.5, 2.7, -4.1, double(n) - 0.2, double(n) + 0.01}) {
            // (1/n) [sum_{|k| < n/2} exp(2 pi i k x / n) + cos(pi x) for even n]
            double s = 0;
            for (int64_t k = -(n - 1) / 2; k <= (n - 1) / 2; ++k) s += std::cos(2 * kPi * double(k) * x / double(n));
            if (n % 2 == 0) s += std::cos(kPi * x);
            CHECK(dft_kernel(n, x) == Approx(s / double(n)).margin(1e-12));
        }
    }
}

TEST_CASE("upsampled refinement takes the grid maximum of the DFT interpolation", "[peaks]")
{
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    for (const Extent e : {Extent{1, 7, 8}, Extent{1, 9, 6}, Extent{1, 1, 12}, Extent{4, 5, 7}})
        for (int upsample : {2, 3, 4, 10})
            for (int trial = 0; trial < 3; ++trial) {
                INFO("extent " << e[0] << "x" << e[1] << "x" << e[2] << " upsample " << upsample << " trial " << trial);
                std::vector<float> m(size_t(e[0] * e[1] * e[2]));
                for (float& v : m) v = u(rng);
                // The first peak sits on the map's edge in the first trial.
                m[trial == 0 ? 0 : m.size() / 2] = 2.f;
                const Interpolation f(m, e);
                std::vector<double> scratch;
                PeakSearch s = upsampled_search(e, upsample, scratch);
                s.k = 2;
                s.exclusion = 1;
                MapPeak p[2];
                find_peaks(m.data(), e, s, p);
                for (const MapPeak& q : p) {
                    double best;
                    const auto want = reference_upsampled(f, e, q.at, upsample, &best);
                    // The grid point chosen: on the grid, and of the grid's highest value (up to
                    // the rounding of the two evaluations).
                    for (int a = 0; a < 3; ++a) {
                        const double j = (q.refined[a] - double(q.at[a])) * upsample;
                        CHECK(std::fabs(j - std::round(j)) < 1e-9);
                        CHECK(std::fabs(j) <= std::ceil(0.75 * upsample));
                        if (e[size_t(a)] == 1) CHECK(q.refined[a] == double(q.at[a]));
                    }
                    CHECK(f(q.refined) >= best - 1e-12);
                    CHECK(q.refined[0] == Approx(want[0]).margin(1e-9));
                    CHECK(q.refined[1] == Approx(want[1]).margin(1e-9));
                    CHECK(q.refined[2] == Approx(want[2]).margin(1e-9));
                }
            }
}

TEST_CASE("upsampled refinement finds a band-limited peak within 1/upsample", "[peaks]")
{
    struct Case {
        Extent e;
        double c[3];
    };
    const Case cases[] = {
        {{1, 32, 33}, {0, 12.37, 20.71}},   // 2D, even and odd
        {{1, 31, 40}, {0, 7.52, 30.18}},
        {{1, 24, 24}, {0, -0.3, 23.4}},     // at the edges: the peak wraps around
        {{1, 1, 50}, {0, 0, 17.77}},
        {{9, 12, 11}, {4.42, 5.63, 2.28}},   // 3D
        {{8, 10, 13}, {0.2, 9.45, 6.9}},
    };
    for (const Case& t : cases)
        for (int upsample : {2, 10, 37, 100, 1000}) {
            const Extent& e = t.e;
            if (e[0] > 1 && upsample > 100) continue;   // G^3 planes work
            INFO("extent " << e[0] << "x" << e[1] << "x" << e[2] << " upsample " << upsample);
            const auto m = band_limited_peak(e, t.c, 1.2);
            std::vector<double> scratch;
            const PeakSearch s = upsampled_search(e, upsample, scratch);
            MapPeak p;
            find_peaks(m.data(), e, s, &p);
            for (int a = 0; a < 3; ++a) {
                INFO("axis " << a << ": refined " << p.refined[a] << ", maximum at " << t.c[a]);
                CHECK(std::fabs(p.refined[a] - t.c[a]) <= 1.0 / upsample + 1e-9);
            }
        }
}

TEST_CASE("upsampled refinement keeps a peak centred on an integer exactly there", "[peaks]")
{
    // The interpolation is the map at integer offsets: a symmetric peak stays put.
    for (const Extent e : {Extent{1, 16, 15}, Extent{6, 7, 8}}) {
        const double c[3] = {double(e[0] / 2), 3, 0};   // on the first column (the edge)
        const auto m = band_limited_peak(e, c, 1.0);
        for (int upsample : {2, 4, 10}) {
            std::vector<double> scratch;
            const PeakSearch s = upsampled_search(e, upsample, scratch);
            MapPeak p;
            find_peaks(m.data(), e, s, &p);
            for (int a = 0; a < 3; ++a) {
                CHECK(p.at[a] == int64_t(c[a]));
                CHECK(p.refined[a] == c[a]);
            }
        }
    }
}

TEST_CASE("upsampled refinement without enough scratch keeps the integer position", "[peaks]")
{
    const Extent e{1, 20, 20};
    const double c[3] = {0, 8.4, 11.3};
    const auto m = band_limited_peak(e, c, 1.5);
    std::vector<double> scratch;
    PeakSearch s = upsampled_search(e, 10, scratch);
    MapPeak p;
    find_peaks(m.data(), e, s, &p);
    CHECK(p.refined[1] == Approx(8.4).margin(0.1));
    s.scratch_doubles -= 1;
    find_peaks(m.data(), e, s, &p);
    CHECK(p.refined[1] == 8);
    CHECK(p.refined[2] == 11);
    s.scratch = nullptr;
    s.scratch_doubles = int64_t(scratch.size());
    find_peaks(m.data(), e, s, &p);
    CHECK(p.refined[2] == 11);
}

TEST_CASE("a flat map's peak lies at flat_at", "[peaks]")
{
    const Extent e{3, 9, 9};
    std::vector<float> flat(size_t(e[0] * e[1] * e[2]), 0.25f);
    std::vector<double> scratch;
    for (Refine refine : {Refine::none, Refine::parabolic, Refine::gaussian, Refine::quadratic, Refine::upsampled}) {
        PeakSearch s = upsampled_search(e, 10, scratch);
        s.refine = refine;
        s.k = 2;
        s.flat_at[0] = 1;
        s.flat_at[1] = 4;
        s.flat_at[2] = 7;
        MapPeak p[2];
        find_peaks(flat.data(), e, s, p);
        CHECK(p[0].value == 0.25f);
        for (int a = 0; a < 3; ++a) {
            CHECK(p[0].at[a] == s.flat_at[a]);
            CHECK(p[0].refined[a] == double(s.flat_at[a]));
        }
        CHECK(p[0].quality == 0);
        CHECK(p[0].psr == 0);
        CHECK(std::isnan(p[1].value));
        CHECK(p[1].at[0] == -1);
    }
}
