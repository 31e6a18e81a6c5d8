// The GPU direct solvers (device.direct2.*, device.direct3.*) beyond the every-solver sweeps of
// test_device_all_solvers.cpp: the small 2D kernels on every column shift, from aligned and
// misaligned device images. Without a usable GPU every test case says so and is skipped.
#include "device_test_support.h"
#include "helpers.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

using dt::device_opts;
using dt::DeviceArray;
using dt::forced_plan;
using dt::skip_without_gpu;

TEST_CASE("small 2D direct kernels: every column shift, aligned and misaligned device images",
          "[device][numerics]")
{
    // The small 2D kernels (templates up to 8 x 8) gather a box that starts at any column mod 4
    // (template size and region set it) into float4-aligned shared rows. The shapes of the other
    // cases have widths that are not multiples of 4, or one tile across; these have several tiles
    // across a width that is, and the same frames then come from a device pointer one float off
    // 16-byte alignment.
    if (skip_without_gpu()) return;
    using ref::Data;
    for (int k = 2; k <= 8; ++k) {
        const std::string name = "device.direct2.k" + std::to_string(k);
        for (flcc_region reg : {FLCC_FULL, FLCC_SAME, FLCC_VALID})
            for (Data d : {Data::uniform, Data::uint16, Data::panels}) {
                const ref::Shape s{2, {70, 136, 1}, {k, k, 1}, reg};
                std::mt19937 rng(5);
                const auto img = ref::make_data(d, s, true, rng);
                const auto t = ref::make_data(d, s, false, rng);
                const auto want = ref::lcorr(s, img.data(), t.data());
                const auto want_conv = ref::conv(s, img.data(), t.data());
                INFO(name << " " << th::describe(s) << " data " << ref::data_name(d));
                const th::Run r = th::run(FLCC_LCORR, s, img, t, device_opts(name));
                REQUIRE(r.result == FLCC_SUCCESS);
                CHECK(ref::max_abs_diff(want, r.out.data()) <= 1e-5);
                const th::Run c = th::run(FLCC_CONV, s, img, t, device_opts(name));
                REQUIRE(c.result == FLCC_SUCCESS);
                CHECK(th::error(FLCC_CONV, want_conv, c.out.data()) <= 1e-5);

                flcc_plan p = nullptr;
                REQUIRE(forced_plan(&p, name, FLCC_LCORR, s) == FLCC_SUCCESS);
                std::vector<float> shifted(img.size() + 1);
                std::copy(img.begin(), img.end(), shifted.begin() + 1);
                DeviceArray<float> d_in(shifted), d_out(want.size());
                REQUIRE(flcc_lcorr_exec(p, d_in.p + 1, t.data(), d_out.p, 1) == FLCC_SUCCESS);
                CHECK(ref::max_abs_diff(want, d_out.get().data()) <= 1e-5);
                flcc_destroy(p);

                // A NaN anywhere in the image is reported by both operations (convolution's
                // blocks gather the statistics for this check alone).
                if (d != Data::uniform) continue;
                for (const size_t at : {size_t(0), img.size() / 2 + 3, img.size() - 1}) {
                    auto bad = img;
                    bad[at] = std::nanf("");
                    INFO("NaN at " << at);
                    CHECK(th::run(FLCC_LCORR, s, bad, t, device_opts(name)).result == FLCC_NONFINITE_INPUT);
                    CHECK(th::run(FLCC_CONV, s, bad, t, device_opts(name)).result == FLCC_NONFINITE_INPUT);
                }
            }
    }
}
