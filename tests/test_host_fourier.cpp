// The host Fourier solvers (src/host/fourier_solver.cpp, linear_fourier_solver.cpp) beyond the
// generic solver suite:
// different FFT boxes of one problem agree (tiled = untiled), fast-size padding changes nothing,
// larger problems match the float64 reference, the accuracy measures hold on their worst cases
// (gradients and steps over big boxes, flat regions by the padding), streams equal
// frame-by-frame runs, and frames with an unchanged template do no template work.
#include "helpers.h"
#include "host/fourier_solver.h"
#include "host/kernels/kernel_set.h"
#include "plan/template.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using ref::Data;

constexpr double kLccTol = 1e-5;
constexpr double kConvTol = 1e-5;

double tolerance(flcc_op op, Data d)
{
    return op == FLCC_CONV ? kConvTol : d == Data::ramp ? 1e-4 : kLccTol;
}

th::Run run_with(const std::string& method, flcc_op op, const ref::Shape& s,
                 const std::vector<float>& img, const std::vector<float>& t, int threads = 0)
{
    th::RunOptions o;
    o.method = method.c_str();
    o.threads = threads;
    return th::run(op, s, img, t, o);
}

// An LCC plan of `method` forced by name and made without timing (FLCC_ESTIMATE).
flcc_result forced_plan(flcc_plan* plan, const char* method, int dim, flcc_size image, flcc_size templ,
                        flcc_region region)
{
    flcc_options o;
    flcc_options_init(&o);
    o.method = method;
    o.region = region;
    o.rigor = FLCC_ESTIMATE;
    return flcc_plan_create(plan, FLCC_LCORR, dim, image, templ, &o);
}

// max |a - b|, relative to max(|b|_inf, 1) for convolution.
double difference(flcc_op op, const std::vector<float>& a, const std::vector<float>& b)
{
    double e = 0, m = 1;
    for (size_t i = 0; i < a.size(); ++i) {
        e = std::max(e, std::fabs(double(a[i]) - double(b[i])));
        m = std::max(m, std::fabs(double(b[i])));
    }
    return op == FLCC_CONV ? e / m : e;
}

// Runs every method on the problem and checks each against the reference.
void check_against_reference(const std::vector<std::string>& methods, flcc_op op,
                             const ref::Shape& s, Data d, std::mt19937& rng)
{
    const auto img = ref::make_data(d, s, true, rng);
    const auto t = ref::make_data(d, s, false, rng);
    const auto want = th::reference(op, s, img.data(), t.data());
    for (const std::string& m : methods) {
        const th::Run r = run_with(m, op, s, img, t);
        INFO(m << " " << (op == FLCC_CONV ? "conv " : "lcorr ") << th::describe(s) << " data "
               << ref::data_name(d));
        REQUIRE(r.result == FLCC_SUCCESS);
        CHECK(th::error(op, want, r.out.data()) <= tolerance(op, d));
    }
}

}  // namespace

TEST_CASE("Fourier: different FFT boxes of one problem agree", "[fourier]")
{
    std::mt19937 rng(11);
    const std::vector<std::string> m2 = {"host.fourier2.t64", "host.fourier2.t128",
                                         "host.fourier2.t256", "host.fourier2.whole",
                                         "host.fourier2.linear"};
    const std::vector<std::string> m3 = {"host.fourier3.t16", "host.fourier3.t32",
                                         "host.fourier3.whole", "host.fourier3.linear"};
    for (flcc_region reg : {FLCC_FULL, FLCC_SAME, FLCC_VALID})
        for (flcc_op op : {FLCC_CONV, FLCC_LCORR}) {
            const ref::Shape s2{2, {300, 350, 1}, {17, 23, 1}, reg};
            const ref::Shape s3{3, {40, 37, 45}, {5, 7, 6}, reg};
            for (const auto& [s, methods] : {std::pair{s2, m2}, std::pair{s3, m3}}) {
                const auto img = ref::make_data(Data::uniform, s, true, rng);
                const auto t = ref::make_data(Data::uniform, s, false, rng);
                const th::Run base = run_with(methods.back(), op, s, img, t);   // untiled
                REQUIRE(base.result == FLCC_SUCCESS);
                for (const std::string& m : methods) {
                    const th::Run r = run_with(m, op, s, img, t);
                    INFO(m << " " << th::describe(s));
                    REQUIRE(r.result == FLCC_SUCCESS);
                    const double tol = op == FLCC_CONV ? kConvTol : kLccTol;
                    CHECK(difference(op, r.out, base.out) <= tol);
                }
            }
        }
}

TEST_CASE("Fourier: fast-size padding leaves results unchanged", "[fourier]")
{
    // Boxes of prime extent (out + T - 1 = 127, 131, 113, 109): the transforms are padded to
    // the next 2^a 3^b 5^c 7^d size, whole and tiled.
    std::mt19937 rng(12);
    for (flcc_region reg : {FLCC_FULL, FLCC_VALID})
        for (flcc_op op : {FLCC_CONV, FLCC_LCORR}) {
            const ref::Shape s2 = reg == FLCC_FULL ? ref::Shape{2, {117, 119, 1}, {11, 13, 1}, reg}
                                                   : ref::Shape{2, {127, 131, 1}, {11, 13, 1}, reg};
            check_against_reference(
                {"host.fourier2.t64", "host.fourier2.t128", "host.fourier2.whole"}, op, s2,
                Data::uniform, rng);
            const ref::Shape s3 = reg == FLCC_FULL ? ref::Shape{3, {27, 25, 29}, {5, 7, 3}, reg}
                                                   : ref::Shape{3, {31, 29, 23}, {5, 7, 3}, reg};
            check_against_reference(
                {"host.fourier3.t16", "host.fourier3.whole", "host.fourier3.linear"}, op, s3,
                Data::uniform, rng);
        }
}

TEST_CASE("Fourier: larger problems match the reference", "[fourier][slow]")
{
    std::mt19937 rng(13);
    const std::vector<std::string> m2 = {"host.fourier2.t128", "host.fourier2.t512",
                                         "host.fourier2.whole"};
    const std::vector<std::string> m3 = {"host.fourier3.t32", "host.fourier3.t64",
                                         "host.fourier3.whole"};
    for (flcc_region reg : {FLCC_FULL, FLCC_VALID}) {
        const ref::Shape s2{2, {700, 900, 1}, {40, 33, 1}, reg};
        const ref::Shape s3{3, {60, 60, 60}, {9, 7, 5}, reg};
        for (Data d : {Data::uniform, Data::uint16, Data::offset, Data::ramp, Data::plateaus})
            check_against_reference(m2, FLCC_LCORR, s2, d, rng);
        check_against_reference(m2, FLCC_CONV, s2, Data::uniform, rng);
        for (Data d : {Data::uniform, Data::offset, Data::panels})
            check_against_reference(m3, FLCC_LCORR, s3, d, rng);
        check_against_reference(m3, FLCC_CONV, s3, Data::uint8, rng);
    }
}

TEST_CASE("Fourier: gradients and steps over big boxes stay accurate", "[fourier][numerics]")
{
    // Uncorrected, the centred ramp's energy grows with the box: on 1000^2 a small template's
    // error reached 1.5e-4 with one 1000^2 box; a step between plateaus 1e3 apart holds every
    // box across it to its energy. The boxes' additive background removes both.
    std::mt19937 rng(14);
    const ref::Shape s{2, {1000, 1000, 1}, {5, 3, 1}, FLCC_VALID};
    check_against_reference({"host.fourier2.t1024", "host.fourier2.whole", "host.fourier2.linear"},
                            FLCC_LCORR, s, Data::ramp, rng);
    const ref::Shape p{2, {600, 640, 1}, {24, 24, 1}, FLCC_SAME};
    check_against_reference({"host.fourier2.t256", "host.fourier2.whole", "host.fourier2.linear"},
                            FLCC_LCORR, p, Data::plateaus, rng);
    const ref::Shape v{3, {40, 44, 48}, {6, 6, 6}, FLCC_FULL};
    for (Data d : {Data::ramp, Data::plateaus})
        check_against_reference(
            {"host.fourier3.t32", "host.fourier3.whole", "host.fourier3.linear"}, FLCC_LCORR, v, d,
            rng);
}

TEST_CASE("Fourier: flat regions and few image values by the padding stay accurate",
          "[fourier][numerics]")
{
    // Boundary tiles are not centred: a window of small variance (a flat panel next to the
    // padding, a corner holding one small image value) sits in a box of large values. The
    // background and the a-posteriori check handle them; without both, these cases reached
    // 1.3e-5 and 3.5e-5. The 7x1 ramp window sits far from its box's mean (zero-sum taps).
    for (unsigned seed = 1; seed <= 6; ++seed) {
        std::mt19937 rng(seed);
        for (flcc_region reg : {FLCC_FULL, FLCC_SAME}) {
            check_against_reference(
                {"host.fourier2.t64", "host.fourier2.whole", "host.fourier2.linear"}, FLCC_LCORR,
                ref::Shape{2, {100, 87, 1}, {13, 11, 1}, reg}, Data::panels, rng);
            for (Data d : {Data::uniform, Data::uint8})
                check_against_reference(
                    {"host.fourier2.t64", "host.fourier2.whole", "host.fourier2.linear"},
                    FLCC_LCORR, ref::Shape{2, {31, 70, 1}, {1, 9, 1}, reg}, d, rng);
            check_against_reference(
                {"host.fourier3.t16", "host.fourier3.whole", "host.fourier3.linear"}, FLCC_LCORR,
                ref::Shape{3, {20, 18, 22}, {6, 5, 4}, reg}, Data::panels, rng);
            check_against_reference(
                {"host.fourier2.t64", "host.fourier2.whole", "host.fourier2.linear"}, FLCC_LCORR,
                ref::Shape{2, {25, 43, 1}, {7, 1, 1}, reg}, Data::ramp, rng);
        }
    }
}

TEST_CASE("Fourier: a numerator of exactly 0 is recomputed where its window's variance is small",
          "[fourier][numerics]")
{
    // The finalisation (lcc_plane, every kernel set this CPU runs) of an 8 x 8 frame's VALID
    // outputs with a 3 x 3 template, its numerators given in float but one of them 0: |N / r|
    // then says nothing of the window, and the rule (LccPlaneArgs::zero_num_d) recomputes it
    // from the frame where D / n lies below the limit, and leaves its 0 above the limit.
    constexpr int S = 8, T = 3, O = S - T + 1, kRow = 32, kScratch = 256;
    const ref::Shape shape{2, {S, S, 1}, {T, T, 1}, FLCC_VALID};
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    std::vector<float> frame(S * S), x(S * kRow, 0.f), templ(T * T), taps(T * T);
    for (float& v : frame) v = u(rng);
    for (float& v : templ) v = u(rng);
    for (int i = 0; i < S; ++i)
        std::copy(frame.begin() + i * S, frame.begin() + (i + 1) * S, x.begin() + i * kRow);
    flcc::normalised_template(templ.data(), T * T, false, taps.data());
    double tap_sum = 0;
    for (float t : taps) tap_sum += t;
    // The numerators (the frame correlated with the taps) and the coefficients in double.
    const std::vector<double> numerators = ref::xcorr(shape, frame.data(), taps.data());
    const std::vector<double> expected = ref::lcorr(shape, frame.data(), templ.data());
    std::vector<float> num(O * kRow, 0.f);
    for (int r = 0; r < O; ++r)
        for (int c = 0; c < O; ++c) num[r * kRow + c] = float(numerators[r * O + c]);
    const int zr = 2, zc = 3;
    num[zr * kRow + zc] = 0.f;
    // That window's D / n: (N / r)^2.
    const double zero_d = std::pow(numerators[zr * O + zc] / expected[zr * O + zc], 2);
    REQUIRE(std::fabs(expected[zr * O + zc]) > 0.05);   // a 0 there is wrong

    const flcc::host::KernelSet* sets[3];
    const int count = flcc::host::runnable_kernel_sets(sets);
    for (int k = 0; k < count; ++k)
        for (double limit : {0.0, 0.5 * zero_d, 2.0 * zero_d}) {
            INFO(sets[k]->isa << ", limit " << limit << " against D / n " << zero_d);
            std::vector<double> v1(kScratch), v2(kScratch), q1(kScratch), q2(kScratch), zeros(kScratch, 0.0);
            std::vector<float> out(O * O, -2.f);
            flcc::host::LccPlaneArgs a;
            a.x = x.data();
            a.x_row = kRow;
            a.x_plane = S * kRow;
            a.num = num.data();
            a.num_row = kRow;
            a.rows = O;
            a.cols = O;
            a.t1 = T;
            a.t2 = T;
            a.n = T * T;
            a.tau_abs = 0;   // guarded mode
            a.zero_num_d = limit;
            a.out = out.data();
            a.out_row = O;
            a.v1 = v1.data();
            a.v2 = v2.data();
            a.q1 = q1.data();
            a.q2 = q2.data();
            a.zeros = zeros.data();
            a.taps = taps.data();
            a.tap_sum = tap_sum;
            a.frame = frame.data();
            a.image[0] = 1, a.image[1] = S, a.image[2] = S;
            sets[k]->lcc_plane(a);
            for (int r = 0; r < O; ++r)
                for (int c = 0; c < O; ++c) {
                    const bool zero = r == zr && c == zc;
                    const double want = zero && !(limit > zero_d) ? 0.0 : expected[r * O + c];
                    INFO("output " << r << ", " << c);
                    CHECK(std::fabs(out[r * O + c] - want) <= 1e-5);
                }
        }
}

TEST_CASE("Fourier: a stream of frames equals frame-by-frame runs", "[fourier]")
{
    std::mt19937 rng(15);
    const int frames = 4;
    for (const std::string& m :
         {"host.fourier2.t64", "host.fourier2.whole", "host.fourier2.linear"})
        for (flcc_op op : {FLCC_CONV, FLCC_LCORR}) {
            const ref::Shape s{2, {90, 110, 1}, {12, 9, 1}, FLCC_SAME};
            std::vector<float> all;
            std::vector<std::vector<float>> each;
            for (int f = 0; f < frames; ++f) {
                each.push_back(ref::make_data(f % 2 ? Data::uint16 : Data::offset, s, true, rng));
                all.insert(all.end(), each.back().begin(), each.back().end());
            }
            const auto t = ref::make_data(Data::uniform, s, false, rng);
            th::RunOptions o;
            o.method = m.c_str();
            o.type = FLCC_STREAM;
            o.count = frames;
            const th::Run stream = th::run(op, s, all, t, o);
            REQUIRE(stream.result == FLCC_SUCCESS);
            const size_t out_n = size_t(ref::out_elems(s));
            for (int f = 0; f < frames; ++f) {
                const th::Run one = run_with(m, op, s, each[size_t(f)], t);
                REQUIRE(one.result == FLCC_SUCCESS);
                INFO(m << " frame " << f);
                // Same tiles, same transforms: identical results.
                CHECK(std::equal(one.out.begin(), one.out.end(), stream.out.begin() + f * out_n));
            }
        }
}

TEST_CASE("Fourier: thread counts give the same results", "[fourier]")
{
    std::mt19937 rng(16);
    const ref::Shape s{2, {400, 300, 1}, {20, 20, 1}, FLCC_FULL};
    const auto img = ref::make_data(Data::uint16, s, true, rng);
    const auto t = ref::make_data(Data::uint16, s, false, rng);
    for (const std::string& m :
         {"host.fourier2.t128", "host.fourier2.whole", "host.fourier2.linear"}) {
        const th::Run one = run_with(m, FLCC_LCORR, s, img, t, 1);
        const th::Run three = run_with(m, FLCC_LCORR, s, img, t, 3);
        REQUIRE(one.result == FLCC_SUCCESS);
        REQUIRE(three.result == FLCC_SUCCESS);
        INFO(m);
        CHECK(difference(FLCC_LCORR, three.out, one.out) <= kLccTol);
    }
}

TEST_CASE("Fourier: the template is transformed once per template, never per frame", "[fourier]")
{
    std::mt19937 rng(17);
    const ref::Shape s{2, {64, 80, 1}, {9, 9, 1}, FLCC_FULL};
    auto img = ref::make_data(Data::uniform, s, true, rng);
    auto t = ref::make_data(Data::uniform, s, false, rng);
    flcc_plan plan = nullptr;
    REQUIRE(forced_plan(&plan, "host.fourier2.t64", 2, s.image, s.templ, s.region) == FLCC_SUCCESS);
    std::vector<float> out(size_t(ref::out_elems(s)) * 3);
    const int64_t before = flcc::host::fourier_template_preparations();
    REQUIRE(flcc_lcorr_exec(plan, img.data(), t.data(), out.data(), 1) == FLCC_SUCCESS);
    CHECK(flcc::host::fourier_template_preparations() == before + 1);
    for (int i = 0; i < 3; ++i) {
        img[size_t(i)] += 1.0f;   // new frames, same template
        REQUIRE(flcc_lcorr_exec(plan, img.data(), t.data(), out.data(), 1) == FLCC_SUCCESS);
    }
    CHECK(flcc::host::fourier_template_preparations() == before + 1);
    t[0] += 0.5f;
    REQUIRE(flcc_lcorr_exec(plan, img.data(), t.data(), out.data(), 1) == FLCC_SUCCESS);
    CHECK(flcc::host::fourier_template_preparations() == before + 2);
    const auto want = ref::lcorr(s, img.data(), t.data());
    CHECK(ref::max_abs_diff(want, out.data()) <= kLccTol);
    flcc_destroy(plan);
}

TEST_CASE("Fourier: the linear box after new templates, frame by frame", "[fourier]")
{
    // host.fourier*.linear's box holds the image with zeros after it, and a template's transform
    // takes the same box as scratch: each frame after a new template must still match, above
    // all where the template reaches past the image (its taps then lie where the zeros go).
    std::mt19937 rng(18);
    for (const ref::Shape& s : {ref::Shape{2, {40, 52, 1}, {11, 9, 1}, FLCC_FULL},
                                ref::Shape{2, {20, 16, 1}, {25, 9, 1}, FLCC_FULL},
                                ref::Shape{3, {9, 12, 10}, {4, 5, 3}, FLCC_SAME}}) {
        const std::string m = s.dim == 2 ? "host.fourier2.linear" : "host.fourier3.linear";
        flcc_plan plan = nullptr;
        REQUIRE(forced_plan(&plan, m.c_str(), s.dim, s.image, s.templ, s.region) == FLCC_SUCCESS);
        std::vector<float> out(size_t(ref::out_elems(s))), t;
        for (int step = 0; step < 6; ++step) {
            const auto img = ref::make_data(step % 2 ? Data::uint16 : Data::uniform, s, true, rng);
            if (step % 2 == 0) t = ref::make_data(Data::uniform, s, false, rng);   // a new template
            REQUIRE(flcc_lcorr_exec(plan, img.data(), t.data(), out.data(), 1) == FLCC_SUCCESS);
            INFO(m << " step " << step);
            CHECK(ref::max_abs_diff(ref::lcorr(s, img.data(), t.data()), out.data()) <= kLccTol);
        }
        flcc_destroy(plan);
    }
}

TEST_CASE("Fourier: a non-finite frame leaves no trace in the next", "[fourier]")
{
    // 3D with a short last tile along the planes: the tile pipeline leaves stale planes in its
    // box buffer, which the transform must not read.
    std::mt19937 rng(18);
    const ref::Shape s{3, {37, 20, 21}, {5, 4, 6}, FLCC_FULL};
    auto img = ref::make_data(Data::uniform, s, true, rng);
    const auto t = ref::make_data(Data::uniform, s, false, rng);
    for (const std::string& m :
         {"host.fourier3.t16", "host.fourier3.whole", "host.fourier3.linear"}) {
        flcc_plan plan = nullptr;
        REQUIRE(forced_plan(&plan, m.c_str(), 3, s.image, s.templ, s.region) == FLCC_SUCCESS);
        std::vector<float> bad = img, out(size_t(ref::out_elems(s)));
        for (size_t i = 0; i < bad.size(); i += 97)
            bad[i] = std::numeric_limits<float>::quiet_NaN();
        CHECK(flcc_lcorr_exec(plan, bad.data(), t.data(), out.data(), 1) == FLCC_NONFINITE_INPUT);
        REQUIRE(flcc_lcorr_exec(plan, img.data(), t.data(), out.data(), 1) == FLCC_SUCCESS);
        INFO(m);
        CHECK(ref::max_abs_diff(ref::lcorr(s, img.data(), t.data()), out.data()) <= kLccTol);
        flcc_destroy(plan);
    }
}

TEST_CASE("Fourier: applicability follows box, template and memory", "[fourier]")
{
    auto plans = [](const char* method, int dim, flcc_size im, flcc_size tp, flcc_region reg) {
        flcc_plan p = nullptr;
        const flcc_result r = forced_plan(&p, method, dim, im, tp, reg);
        flcc_destroy(p);
        return r;
    };
    // A box that must tile needs B > T; an output fitting one box never tiles.
    CHECK(plans("host.fourier2.t64", 2, {200, 200, 1}, {63, 63, 1}, FLCC_VALID) == FLCC_SUCCESS);
    CHECK(plans("host.fourier2.t64", 2, {200, 200, 1}, {64, 20, 1}, FLCC_VALID) ==
          FLCC_METHOD_NOT_APPLICABLE);
    CHECK(plans("host.fourier2.t64", 2, {40, 40, 1}, {64, 64, 1}, FLCC_FULL) ==
          FLCC_METHOD_NOT_APPLICABLE);
    CHECK(plans("host.fourier2.t64", 2, {40, 20, 1}, {25, 5, 1}, FLCC_VALID) == FLCC_SUCCESS);
    // The whole box of a 16384^2 image exceeds the FFT memory budget; tiles do not.
    CHECK(plans("host.fourier2.whole", 2, {16384, 16384, 1}, {32, 32, 1}, FLCC_VALID) ==
          FLCC_METHOD_NOT_APPLICABLE);
    CHECK(plans("host.fourier2.t512", 2, {16384, 16384, 1}, {32, 32, 1}, FLCC_VALID) ==
          FLCC_SUCCESS);
    // 2D solvers do not take 3D problems and the reverse.
    CHECK(plans("host.fourier3.t16", 2, {64, 64, 1}, {5, 5, 1}, FLCC_FULL) ==
          FLCC_METHOD_NOT_APPLICABLE);
    CHECK(plans("host.fourier2.t64", 3, {20, 20, 20}, {5, 5, 5}, FLCC_FULL) ==
          FLCC_METHOD_NOT_APPLICABLE);
}

TEST_CASE("Fourier: a box larger than the problem needs is no candidate, and forced still runs",
          "[fourier][planner]")
{
    // LCC 100 x 90, 8 x 8, full: boxes of 107 x 97. t64 tiles, t128 takes the whole output, and
    // t256 .. t4096 would make t128's computation again: ESTIMATE (which lists every candidate
    // it costs) and MEASURE list none of them.
    for (flcc_rigor rigor : {FLCC_ESTIMATE, FLCC_MEASURE}) {
        flcc_wisdom_forget();
        flcc_options o;
        flcc_options_init(&o);
        o.platform = FLCC_HOST;
        o.rigor = rigor;
        flcc_plan p = nullptr;
        REQUIRE(flcc_plan_create(&p, FLCC_LCORR, 2, flcc_size{100, 90, 1}, flcc_size{8, 8, 1}, &o) ==
                FLCC_SUCCESS);
        std::vector<std::string> names;
        for (int i = 0; i < flcc_plan_candidate_count(p); ++i) {
            const char* name = nullptr;
            double t = 0;
            REQUIRE(flcc_plan_candidate(p, i, &name, &t) == FLCC_SUCCESS);
            names.push_back(name);
        }
        flcc_destroy(p);
        INFO("rigor " << int(rigor));
        const auto listed = [&](const char* n) {
            return std::find(names.begin(), names.end(), n) != names.end();
        };
        CHECK(listed("host.fourier2.t64"));
        CHECK(listed("host.fourier2.t128"));
        CHECK(listed("host.fourier2.whole"));
        for (const char* n : {"host.fourier2.t256", "host.fourier2.t512", "host.fourier2.t1024",
                              "host.fourier2.t2048", "host.fourier2.t4096"})
            CHECK_FALSE(listed(n));
    }
    flcc_wisdom_forget();
    // Forced by name, the larger box runs and computes exactly what t128 computes.
    const ref::Shape s{2, {100, 90, 1}, {8, 8, 1}, FLCC_FULL};
    std::mt19937 rng(5);
    const auto img = ref::make_data(Data::uniform, s, true, rng);
    const auto t = ref::make_data(Data::uniform, s, false, rng);
    const th::Run small = run_with("host.fourier2.t128", FLCC_LCORR, s, img, t);
    const th::Run large = run_with("host.fourier2.t4096", FLCC_LCORR, s, img, t);
    REQUIRE(small.result == FLCC_SUCCESS);
    REQUIRE(large.result == FLCC_SUCCESS);
    CHECK(small.out == large.out);
}
