// Batch plans (flcc.h, "Batched correlation and peaks"): every host solver forced by name
// against the float64 reference pair by pair, the pairings, subregions cut from frames of every
// element type, preprocessing, best over templates, template reuse, peaks against a brute-force
// search of the reference maps, sub-pixel accuracy on shifted band-limited patterns with
// Poisson noise, and the error codes.
#include "batch_helpers.h"
#include "helpers.h"
#include "geometry/fft_size.h"
#include "geometry/region.h"
#include "host/preprocess.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace bt;

TEST_CASE("every host solver runs batch pairs, forced by name", "[batch]")
{
    for (const std::string& name : th::solvers("host.")) {
        std::mt19937 rng(std::hash<std::string>{}(name));
        const auto shapes = th::shapes_for(name);
        // The first shape in FULL and the last in its region: small and varied.
        for (const ref::Shape& s : {shapes.front(), shapes.back()}) {
            for (flcc_op op : {FLCC_CONV, FLCC_LCORR, FLCC_XCORR}) {
                flcc_batch b;
                flcc_batch_init(&b);
                b.pairing = FLCC_ALL_PAIRS;
                b.images = 2;
                b.templates = 2;
                b.keep_maps = 1;
                b.refine = FLCC_REFINE_NONE;
                const std::vector<float> images = stack(s, true, b.images, rng);
                const std::vector<float> templs = stack(s, false, b.templates, rng);
                flcc_options o = host_options(name.c_str());
                o.region = s.region;
                const BatchRun r = run_batch(op, s, b, o, images.data(), templs.data());
                INFO(name << " " << op_name(op) << " " << th::describe(s) << ": "
                          << flcc_last_error_detail());
                REQUIRE(r.created == FLCC_SUCCESS);
                REQUIRE(r.executed == FLCC_SUCCESS);
                CHECK(r.method == name);
                check_maps(op, s, {FLCC_ALL_PAIRS, 2, 2, 4}, images, templs, r.maps.data(),
                           r.peaks.data(), b.peaks);
            }
        }
    }
}

TEST_CASE("pairwise batches pair images and templates by multiples", "[batch]")
{
    std::mt19937 rng(7);
    const ref::Shape s{2, {19, 23, 1}, {5, 4, 1}, FLCC_SAME};
    for (auto [images, templates] : {std::pair{3, 3}, std::pair{2, 6}, std::pair{6, 3}}) {
        flcc_batch b;
        flcc_batch_init(&b);
        b.images = images;
        b.templates = templates;
        b.keep_maps = 1;
        b.peaks = 2;
        const std::vector<float> im = stack(s, true, images, rng);
        const std::vector<float> tp = stack(s, false, templates, rng);
        flcc_options o = host_options();
        o.region = s.region;
        const BatchRun r = run_batch(FLCC_LCORR, s, b, o, im.data(), tp.data());
        REQUIRE(r.created == FLCC_SUCCESS);
        REQUIRE(r.executed == FLCC_SUCCESS);
        const int pairs = std::max(images, templates);
        CHECK(r.pairs == pairs);
        check_maps(FLCC_LCORR, s, {FLCC_PAIRWISE, images, templates, pairs}, im, tp, r.maps.data(),
                   r.peaks.data(), b.peaks);
    }
}

TEST_CASE("subregions are cut from frames of every element type", "[batch]")
{
    std::mt19937 rng(11);
    std::uniform_int_distribution<int> value(0, 65535);
    for (int dim : {2, 3}) {
        const flcc_size frame = dim == 2 ? flcc_size{40, 50, 1} : flcc_size{12, 13, 14};
        const ref::Shape s = dim == 2 ? ref::Shape{2, {16, 18, 1}, {16, 18, 1}, FLCC_FULL}
                                      : ref::Shape{3, {6, 5, 7}, {4, 5, 3}, FLCC_VALID};
        // Overlapping subregions, one touching the frame's far corner.
        const std::vector<int> origins =
            dim == 2 ? std::vector<int>{0, 0, 10, 12, 24, 32, 5, 3}
                     : std::vector<int>{0, 0, 0, 3, 4, 5, 6, 8, 7, 2, 2, 2};
        const int n = int(origins.size()) / dim;
        const int64_t frame_elems = int64_t(frame.h) * frame.w * (dim == 3 ? frame.d : 1);
        for (flcc_dtype type : {FLCC_FLOAT32, FLCC_UINT16, FLCC_UINT8}) {
            std::vector<float> fimg(static_cast<size_t>(frame_elems)), ftpl(static_cast<size_t>(frame_elems));
            for (auto& v : fimg) v = float(type == FLCC_UINT8 ? value(rng) % 256 : value(rng));
            for (auto& v : ftpl) v = float(type == FLCC_UINT8 ? value(rng) % 256 : value(rng));
            if (type == FLCC_FLOAT32)
                for (auto& v : fimg) v = v / 1000.f - 20.f;
            // The integer copies (of integer values: the float frames are shifted below zero).
            std::vector<uint16_t> u16i, u16t;
            std::vector<uint8_t> u8i, u8t;
            if (type == FLCC_UINT16) {
                u16i.assign(fimg.begin(), fimg.end());
                u16t.assign(ftpl.begin(), ftpl.end());
            } else if (type == FLCC_UINT8) {
                u8i.assign(fimg.begin(), fimg.end());
                u8t.assign(ftpl.begin(), ftpl.end());
            }
            const void* img_in = type == FLCC_FLOAT32  ? static_cast<const void*>(fimg.data())
                                 : type == FLCC_UINT16 ? static_cast<const void*>(u16i.data())
                                                       : static_cast<const void*>(u8i.data());
            const void* tpl_in = type == FLCC_FLOAT32  ? static_cast<const void*>(ftpl.data())
                                 : type == FLCC_UINT16 ? static_cast<const void*>(u16t.data())
                                                       : static_cast<const void*>(u8t.data());
            // The cut arrays, made here by index arithmetic.
            const auto cut = [&](const std::vector<float>& f, const flcc_size& e) {
                std::vector<float> v;
                const int d = dim == 3 ? e.d : 1, fd = dim == 3 ? frame.d : 1;
                for (int i = 0; i < n; ++i) {
                    const int* o = &origins[size_t(i * dim)];
                    const int oz = dim == 3 ? o[2] : 0;
                    for (int a = 0; a < e.h; ++a)
                        for (int b2 = 0; b2 < e.w; ++b2)
                            for (int c = 0; c < d; ++c)
                                v.push_back(f[size_t(((int64_t(o[0] + a) * frame.w) + o[1] + b2) * fd + oz + c)]);
                }
                return v;
            };
            const auto images = cut(fimg, s.image), templs = cut(ftpl, s.templ);
            flcc_batch b;
            flcc_batch_init(&b);
            b.images = n;
            b.templates = n;
            b.image_type = type;
            b.templ_type = type;
            b.image_origins = origins.data();
            b.image_frame = frame;
            b.templ_origins = origins.data();
            b.templ_frame = frame;
            b.keep_maps = 1;
            flcc_options o = host_options();
            o.region = s.region;
            const BatchRun r = run_batch(FLCC_LCORR, s, b, o, img_in, tpl_in);
            INFO("dim " << dim << " type " << type << ": " << flcc_last_error_detail());
            REQUIRE(r.created == FLCC_SUCCESS);
            REQUIRE(r.executed == FLCC_SUCCESS);
            check_maps(FLCC_LCORR, s, {FLCC_PAIRWISE, n, n, n}, images, templs, r.maps.data(),
                       r.peaks.data(), b.peaks);
        }
    }
}

TEST_CASE("preprocessing matches its formulas", "[batch]")
{
    // Zero mean and Hann leave the subregions' borders ~0: FULL windows holding only them have a
    // tiny, resolvable variance next to the padding's zeros. Many draws, by the planner's solver
    // and by the one-box solver (centring the tiles of such windows lost them to the guard on
    // several of these draws).
    for (unsigned seed = 1; seed <= 30; ++seed)
        for (const char* method : {static_cast<const char*>(nullptr), "host.fourier2.linear"}) {
            std::mt19937 rng(seed);
            const ref::Shape s{2, {24, 20, 1}, {24, 20, 1}, FLCC_FULL};
            const int h = 24, w = 20, n = h * w;
            std::vector<float> img(size_t(2 * n)), tpl(size_t(2 * n));
            std::uniform_real_distribution<float> u(100, 200);
            for (auto& v : img) v = u(rng);
            for (auto& v : tpl) v = u(rng);
            for (int bandpass : {0, 1}) {
                // zero mean, then the Hann window (numpy.hanning per axis), in double.
                const auto hann = [](int i, int m) {
                    return 0.5 - 0.5 * std::cos(2 * M_PI * i / (m - 1));
                };
                auto prep = [&](const std::vector<float>& in) {
                    std::vector<float> out(in.size());
                    for (int a = 0; a < 2; ++a) {
                        double mean = 0;
                        for (int i = 0; i < n; ++i) mean += in[size_t(a * n + i)];
                        mean /= n;
                        for (int r = 0; r < h; ++r)
                            for (int c = 0; c < w; ++c)
                                out[size_t(a * n + r * w + c)] =
                                    float((in[size_t(a * n + r * w + c)] - mean) * hann(r, h) *
                                          hann(c, w));
                    }
                    if (bandpass) {   // the band-pass itself is checked against a DFT in
                                      // test_preprocess
                        flcc::host::PreprocessSpec spec;
                        spec.bandpass_low = 1.5;
                        spec.bandpass_high = 6;
                        flcc::host::Preprocessor p({1, h, w}, spec);
                        flcc::host::Preprocessor::Scratch scratch(p);
                        for (int a = 0; a < 2; ++a) p.apply(out.data() + a * n, scratch);
                    }
                    return out;
                };
                const auto images = prep(img), templs = prep(tpl);
                flcc_batch b;
                flcc_batch_init(&b);
                b.images = 2;
                b.templates = 2;
                b.zero_mean = 1;
                b.hann = 1;
                if (bandpass) {
                    b.bandpass_low = 1.5f;
                    b.bandpass_high = 6;
                }
                b.keep_maps = 1;
                for (flcc_op op : {FLCC_XCORR, FLCC_LCORR}) {
                    const BatchRun r =
                        run_batch(op, s, b, host_options(method), img.data(), tpl.data());
                    REQUIRE(r.created == FLCC_SUCCESS);
                    REQUIRE(r.executed == FLCC_SUCCESS);
                    INFO("seed " << seed << " " << r.method << " bandpass " << bandpass);
                    check_maps(op, s, {FLCC_PAIRWISE, 2, 2, 2}, images, templs, r.maps.data(),
                               r.peaks.data(), b.peaks);
                }
            }
        }
}

TEST_CASE("best over templates keeps the best value and its template", "[batch]")
{
    std::mt19937 rng(3);
    const ref::Shape s{2, {30, 26, 1}, {7, 6, 1}, FLCC_VALID};
    const int images = 2, templates = 4;
    const std::vector<float> im = stack(s, true, images, rng);
    const std::vector<float> tp = stack(s, false, templates, rng);
    flcc_batch b;
    flcc_batch_init(&b);
    b.pairing = FLCC_ALL_PAIRS;
    b.images = images;
    b.templates = templates;
    b.best_over_templates = 1;
    b.keep_maps = 1;
    b.peaks = 3;
    flcc_options o = host_options();
    o.region = s.region;
    const BatchRun r = run_batch(FLCC_LCORR, s, b, o, im.data(), tp.data());
    REQUIRE(r.created == FLCC_SUCCESS);
    REQUIRE(r.executed == FLCC_SUCCESS);
    const int64_t on = ref::out_elems(s), in = ref::image_elems(s), tn = ref::templ_elems(s);
    for (int i = 0; i < images; ++i) {
        std::vector<std::vector<double>> refs;
        for (int t = 0; t < templates; ++t)
            refs.push_back(th::reference(FLCC_LCORR, s, im.data() + i * in, tp.data() + t * tn));
        const float* best = r.maps.data() + i * 2 * on;
        const float* index = best + on;
        for (int64_t q = 0; q < on; ++q) {
            double top = -2;
            for (int t = 0; t < templates; ++t) top = std::max(top, refs[size_t(t)][size_t(q)]);
            CHECK(std::fabs(best[q] - top) <= kTol);
            const int t = int(index[q]);
            REQUIRE(t >= 0);
            REQUIRE(t < templates);
            CHECK(std::fabs(refs[size_t(t)][size_t(q)] - top) <= 2 * kTol);
        }
        const flcc_peak& pk = r.peaks[size_t(i * b.peaks)];
        CHECK(pk.templ == int(index[pk.h * ref::out_extent(s)[2] + pk.w]));
        CHECK(pk.value == *std::max_element(best, best + on));
    }
}

TEST_CASE("template sets are prepared once, and again when they change", "[batch]")
{
    std::mt19937 rng(9);
    const ref::Shape s{2, {20, 20, 1}, {6, 6, 1}, FLCC_FULL};
    std::vector<float> im = ref::make_data(ref::Data::uniform, s, true, rng);
    std::vector<float> t1 = ref::make_data(ref::Data::uniform, s, false, rng);
    std::vector<float> t2 = ref::make_data(ref::Data::uniform, s, false, rng);
    flcc_batch b;
    flcc_batch_init(&b);
    b.keep_maps = 1;
    flcc_plan plan = nullptr;
    flcc_options o = host_options();
    REQUIRE(flcc_batch_plan_create(&plan, FLCC_LCORR, 2, s.image, s.templ, &b, &o) == FLCC_SUCCESS);
    std::vector<float> maps(size_t(2 * ref::out_elems(s)));
    flcc_peak peaks[2];
    CHECK(flcc_batch_exec(plan, im.data(), nullptr, maps.data(), peaks, 1) == FLCC_NULL_POINTER);
    REQUIRE(flcc_batch_exec(plan, im.data(), t1.data(), maps.data(), peaks, 1) == FLCC_SUCCESS);
    const auto r1 = th::reference(FLCC_LCORR, s, im.data(), t1.data());
    CHECK(th::error(FLCC_LCORR, r1, maps.data()) <= kTol);
    // NULL: the prepared set again, for every frame of the call.
    std::vector<float> two = im;
    two.insert(two.end(), im.begin(), im.end());
    REQUIRE(flcc_batch_exec(plan, two.data(), nullptr, maps.data(), peaks, 2) == FLCC_SUCCESS);
    CHECK(th::error(FLCC_LCORR, r1, maps.data()) <= kTol);
    CHECK(th::error(FLCC_LCORR, r1, maps.data() + ref::out_elems(s)) <= kTol);
    // The same buffer with new values is noticed.
    std::vector<float> t = t1;
    REQUIRE(flcc_batch_exec(plan, im.data(), t.data(), maps.data(), peaks, 1) == FLCC_SUCCESS);
    t = t2;
    REQUIRE(flcc_batch_exec(plan, im.data(), t.data(), maps.data(), peaks, 1) == FLCC_SUCCESS);
    CHECK(th::error(FLCC_LCORR, th::reference(FLCC_LCORR, s, im.data(), t2.data()), maps.data()) <= kTol);
    flcc_destroy(plan);

    // One template set per frame.
    b.templ_per_frame = 1;
    REQUIRE(flcc_batch_plan_create(&plan, FLCC_LCORR, 2, s.image, s.templ, &b, &o) == FLCC_SUCCESS);
    std::vector<float> sets = t1;
    sets.insert(sets.end(), t2.begin(), t2.end());
    REQUIRE(flcc_batch_exec(plan, two.data(), sets.data(), maps.data(), peaks, 2) == FLCC_SUCCESS);
    CHECK(th::error(FLCC_LCORR, r1, maps.data()) <= kTol);
    CHECK(th::error(FLCC_LCORR, th::reference(FLCC_LCORR, s, im.data(), t2.data()),
                    maps.data() + ref::out_elems(s)) <= kTol);
    flcc_destroy(plan);
}

TEST_CASE("flat maps give quality 0 at zero displacement", "[batch]")
{
    const ref::Shape s{2, {16, 16, 1}, {16, 16, 1}, FLCC_FULL};
    std::vector<float> flat(256, 7.f), noise(256);
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> u(0, 1);
    for (auto& v : noise) v = u(rng);
    for (auto refine : {FLCC_REFINE_PARABOLIC, FLCC_REFINE_QUADRATIC, FLCC_REFINE_UPSAMPLED}) {
        flcc_batch b;
        flcc_batch_init(&b);
        b.refine = refine;
        b.zero_mean = 1;   // a constant subregion is then zero, and so is every coefficient
        for (int which = 0; which < 2; ++which) {   // constant image, constant template
            const BatchRun r = run_batch(FLCC_LCORR, s, b, host_options(),
                                         which == 0 ? flat.data() : noise.data(),
                                         which == 0 ? noise.data() : flat.data());
            REQUIRE(r.executed == FLCC_SUCCESS);
            const flcc_peak& p = r.peaks[0];
            CHECK(p.value == 0.f);
            CHECK(p.quality == 0.f);
            CHECK(p.psr == 0.f);
            CHECK(p.h == 15);
            CHECK(p.w == 15);
            CHECK(p.dy == 0.f);
            CHECK(p.dx == 0.f);
        }
    }
}

namespace {

// Band-limited pattern: a sum of plane waves with wavelengths of 5 to 40 pixels, evaluated
// exactly at any shift, so that a frame moved by (dy, dx) is the pattern at (y - dy, x - dx).
struct Pattern {
    struct Wave {
        double ky, kx, phase, amp;
    };
    std::vector<Wave> waves;
    explicit Pattern(std::mt19937& rng)
    {
        std::uniform_real_distribution<double> angle(0, 2 * M_PI), len(5, 40), amp(0.5, 1);
        for (int i = 0; i < 60; ++i) {
            const double a = angle(rng), k = 2 * M_PI / len(rng);
            waves.push_back({k * std::sin(a), k * std::cos(a), angle(rng), amp(rng)});
        }
    }
    // Photon counts around 1000 with Poisson noise.
    std::vector<float> render(int h, int w, double dy, double dx, std::mt19937& rng) const
    {
        std::vector<float> v(size_t(h) * w);
        double norm = 0;
        for (const Wave& wv : waves) norm += wv.amp;
        for (int r = 0; r < h; ++r)
            for (int c = 0; c < w; ++c) {
                double s = 0;
                for (const Wave& wv : waves)
                    s += wv.amp * std::cos(wv.ky * (r - dy) + wv.kx * (c - dx) + wv.phase);
                std::poisson_distribution<int> photons(1000.0 * (1.0 + 1.5 * s / norm));
                v[size_t(r) * w + c] = float(photons(rng));
            }
        return v;
    }
};

// The parabolic vertex offset of three values, in double (the reference fit).
double vertex(double a, double b, double c)
{
    const double den = a - 2 * b + c;
    return den >= 0 ? 0.0 : 0.5 * (a - c) / den;
}

}  // namespace

TEST_CASE("sub-pixel offsets of shifted patterns with Poisson noise", "[batch][accuracy]")
{
    // The search form: the centre 64 x 64 of each reference subregion searched in the frame's
    // 128 x 128 subregion (VALID region): the template's origin lies at 32 + shift.
    std::mt19937 rng(2026);
    const int pairs = 24, size = 128, t = 64, off = (size - t) / 2;
    std::uniform_real_distribution<double> shift(-8, 8);
    std::vector<float> images, templs;
    std::vector<double> truth;
    for (int p = 0; p < pairs; ++p) {
        const Pattern pat(rng);
        const double dy = shift(rng), dx = shift(rng);
        const auto ref_sub = pat.render(size, size, 0, 0, rng);
        const auto moved = pat.render(size, size, dy, dx, rng);
        images.insert(images.end(), moved.begin(), moved.end());
        for (int r = 0; r < t; ++r)
            templs.insert(templs.end(), ref_sub.begin() + (off + r) * size + off,
                          ref_sub.begin() + (off + r) * size + off + t);
        truth.push_back(dy);
        truth.push_back(dx);
    }
    const ref::Shape s{2, {size, size, 1}, {t, t, 1}, FLCC_VALID};
    for (auto refine : {FLCC_REFINE_QUADRATIC, FLCC_REFINE_UPSAMPLED, FLCC_REFINE_PARABOLIC}) {
        flcc_batch b;
        flcc_batch_init(&b);
        b.images = pairs;
        b.templates = pairs;
        b.refine = refine;
        b.keep_maps = refine == FLCC_REFINE_PARABOLIC;
        flcc_options o = host_options();
        o.region = FLCC_VALID;
        const BatchRun r = run_batch(FLCC_LCORR, s, b, o, images.data(), templs.data());
        REQUIRE(r.executed == FLCC_SUCCESS);
        double sum2 = 0;
        for (int p = 0; p < pairs; ++p) {
            const double ey = r.peaks[size_t(p)].dy - off - truth[size_t(2 * p)];
            const double ex = r.peaks[size_t(p)].dx - off - truth[size_t(2 * p + 1)];
            sum2 += ey * ey + ex * ex;
        }
        const double rms = std::sqrt(sum2 / (2 * pairs));   // per component
        INFO("refine " << refine << ": RMS error " << rms << " px");
        if (refine != FLCC_REFINE_PARABOLIC) CHECK(rms <= 0.03);
        if (refine != FLCC_REFINE_PARABOLIC) continue;
        // The three-point fit agrees with the same fit on the float64 reference map.
        const int64_t w = size - t + 1;
        for (int p = 0; p < pairs; ++p) {
            const auto m = th::reference(FLCC_LCORR, s, images.data() + p * size * size,
                                         templs.data() + p * t * t);
            const int64_t at = std::max_element(m.begin(), m.end()) - m.begin();
            const int64_t i = at / w, j = at % w;
            REQUIRE(i > 0);
            REQUIRE(j > 0);
            REQUIRE(i < w - 1);
            REQUIRE(j < w - 1);
            const double y = i + vertex(m[size_t(at - w)], m[size_t(at)], m[size_t(at + w)]);
            const double x = j + vertex(m[size_t(at - 1)], m[size_t(at)], m[size_t(at + 1)]);
            CHECK(std::fabs(r.peaks[size_t(p)].y - y) <= 0.01);
            CHECK(std::fabs(r.peaks[size_t(p)].x - x) <= 0.01);
        }
    }
}

TEST_CASE("batch plans reject bad arguments with specific codes", "[batch]")
{
    const flcc_size im{32, 32, 1}, tp{8, 8, 1};
    flcc_options o = host_options();
    flcc_plan plan = nullptr;
    const auto create = [&](const flcc_batch& b) {
        return flcc_batch_plan_create(&plan, FLCC_LCORR, 2, im, tp, &b, &o);
    };
    flcc_batch b;
    flcc_batch_init(&b);
    CHECK(flcc_batch_plan_create(&plan, FLCC_LCORR, 2, im, tp, nullptr, &o) == FLCC_NULL_POINTER);
    CHECK(flcc_batch_plan_create(nullptr, FLCC_LCORR, 2, im, tp, &b, &o) == FLCC_NULL_POINTER);
    CHECK(flcc_batch_plan_create(&plan, FLCC_LCORR, 4, im, tp, &b, &o) == FLCC_INVALID_DIMENSION);
    b.images = 2;
    b.templates = 3;
    CHECK(create(b) == FLCC_INVALID_VALUE);   // PAIRWISE 2 with 3
    b.pairing = static_cast<flcc_pairing>(5);
    CHECK(create(b) == FLCC_INVALID_VALUE);
    flcc_batch_init(&b);
    b.image_type = static_cast<flcc_dtype>(9);
    CHECK(create(b) == FLCC_INVALID_VALUE);
    flcc_batch_init(&b);
    const int outside[] = {0, 0, 100, 95};   // the second subregion leaves the frame
    b.images = 2;
    b.templates = 2;
    b.image_origins = outside;
    b.image_frame = {128, 100, 1};
    CHECK(create(b) == FLCC_INVALID_SIZE);
    CHECK(std::string(flcc_last_error_detail()).find("origin 1") != std::string::npos);
    const int negative[] = {0, 0, -1, 0};
    b.image_origins = negative;
    CHECK(create(b) == FLCC_INVALID_SIZE);
    flcc_batch_init(&b);
    b.best_over_templates = 1;   // PAIRWISE
    CHECK(create(b) == FLCC_INVALID_VALUE);
    flcc_batch_init(&b);
    b.peaks = 0;   // nothing to output
    CHECK(create(b) == FLCC_INVALID_VALUE);
    flcc_batch_init(&b);
    b.fit_size = 4;
    CHECK(create(b) == FLCC_INVALID_VALUE);
    flcc_batch_init(&b);
    b.upsample = 1;
    CHECK(create(b) == FLCC_INVALID_VALUE);
    flcc_batch_init(&b);
    b.bandpass_low = std::numeric_limits<float>::quiet_NaN();
    CHECK(create(b) == FLCC_INVALID_VALUE);
    flcc_batch_init(&b);
    b.refine = static_cast<flcc_refine>(8);
    CHECK(create(b) == FLCC_INVALID_VALUE);
    flcc_batch_init(&b);
    for (const char* engine : {"device.batch.fourier", "device.batch.direct", "device.batch.blockfft"}) {   // GPU engines, on HOST
        o.method = engine;
        CHECK(create(b) == FLCC_METHOD_NOT_APPLICABLE);
        CHECK(plan == nullptr);
    }
    o = host_options("no.such.solver");
    CHECK(create(b) == FLCC_UNKNOWN_METHOD);

    // Execs.
    o = host_options();
    REQUIRE(create(b) == FLCC_SUCCESS);
    std::vector<float> image(32 * 32, 1.f), templ(64, 2.f), out(39 * 39);
    templ[5] = 3;
    flcc_peak peak;
    CHECK(flcc_lcorr_exec(plan, image.data(), templ.data(), out.data(), 1) == FLCC_OPERATION_MISMATCH);
    CHECK(flcc_batch_exec(plan, nullptr, templ.data(), nullptr, &peak, 1) == FLCC_NULL_POINTER);
    CHECK(flcc_batch_exec(plan, image.data(), templ.data(), nullptr, nullptr, 1) == FLCC_NULL_POINTER);
    CHECK(flcc_batch_exec(plan, image.data(), templ.data(), out.data(), &peak, 1) == FLCC_INVALID_VALUE);
    CHECK(flcc_batch_exec(plan, image.data(), templ.data(), nullptr, &peak, 0) == FLCC_INVALID_VALUE);
    image[17] = std::numeric_limits<float>::quiet_NaN();
    CHECK(flcc_batch_exec(plan, image.data(), templ.data(), nullptr, &peak, 1) == FLCC_NONFINITE_INPUT);
    image[17] = 1;
    templ[3] = std::numeric_limits<float>::infinity();
    CHECK(flcc_batch_exec(plan, image.data(), templ.data(), nullptr, &peak, 1) == FLCC_NONFINITE_INPUT);
    templ[3] = 2;
    CHECK(flcc_batch_exec(plan, image.data(), templ.data(), nullptr, &peak, 1) == FLCC_SUCCESS);
    int pairs = 0;
    CHECK(flcc_batch_pairs(plan, &pairs) == FLCC_SUCCESS);
    CHECK(pairs == 1);
    CHECK(flcc_batch_pairs(plan, nullptr) == FLCC_NULL_POINTER);
    CHECK(flcc_destroy(plan) == FLCC_SUCCESS);
    CHECK(flcc_batch_exec(plan, image.data(), templ.data(), nullptr, &peak, 1) == FLCC_INVALID_PLAN);

    // A plan that is not a batch plan.
    REQUIRE(flcc_plan_create(&plan, FLCC_LCORR, 2, im, tp, &o) == FLCC_SUCCESS);
    CHECK(flcc_batch_exec(plan, image.data(), templ.data(), nullptr, &peak, 1) == FLCC_OPERATION_MISMATCH);
    CHECK(flcc_batch_pairs(plan, &pairs) == FLCC_OPERATION_MISMATCH);
    flcc_destroy(plan);
}

TEST_CASE("the GPU's single-box lengths leave no lag wrapping and no 5^2", "[batch][geometry]")
{
    // The box rule of the GPU batch engine and device.fourier2.box, by brute force: the template
    // fits the box, and no output's tap, wrapped around the box, lands on an image element.
    for (int64_t s = 1; s <= 40; ++s)
        for (int64_t t = 1; t <= 90; ++t)
            for (flcc_region region : {FLCC_FULL, FLCC_SAME, FLCC_VALID}) {
                if (region == FLCC_VALID && t > s) continue;
                const flcc::geometry::AxisRegion r = flcc::geometry::axis_region(region, s, t);
                const int64_t L = flcc::geometry::correlation_box_size(s, t, r.pad);
                INFO("s " << s << " t " << t << " region " << int(region) << " L " << L);
                REQUIRE(L >= t);   // the template fits its box
                CHECK(L % 25 != 0);
                bool wraps = false;
                for (int64_t o = 0; o < r.out; ++o)
                    for (int64_t i = 0; i < t; ++i) {
                        const int64_t lin = o - r.pad + i, circ = ((lin % L) + L) % L;
                        if (circ != lin && circ < s) wraps = true;   // a wrapped tap meets the image
                    }
                CHECK_FALSE(wraps);
            }
    for (int64_t n = 1; n <= 2000; ++n) {
        const int64_t m = flcc::geometry::gpu_fft_size(n);
        CHECK(m >= n);
        CHECK(m % 25 != 0);
        CHECK(m >= flcc::geometry::fast_fft_size(n));
    }
}
