// Properties that need no reference (FFTW's self-test idea): linearity, impulse response,
// shift equivariance, LCC self-match and affine invariance; plus the plan-level behaviour:
// streams equal frame-by-frame results, template changes are noticed, the planner records
// its candidates. Run on the planner's pick and on every host solver where it matters.
#include "helpers.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>

namespace {

std::vector<float> random_vec(size_t n, std::mt19937& rng, float lo = -1, float hi = 1)
{
    std::uniform_real_distribution<float> u(lo, hi);
    std::vector<float> v(n);
    for (float& x : v) x = u(rng);
    return v;
}

double max_abs(const std::vector<float>& v)
{
    double m = 0;
    for (float x : v) m = std::max(m, double(std::fabs(x)));
    return m;
}

}  // namespace

TEST_CASE("convolution is linear in the image", "[properties]")
{
    std::mt19937 rng(1);
    for (const std::string& name : th::solvers("host.")) {
        const ref::Shape s = th::shapes_for(name).front();
        const size_t n = size_t(ref::image_elems(s));
        const auto a = random_vec(n, rng), b = random_vec(n, rng);
        const auto t = random_vec(size_t(ref::templ_elems(s)), rng);
        std::vector<float> mix(n);
        const float alpha = 0.75f, beta = -1.5f;
        for (size_t i = 0; i < n; ++i) mix[i] = alpha * a[i] + beta * b[i];
        th::RunOptions o;
        o.method = name.c_str();
        const auto ra = th::run(FLCC_CONV, s, a, t, o), rb = th::run(FLCC_CONV, s, b, t, o);
        const auto rm = th::run(FLCC_CONV, s, mix, t, o);
        REQUIRE(rm.result == FLCC_SUCCESS);
        double err = 0;
        for (size_t i = 0; i < rm.out.size(); ++i)
            err = std::max(err, std::fabs(double(rm.out[i]) - (alpha * ra.out[i] + beta * rb.out[i])));
        INFO(name << " " << th::describe(s));
        CHECK(err <= 1e-5 * std::max(1.0, max_abs(rm.out)));
    }
}

TEST_CASE("the convolution of an impulse is the template", "[properties]")
{
    // Full region: an impulse at image index q gives the template placed at q.
    for (const std::string& name : th::solvers("host.")) {
        for (const ref::Shape& s0 : th::shapes_for(name)) {
            if (s0.region != FLCC_FULL) continue;
            const ref::Shape s = s0;
            const auto ext = ref::out_extent(s);
            const int64_t S[3] = {s.dim == 2 ? 1 : s.image.h, s.dim == 2 ? s.image.h : s.image.w,
                                  s.dim == 2 ? s.image.w : s.image.d};
            const int64_t T[3] = {s.dim == 2 ? 1 : s.templ.h, s.dim == 2 ? s.templ.h : s.templ.w,
                                  s.dim == 2 ? s.templ.w : s.templ.d};
            const int64_t q[3] = {S[0] / 2, S[1] / 3, S[2] - 1};
            std::vector<float> img(size_t(ref::image_elems(s)), 0.0f);
            img[size_t((q[0] * S[1] + q[1]) * S[2] + q[2])] = 1.0f;
            std::vector<float> t(size_t(ref::templ_elems(s)));
            for (size_t i = 0; i < t.size(); ++i) t[i] = float(i % 7) - 2.5f;
            th::RunOptions o;
            o.method = name.c_str();
            const auto r = th::run(FLCC_CONV, s, img, t, o);
            REQUIRE(r.result == FLCC_SUCCESS);
            double err = 0;
            for (int64_t p = 0; p < ext[0]; ++p)
                for (int64_t y = 0; y < ext[1]; ++y)
                    for (int64_t x = 0; x < ext[2]; ++x) {
                        const int64_t a = p - q[0], i = y - q[1], j = x - q[2];
                        const bool in = a >= 0 && a < T[0] && i >= 0 && i < T[1] && j >= 0 && j < T[2];
                        const double want = in ? t[size_t((a * T[1] + i) * T[2] + j)] : 0.0;
                        err = std::max(err, std::fabs(want - r.out[size_t((p * ext[1] + y) * ext[2] + x)]));
                    }
            INFO(name << " " << th::describe(s));
            CHECK(err <= 1e-5 * 3.5);   // relative to max |template|
            break;
        }
    }
}

TEST_CASE("shifting the image shifts the output", "[properties]")
{
    std::mt19937 rng(2);
    const ref::Shape s{2, {50, 61, 1}, {7, 5, 1}, FLCC_VALID};
    const auto img = random_vec(size_t(ref::image_elems(s)), rng);
    const auto t = random_vec(size_t(ref::templ_elems(s)), rng);
    // Shift by (2, 3): shifted[y][x] = img[y+2][x+3] (cropped), so out'[y][x] = out[y+2][x+3].
    const ref::Shape s2{2, {48, 58, 1}, {7, 5, 1}, FLCC_VALID};
    std::vector<float> shifted(size_t(48 * 58));
    for (int y = 0; y < 48; ++y)
        for (int x = 0; x < 58; ++x) shifted[size_t(y * 58 + x)] = img[size_t((y + 2) * 61 + x + 3)];
    for (flcc_op op : {FLCC_CONV, FLCC_LCORR}) {
        const auto a = th::run(op, s, img, t), b = th::run(op, s2, shifted, t);
        REQUIRE(a.result == FLCC_SUCCESS);
        REQUIRE(b.result == FLCC_SUCCESS);
        double err = 0;
        for (int y = 0; y < 42; ++y)
            for (int x = 0; x < 54; ++x)
                err = std::max(err, std::fabs(double(b.out[size_t(y * 54 + x)]) - a.out[size_t((y + 2) * 57 + x + 3)]));
        CHECK(err <= 1e-5);
    }
}

TEST_CASE("a template cut from the image matches itself with r = 1, its negative with -1", "[properties]")
{
    std::mt19937 rng(3);
    for (const std::string& name : th::solvers("host.")) {
        const int dim = th::solver_dim(name), n = th::solver_cube(name);
        const int k = n ? n : 6;
        const ref::Shape s = dim == 2 ? ref::Shape{2, {k + 30, k + 40, 1}, {k, k, 1}, FLCC_VALID}
                                      : ref::Shape{3, {k + 7, k + 6, k + 5}, {k, k, k}, FLCC_VALID};
        const auto img = random_vec(size_t(ref::image_elems(s)), rng, 0, 255);
        const auto ext = ref::out_extent(s);
        const int64_t W = dim == 2 ? s.image.w : s.image.d, H = dim == 2 ? s.image.h : s.image.w;
        const int64_t q[3] = {dim == 3 ? 2 : 0, dim == 3 ? 3 : 5, dim == 3 ? 4 : 9};   // template origin
        std::vector<float> t(size_t(ref::templ_elems(s))), neg(t.size());
        size_t i = 0;
        for (int a = 0; a < (dim == 3 ? k : 1); ++a)
            for (int y = 0; y < k; ++y)
                for (int x = 0; x < k; ++x, ++i) {
                    t[i] = img[size_t(((q[0] + a) * H + q[1] + y) * W + q[2] + x)];
                    neg[i] = -t[i];
                }
        th::RunOptions o;
        o.method = name.c_str();
        const auto r = th::run(FLCC_LCORR, s, img, t, o), rn = th::run(FLCC_LCORR, s, img, neg, o);
        REQUIRE(r.result == FLCC_SUCCESS);
        const size_t at = size_t((q[0] * ext[1] + q[1]) * ext[2] + q[2]);
        INFO(name);
        CHECK(std::fabs(r.out[at] - 1.0f) <= 1e-5f);
        CHECK(std::fabs(rn.out[at] + 1.0f) <= 1e-5f);
        CHECK(std::max_element(r.out.begin(), r.out.end()) - r.out.begin() == ptrdiff_t(at));
    }
}

TEST_CASE("LCC is invariant to affine changes of image and template", "[properties]")
{
    // r(a f + b, c t + d) = sign(a c) r(f, t), in the valid region (elsewhere the zero padding
    // is data and does not move with b).
    std::mt19937 rng(4);
    const ref::Shape s{2, {45, 52, 1}, {9, 8, 1}, FLCC_VALID};
    const auto f = random_vec(size_t(ref::image_elems(s)), rng);
    const auto t = random_vec(size_t(ref::templ_elems(s)), rng);
    const auto base = th::run(FLCC_LCORR, s, f, t);
    for (float a : {3.0f, -0.25f})
        for (float c : {2.0f, -8.0f}) {
            std::vector<float> f2(f), t2(t);
            for (float& v : f2) v = a * v + 100.0f;
            for (float& v : t2) v = c * v - 7.0f;
            const auto r = th::run(FLCC_LCORR, s, f2, t2);
            REQUIRE(r.result == FLCC_SUCCESS);
            const float sign = (a * c > 0) ? 1.0f : -1.0f;
            double err = 0;
            for (size_t i = 0; i < r.out.size(); ++i)
                err = std::max(err, double(std::fabs(r.out[i] - sign * base.out[i])));
            CHECK(err <= 2e-5);
        }
}

TEST_CASE("a stream of frames equals frame-by-frame results", "[properties][stream]")
{
    std::mt19937 rng(5);
    const int frames = 5;
    for (flcc_type type : {FLCC_SINGLE, FLCC_STREAM})
        for (const ref::Shape& s : {ref::Shape{2, {33, 47, 1}, {6, 6, 1}, FLCC_SAME},
                                    ref::Shape{3, {10, 11, 12}, {3, 4, 2}, FLCC_FULL}})
            for (flcc_op op : {FLCC_CONV, FLCC_LCORR}) {
                const size_t n = size_t(ref::image_elems(s)), m = size_t(ref::out_elems(s));
                const auto imgs = random_vec(n * frames, rng);
                const auto t = random_vec(size_t(ref::templ_elems(s)), rng);
                th::RunOptions o;
                o.count = frames;
                o.type = type;
                o.rigor = FLCC_MEASURE;
                const auto all = th::run(op, s, imgs, t, o);
                REQUIRE(all.result == FLCC_SUCCESS);
                for (int f = 0; f < frames; ++f) {
                    const std::vector<float> one(imgs.begin() + f * n, imgs.begin() + (f + 1) * n);
                    th::RunOptions o1;
                    o1.method = all.method.c_str();
                    const auto r = th::run(op, s, one, t, o1);
                    REQUIRE(r.result == FLCC_SUCCESS);
                    INFO(th::describe(s) << " frame " << f << " " << all.method);
                    CHECK(std::equal(r.out.begin(), r.out.end(), all.out.begin() + f * m));
                }
            }
}

TEST_CASE("a changed template is noticed, an unchanged one reused", "[properties]")
{
    std::mt19937 rng(6);
    const ref::Shape s{2, {30, 30, 1}, {5, 5, 1}, FLCC_VALID};
    const auto img = random_vec(size_t(ref::image_elems(s)), rng);
    auto t = random_vec(25, rng);
    flcc_options o;
    flcc_options_init(&o);
    o.region = FLCC_VALID;
    o.platform = FLCC_HOST;
    o.rigor = FLCC_ESTIMATE;
    flcc_plan p = nullptr;
    REQUIRE(flcc_plan_create(&p, FLCC_LCORR, 2, s.image, s.templ, &o) == FLCC_SUCCESS);
    std::vector<float> out(26 * 26);
    for (int round = 0; round < 3; ++round) {
        REQUIRE(flcc_lcorr_exec(p, img.data(), t.data(), out.data(), 1) == FLCC_SUCCESS);
        CHECK(ref::max_abs_diff(ref::lcorr(s, img.data(), t.data()), out.data()) <= 1e-5);
        REQUIRE(flcc_lcorr_exec(p, img.data(), t.data(), out.data(), 1) == FLCC_SUCCESS);   // reused
        CHECK(ref::max_abs_diff(ref::lcorr(s, img.data(), t.data()), out.data()) <= 1e-5);
        t[size_t(round * 7)] += 0.5f;   // same buffer, new contents
    }
    flcc_destroy(p);
}

TEST_CASE("MEASURE times the candidates and keeps the fastest", "[planner]")
{
    flcc_options o;
    flcc_options_init(&o);
    o.platform = FLCC_HOST;
    o.region = FLCC_VALID;
    flcc_plan p = nullptr;
    REQUIRE(flcc_plan_create(&p, FLCC_LCORR, 2, flcc_size{120, 130, 1}, flcc_size{8, 8, 1}, &o) ==
            FLCC_SUCCESS);
    const int n = flcc_plan_candidate_count(p);
    REQUIRE(n >= 2);   // at least host.direct2.k8 and host.direct2.generic
    double best = -1;
    std::string best_name;
    for (int i = 0; i < n; ++i) {
        const char* name;
        double t;
        REQUIRE(flcc_plan_candidate(p, i, &name, &t) == FLCC_SUCCESS);
        if (t >= 0 && (best < 0 || t < best)) best = t, best_name = name;
    }
    CHECK(best_name == flcc_plan_method(p));
    flcc_destroy(p);

    flcc_wisdom_forget();   // otherwise the MEASURE decision above is reused
    o.rigor = FLCC_ESTIMATE;
    REQUIRE(flcc_plan_create(&p, FLCC_LCORR, 2, flcc_size{120, 130, 1}, flcc_size{8, 8, 1}, &o) ==
            FLCC_SUCCESS);
    CHECK(flcc_plan_candidate_count(p) >= 2);
    flcc_destroy(p);
}
