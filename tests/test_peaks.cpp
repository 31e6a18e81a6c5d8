// Peaks of maps (src/host/peaks.h): the search against an independent greedy selection over
// values sorted in double, the sub-pixel fits on sampled functions whose maximum is known, and
// the quality measures on maps built for them.
#include "host/peaks.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

using flcc::Extent;
using flcc::host::find_peaks;
using flcc::host::MapPeak;
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
                find_peaks(m.data(), e, k, exclusion, Refine::none, 3, got.data());
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
        find_peaks(m.data(), e, 1, 2, Refine::parabolic, 3, &p);
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
        find_peaks(m2.data(), e2, 1, 2, Refine::gaussian, 3, &p2);
        find_peaks(m3.data(), e3, 1, 2, Refine::gaussian, 3, &p3);
        CHECK(p2.refined[1] == Approx(y0).margin(1e-4));
        CHECK(p2.refined[2] == Approx(x0).margin(1e-4));
        CHECK(p3.refined[0] == Approx(z0).margin(1e-4));
        CHECK(p3.refined[1] == Approx(y0).margin(1e-4));
        CHECK(p3.refined[2] == Approx(x0).margin(1e-4));
        // The parabola through the same samples is biased on a Gaussian.
        MapPeak q;
        find_peaks(m2.data(), e2, 1, 2, Refine::parabolic, 3, &q);
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
            find_peaks(m2.data(), e2, 1, 2, Refine::quadratic, fit, &p2);
            find_peaks(m3.data(), e3, 1, 2, Refine::quadratic, fit, &p3);
            CHECK(p2.refined[1] == Approx(y0).margin(1e-3));
            CHECK(p2.refined[2] == Approx(x0).margin(1e-3));
            CHECK(p3.refined[0] == Approx(z0).margin(1e-3));
            CHECK(p3.refined[1] == Approx(y0).margin(1e-3));
            CHECK(p3.refined[2] == Approx(x0).margin(1e-3));
            // Per-axis parabolas miss the cross terms.
            find_peaks(m2.data(), e2, 1, 2, Refine::parabolic, fit, &q);
            CHECK(std::fabs(q.refined[1] - y0) + std::fabs(q.refined[2] - x0) > 1e-2);
        }
    }
    SECTION("at an edge the three-point fits keep the integer position")
    {
        const Extent e{1, 10, 10};
        const auto m = sample(e, [&](double, double r, double c) { return -(r - 0.2) * (r - 0.2) - (c - 4.3) * (c - 4.3); });
        MapPeak p;
        find_peaks(m.data(), e, 1, 1, Refine::parabolic, 3, &p);
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
    find_peaks(m.data(), e, 2, 1, Refine::none, 3, p);
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
    find_peaks(lone.data(), e, 1, 1, Refine::none, 3, p);
    CHECK(std::isinf(p[0].quality));

    // Flat maps: one peak at the origin, quality and psr 0, the rest not found.
    for (float v : {0.f, 3.5f}) {
        std::vector<float> flat(81, v);
        flat[7] = std::numeric_limits<float>::quiet_NaN();
        find_peaks(flat.data(), e, 2, 1, Refine::quadratic, 5, p);
        CHECK(p[0].value == v);
        CHECK(p[0].at[1] == 0);
        CHECK(p[0].at[2] == 0);
        CHECK(p[0].quality == 0);
        CHECK(p[0].psr == 0);
        CHECK(std::isnan(p[1].value));
    }
    std::vector<float> nans(81, std::numeric_limits<float>::quiet_NaN());
    find_peaks(nans.data(), e, 1, 1, Refine::none, 3, p);
    CHECK(std::isnan(p[0].value));
    CHECK(p[0].at[0] == 0);
    CHECK(p[0].quality == 0);
}
