// Every GPU solver, forced by name, against the float64 reference: varied shapes, regions and
// both operations, the LCC data classes of DESIGN.md section 4 with zero-variance panels exactly
// 0, adversarial data; and the GPU against the CPU. Without a usable GPU every test case says so
// and is skipped.
#include "adversarial.h"
#include "device_test_support.h"
#include "helpers.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

using dt::device_opts;
using dt::have_host_solvers;
using dt::skip_without_gpu;

TEST_CASE("every GPU solver matches the float64 reference on varied shapes", "[device][solvers]")
{
    if (skip_without_gpu()) return;
    const auto names = th::solvers("device.");
    REQUIRE(!names.empty());
    for (const std::string& name : names) {
        std::mt19937 rng(std::hash<std::string>{}(name));
        auto shapes = th::shapes_for(name);
        // A template of more values than the GPU's preparation kernels take per block (2,048 in
        // device.fourier2.box), whose statistics and tap sums merge over blocks.
        // And the small single exec of issue 28 (128 x 128 with a template of its size), and a
        // FULL region whose box is 192 x 256 in device.fourier2.box (the image over ten of its
        // preparation chunks).
        if (th::solver_dim(name) == 2 && th::solver_cube(name) == 0) {
            for (flcc_region reg : {FLCC_FULL, FLCC_SAME, FLCC_VALID})
                shapes.push_back({2, {70, 90, 1}, {45, 53, 1}, reg});
            shapes.push_back({2, {128, 128, 1}, {128, 128, 1}, FLCC_SAME});
            shapes.push_back({2, {131, 150, 1}, {60, 90, 1}, FLCC_FULL});
        }
        for (const ref::Shape& s : shapes)
            for (flcc_op op : {FLCC_CONV, FLCC_LCORR}) {
                const auto img = ref::make_data(ref::Data::uniform, s, true, rng);
                const auto t = ref::make_data(ref::Data::uniform, s, false, rng);
                const th::Run r = th::run(op, s, img, t, device_opts(name));
                INFO(name << " " << (op == FLCC_CONV ? "conv " : "lcorr ") << th::describe(s));
                if (r.result == FLCC_METHOD_NOT_APPLICABLE) continue;   // e.g. too large for shared memory
                REQUIRE(r.result == FLCC_SUCCESS);
                const auto want = th::reference(op, s, img.data(), t.data());
                INFO("worst " << th::worst(s, want, r.out.data()));
                CHECK(th::error(op, want, r.out.data()) <= 1e-5);
            }
    }
}

TEST_CASE("every GPU solver passes the LCC data classes, zero-variance panels exactly 0", "[device][numerics]")
{
    if (skip_without_gpu()) return;
    using ref::Data;
    for (const std::string& name : th::solvers("device.")) {
        std::mt19937 rng(7);
        const int dim = th::solver_dim(name), n = th::solver_cube(name);
        const int k = n ? n : (dim == 2 ? 9 : 4);
        std::vector<ref::Shape> shapes;
        for (flcc_region reg : {FLCC_FULL, FLCC_SAME, FLCC_VALID}) {
            shapes.push_back(dim == 2 ? ref::Shape{2, {k + 77, k + 90, 1}, {k, n ? k : k + 3, 1}, reg}
                                      : ref::Shape{3, {k + 9, k + 8, k + 11}, {k, k, n ? k : k + 1}, reg});
            // A template over several of the GPU preparation's chunks (device.fourier2.box: 2,048
            // values), whose statistics merge across blocks.
            if (dim == 2 && n == 0) shapes.push_back(ref::Shape{2, {70, 90, 1}, {45, 53, 1}, reg});
        }
        for (const ref::Shape& s : shapes) {
            for (Data d : {Data::uniform, Data::uint8, Data::uint16, Data::offset, Data::ramp,
                           Data::panels, Data::constant, Data::plateaus}) {
                const auto img = ref::make_data(d, s, true, rng);
                const auto t = ref::make_data(d, s, false, rng);
                const th::Run r = th::run(FLCC_LCORR, s, img, t, device_opts(name));
                INFO(name << " " << th::describe(s) << " data " << ref::data_name(d));
                if (r.result == FLCC_METHOD_NOT_APPLICABLE) continue;
                REQUIRE(r.result == FLCC_SUCCESS);
                const auto want = ref::lcorr(s, img.data(), t.data());
                INFO("worst " << th::worst(s, want, r.out.data()));
                CHECK(ref::max_abs_diff(want, r.out.data()) <= (d == Data::ramp ? 1e-4 : 1e-5));
                const auto flat = ref::zero_variance(s, img.data());
                size_t misses = 0, out_of_range = 0;
                for (size_t i = 0; i < want.size(); ++i) {
                    if (flat[i] && r.out[i] != 0.0f) ++misses;
                    if (!(std::fabs(r.out[i]) <= 1.0f)) ++out_of_range;
                }
                CHECK(misses == 0);
                CHECK(out_of_range == 0);
            }
        }
    }
}

TEST_CASE("every GPU solver on adversarial data: finite, bounded, exact zeros", "[device][numerics][adversarial]")
{
    // The host suite's adversarial kinds (huge and tiny scales, values near FLT_MAX, denormals,
    // signed zeros, huge offsets, mixed magnitudes, constant blocks) on every GPU solver: each
    // image kind once per solver with a template kind and region that rotate, on images of
    // several blocks or tiles (the 3D Fourier solvers' scaled and plain modes, their changes
    // along the planes). For finite input: finite, within [-1, 1], exactly 0 on every
    // zero-variance panel and for a constant template.
    if (skip_without_gpu()) return;
    using adversarial::Kind;
    const auto names = th::solvers("device.");
    std::mt19937 rng(77);
    int index = 0;
    for (const std::string& name : names) {
        const int dim = th::solver_dim(name), n = th::solver_cube(name), k = n ? n : (dim == 2 ? 7 : 5);
        for (int ki = 0; ki < int(Kind::count); ++ki) {
            const int kt = (3 * ki + index) % int(Kind::count);
            const flcc_region reg = flcc_region((ki + index) % 3);
            const ref::Shape s = dim == 2 ? ref::Shape{2, {k + 40, k + 50, 1}, {k, k, 1}, reg}
                                          : ref::Shape{3, {k + 6, k + 30, k + 28}, {k, k, k}, reg};
            const auto img = adversarial::make(Kind(ki), ref::image_elems(s), dim == 2 ? s.image.w : s.image.d, rng);
            const auto t = adversarial::make(Kind(kt), ref::templ_elems(s), dim == 2 ? s.templ.w : s.templ.d, rng);
            const th::Run r = th::run(FLCC_LCORR, s, img, t, device_opts(name));
            INFO(name << " " << th::describe(s) << " image kind " << ki << " template kind " << kt);
            if (r.result == FLCC_METHOD_NOT_APPLICABLE) continue;
            REQUIRE(r.result == FLCC_SUCCESS);
            const auto flat = ref::zero_variance(s, img.data());
            const bool flat_template = std::all_of(t.begin(), t.end(), [&](float v) { return v == t[0]; });
            size_t nonfinite = 0, out_of_range = 0, zero_misses = 0;
            for (size_t i = 0; i < r.out.size(); ++i) {
                if (!std::isfinite(r.out[i])) ++nonfinite;
                if (!(std::fabs(r.out[i]) <= 1.0f)) ++out_of_range;
                if ((flat[i] || flat_template) && r.out[i] != 0.0f) ++zero_misses;
            }
            CHECK(nonfinite == 0);
            CHECK(out_of_range == 0);
            CHECK(zero_misses == 0);
        }
        ++index;
    }
}

TEST_CASE("GPU and CPU agree", "[device]")
{
    if (skip_without_gpu()) return;
    std::mt19937 rng(11);
    for (const ref::Shape& s : {ref::Shape{2, {300, 257, 1}, {16, 16, 1}, FLCC_FULL},
                                ref::Shape{2, {211, 190, 1}, {7, 12, 1}, FLCC_SAME},
                                ref::Shape{3, {40, 33, 37}, {5, 5, 5}, FLCC_VALID}})
        for (flcc_op op : {FLCC_CONV, FLCC_LCORR}) {
            const auto img = ref::make_data(ref::Data::uint16, s, true, rng);
            const auto t = ref::make_data(ref::Data::uniform, s, false, rng);
            th::RunOptions host, dev;
            host.platform = FLCC_HOST;
            dev.platform = FLCC_DEVICE;
            const auto b = th::run(op, s, img, t, dev);
            REQUIRE(b.result == FLCC_SUCCESS);
            if (!have_host_solvers()) {
                // A GPU-only build (FLCC_WITH_HOST=OFF): the float64 reference stands in for the CPU.
                WARN("no host solvers in this build: GPU checked against the float64 reference");
                const auto want = op == FLCC_CONV ? ref::conv(s, img.data(), t.data()) : ref::lcorr(s, img.data(), t.data());
                const double tol = op == FLCC_CONV ? 1e-5 * std::max(ref::max_abs(want), 1.0) : 1e-4;
                CHECK(ref::max_abs_diff(want, b.out.data()) <= tol);
                continue;
            }
            const auto a = th::run(op, s, img, t, host);
            REQUIRE(a.result == FLCC_SUCCESS);
            INFO(th::describe(s) << " host " << a.method << " device " << b.method);
            double e = 0, m = 1;
            for (size_t i = 0; i < a.out.size(); ++i) {
                e = std::max(e, double(std::fabs(a.out[i] - b.out[i])));
                m = std::max(m, double(std::fabs(a.out[i])));
            }
            CHECK(e <= (op == FLCC_CONV ? 2e-5 * m : 2e-5));
        }
}
