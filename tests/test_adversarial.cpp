// 10^4 adversarial LCC problems (DESIGN.md section 4): near-constant data, huge and tiny scales,
// denormals, signed zeros, huge offsets, mixed magnitudes, on images and templates, spread over
// every host solver. For finite input the output must be finite, within [-1, 1], and exactly 0
// wherever the panel has zero variance.
#include "adversarial.h"
#include "helpers.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>

using adversarial::Kind;
using adversarial::make;

TEST_CASE("10^4 adversarial LCC cases: finite, bounded, exact zeros", "[numerics][adversarial]")
{
    const auto names = th::solvers("host.");
    REQUIRE(!names.empty());
    std::mt19937 rng(2024);
    std::uniform_int_distribution<int> small(1, 9);
    int cases = 0, nonfinite = 0, out_of_range = 0, zero_misses = 0;
    for (int c = 0; c < 10000; ++c) {
        const std::string& name = names[size_t(c) % names.size()];
        const int dim = th::solver_dim(name), n = th::solver_cube(name);
        ref::Shape s;
        s.dim = dim;
        s.region = flcc_region(c % 3);
        const int k1 = n ? n : small(rng), k2 = n ? n : small(rng), k3 = n ? n : small(rng);
        if (dim == 2) {
            s.templ = {k1, k2, 1};
            s.image = {k1 + small(rng) - 1, k2 + small(rng) + 3, 1};
        } else {
            s.templ = {k1, k2, k3};
            s.image = {k1 + small(rng) / 3, k2 + small(rng) / 3, k3 + small(rng) / 2};
        }
        const Kind ki = Kind(c % int(Kind::count));
        const Kind kt = Kind((c / int(Kind::count)) % int(Kind::count));
        const int64_t row = dim == 2 ? s.image.w : s.image.d;
        const auto img = make(ki, ref::image_elems(s), row, rng);
        const auto t = make(kt, ref::templ_elems(s), dim == 2 ? s.templ.w : s.templ.d, rng);
        th::RunOptions o;
        o.method = name.c_str();
        o.threads = 1;
        const th::Run r = th::run(FLCC_LCORR, s, img, t, o);
        INFO(name << " " << th::describe(s) << " image kind " << int(ki) << " template kind " << int(kt));
        REQUIRE(r.result == FLCC_SUCCESS);
        const auto flat = ref::zero_variance(s, img.data());
        const bool flat_template = std::all_of(t.begin(), t.end(), [&](float v) { return v == t[0]; });
        for (size_t i = 0; i < r.out.size(); ++i) {
            if (!std::isfinite(r.out[i])) ++nonfinite;
            if (!(std::fabs(r.out[i]) <= 1.0f)) ++out_of_range;
            if ((flat[i] || flat_template) && r.out[i] != 0.0f) ++zero_misses;
        }
        ++cases;
    }
    CHECK(cases == 10000);
    CHECK(nonfinite == 0);
    CHECK(out_of_range == 0);
    CHECK(zero_misses == 0);
}
