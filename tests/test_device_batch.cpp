// Batch plans on the GPU (flcc.h, "Batched correlation and peaks"; the engines
// device.batch.fourier, device.batch.direct and device.batch.blockfft, each forced by name): maps
// against the float64 reference in every operation, region and pairing, subregions of every
// element type with preprocessing, peaks and their refinements against the host runner's (maps
// searched by blocks and by warps), best over templates,
// flat maps, non-finite input, template reuse, several frames per call and device pointers, and
// the choice among the host runner and the engines (DEVICE, ANY). Without a usable GPU every
// case but the first and the ANY case says so and is skipped (the ANY case then checks that the
// host runner stays).
#include "batch_helpers.h"
#include "device_test_support.h"
#include "helpers.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace bt;
using dt::DeviceArray;
using dt::skip_without_gpu;

namespace {

const char* const kFourier = "device.batch.fourier";
const char* const kDirect = "device.batch.direct";
const char* const kBlock = "device.batch.blockfft";
const char* const kEngines[] = {kFourier, kDirect, kBlock};

// DEVICE, with `engine` forced by name (NULL: the plan's choice).
flcc_options device_options(flcc_region region = FLCC_FULL, const char* engine = nullptr)
{
    flcc_options o;
    flcc_options_init(&o);
    o.platform = FLCC_DEVICE;
    o.region = region;
    o.method = engine;
    return o;
}

bool is_engine(const std::string& method) { return method == kFourier || method == kDirect || method == kBlock; }

// device.batch.blockfft applies where a pair's linear correlation fits its 64 x 64 box: per axis
// the image and the region's padding (SAME: taken as T / 2, at least what it is), and the
// template.
bool fits_block(const ref::Shape& s)
{
    const auto fits = [&](int S, int T) {
        const int pad = s.region == FLCC_FULL ? T - 1 : s.region == FLCC_SAME ? T / 2 : 0;
        return std::max(S + pad, T) <= 64;
    };
    return fits(s.image.h, s.templ.h) && fits(s.image.w, s.templ.w);
}

// Smooth random patterns (sums of a few waves): maps with one clear peak, well away from ties.
std::vector<float> smooth_stack(int h, int w, int count, std::mt19937& rng)
{
    std::uniform_real_distribution<double> k(0.05, 0.4), phase(0, 6.283);
    std::vector<float> v;
    for (int i = 0; i < count; ++i) {
        double ky[4], kx[4], ph[4];
        for (int j = 0; j < 4; ++j) ky[j] = k(rng), kx[j] = k(rng), ph[j] = phase(rng);
        for (int r = 0; r < h; ++r)
            for (int c = 0; c < w; ++c) {
                double s = 1000;
                for (int j = 0; j < 4; ++j) s += 100 * std::cos(ky[j] * r + kx[j] * c + ph[j]);
                v.push_back(float(s));
            }
    }
    return v;
}

}  // namespace

TEST_CASE("without a GPU, DEVICE batch plans fail with FLCC_NO_DEVICE", "[device][batch]")
{
    if (th::have_device()) return;
    flcc_batch b;
    flcc_batch_init(&b);
    flcc_options o = device_options();
    flcc_plan plan = nullptr;
    CHECK(flcc_batch_plan_create(&plan, FLCC_LCORR, 2, {16, 16, 1}, {4, 4, 1}, &b, &o) == FLCC_NO_DEVICE);
    CHECK(plan == nullptr);
    o.platform = FLCC_ANY;
    for (const char* engine : kEngines) {
        o.method = engine;
        CHECK(flcc_batch_plan_create(&plan, FLCC_LCORR, 2, {16, 16, 1}, {4, 4, 1}, &b, &o) == FLCC_NO_DEVICE);
    }
}

TEST_CASE("the GPU batch engines match the float64 reference, forced by name", "[device][batch]")
{
    if (skip_without_gpu()) return;
    std::mt19937 rng(17);
    const ref::Shape shapes[] = {
        {2, {19, 23, 1}, {5, 4, 1}, FLCC_FULL},   {2, {19, 23, 1}, {5, 4, 1}, FLCC_SAME},
        {2, {19, 23, 1}, {5, 4, 1}, FLCC_VALID},  {2, {32, 32, 1}, {32, 32, 1}, FLCC_FULL},
        {2, {64, 48, 1}, {16, 9, 1}, FLCC_VALID}, {2, {30, 31, 1}, {8, 7, 1}, FLCC_SAME},
        {2, {12, 400, 1}, {5, 7, 1}, FLCC_SAME},   // wider than the banded finalisation takes
        {2, {32, 32, 1}, {32, 32, 1}, FLCC_SAME},  {2, {9, 70, 1}, {13, 3, 1}, FLCC_FULL},
        {2, {6, 5, 1}, {11, 9, 1}, FLCC_FULL},     // templates larger than the images
        {2, {4, 5, 1}, {11, 13, 1}, FLCC_SAME},    // ... more than twice: the box holds the template
    };
    for (const char* engine : kEngines)
    for (const ref::Shape& s : shapes)
        for (flcc_op op : {FLCC_CONV, FLCC_LCORR, FLCC_XCORR})
            for (const Pairing pg : {Pairing{FLCC_ALL_PAIRS, 2, 3, 6}, Pairing{FLCC_PAIRWISE, 2, 6, 6},
                                     Pairing{FLCC_PAIRWISE, 3, 3, 3}}) {
                flcc_batch b = batch_keeping_maps(pg);
                b.peaks = 2;
                const std::vector<float> images = stack(s, true, b.images, rng);
                const std::vector<float> templs = stack(s, false, b.templates, rng);
                flcc_options o = device_options(s.region, engine);
                o.platform = FLCC_ANY;
                const BatchRun r = run_batch(op, s, b, o, images.data(), templs.data());
                INFO(engine << " " << op_name(op) << " " << th::describe(s) << " pairing " << pg.pairing << " "
                            << pg.images << "x" << pg.templates << ": " << flcc_last_error_detail());
                if ((engine == kDirect && op == FLCC_LCORR && s.image.w > 256) ||   // a thread per column
                    (engine == kBlock && !fits_block(s))) {
                    CHECK(r.created == FLCC_METHOD_NOT_APPLICABLE);
                    continue;
                }
                REQUIRE(r.created == FLCC_SUCCESS);
                REQUIRE(r.executed == FLCC_SUCCESS);
                CHECK(r.method == engine);
                CHECK(r.pairs == pg.pairs);
                check_maps(op, s, pg, images, templs, r.maps.data(), r.peaks.data(), b.peaks);
            }
}

TEST_CASE("GPU batch engines with a template set per frame, in every operation", "[device][batch]")
{
    // Templates new with every frame (PIV's form) take their own path in each engine (prepared
    // and transformed with each launch's frames); then an exec without templates correlates
    // with the last frame's set.
    if (skip_without_gpu()) return;
    std::mt19937 rng(19);
    const Pairing pg{FLCC_PAIRWISE, 2, 2, 2};
    const int frames = 3;
    for (const char* engine : kEngines)
    for (const ref::Shape& s : {ref::Shape{2, {19, 23, 1}, {5, 4, 1}, FLCC_FULL},
                                ref::Shape{2, {32, 30, 1}, {31, 27, 1}, FLCC_SAME},
                                ref::Shape{2, {40, 33, 1}, {13, 9, 1}, FLCC_VALID}})
        for (flcc_op op : {FLCC_CONV, FLCC_LCORR, FLCC_XCORR}) {
            INFO(engine << " " << op_name(op) << " " << th::describe(s));
            flcc_batch b = batch_keeping_maps(pg);
            b.templ_per_frame = 1;
            flcc_options o = device_options(s.region, engine);
            flcc_plan plan = nullptr;
            REQUIRE(flcc_batch_plan_create(&plan, op, 2, s.image, s.templ, &b, &o) == FLCC_SUCCESS);
            const std::vector<float> images = stack(s, true, frames * pg.images, rng);
            const std::vector<float> templs = stack(s, false, frames * pg.templates, rng);
            const int64_t in = ref::image_elems(s), tn = ref::templ_elems(s), on = ref::out_elems(s);
            std::vector<float> maps(size_t(frames * pg.pairs * on));
            std::vector<flcc_peak> peaks(size_t(frames * pg.pairs));
            REQUIRE(flcc_batch_exec(plan, images.data(), templs.data(), maps.data(), peaks.data(), frames) ==
                    FLCC_SUCCESS);
            for (int f = 0; f < frames; ++f) {
                INFO("frame " << f);
                const std::vector<float> fi(images.begin() + f * pg.images * in,
                                            images.begin() + (f + 1) * pg.images * in);
                const std::vector<float> ft(templs.begin() + f * pg.templates * tn,
                                            templs.begin() + (f + 1) * pg.templates * tn);
                check_maps(op, s, pg, fi, ft, maps.data() + f * pg.pairs * on, peaks.data() + f * pg.pairs, 1);
            }
            const std::vector<float> last(templs.end() - pg.templates * tn, templs.end());
            const std::vector<float> first(images.begin(), images.begin() + pg.images * in);
            REQUIRE(flcc_batch_exec(plan, first.data(), nullptr, maps.data(), peaks.data(), 1) == FLCC_SUCCESS);
            INFO("no templates: the last frame's set");
            check_maps(op, s, pg, first, last, maps.data(), peaks.data(), 1);
            flcc_destroy(plan);
        }
}

TEST_CASE("GPU batches cut subregions of every element type and preprocess them", "[device][batch]")
{
    if (skip_without_gpu()) return;
    std::mt19937 rng(23);
    std::uniform_int_distribution<int> value(0, 65535);
    const flcc_size frame{40, 50, 1};
    const std::vector<int> origins{0, 0, 10, 12, 24, 32, 5, 3};   // overlapping; one at the corner
    const int n = 4, fn = 40 * 50;
    for (const char* engine : kEngines)
    for (const ref::Shape& s : {ref::Shape{2, {16, 18, 1}, {16, 18, 1}, FLCC_FULL},
                                ref::Shape{2, {16, 18, 1}, {16, 18, 1}, FLCC_VALID}})
        for (int pre = 0; pre < 2; ++pre)
            for (flcc_dtype type : {FLCC_FLOAT32, FLCC_UINT16, FLCC_UINT8}) {
                std::vector<float> fimg(fn), ftpl(fn);
                for (auto& v : fimg) v = float(type == FLCC_UINT8 ? value(rng) % 256 : value(rng));
                for (auto& v : ftpl) v = float(type == FLCC_UINT8 ? value(rng) % 256 : value(rng));
                if (type == FLCC_FLOAT32)
                    for (auto& v : fimg) v = v / 1000.f - 20.f;
                std::vector<uint16_t> u16i(fimg.begin(), fimg.end()), u16t(ftpl.begin(), ftpl.end());
                std::vector<uint8_t> u8i(fimg.begin(), fimg.end()), u8t(ftpl.begin(), ftpl.end());
                const void* img_in = type == FLCC_FLOAT32  ? static_cast<const void*>(fimg.data())
                                     : type == FLCC_UINT16 ? static_cast<const void*>(u16i.data())
                                                           : static_cast<const void*>(u8i.data());
                const void* tpl_in = type == FLCC_FLOAT32  ? static_cast<const void*>(ftpl.data())
                                     : type == FLCC_UINT16 ? static_cast<const void*>(u16t.data())
                                                           : static_cast<const void*>(u8t.data());
                // The cut arrays, then zero mean and the Hann window in double (the formulas).
                const auto hann = [](int i, int m) { return 0.5 - 0.5 * std::cos(2 * M_PI * i / (m - 1)); };
                const auto cut = [&](const std::vector<float>& f, const flcc_size& e) {
                    std::vector<float> v;
                    for (int i = 0; i < n; ++i) {
                        const int* o = &origins[size_t(i * 2)];
                        std::vector<float> one;
                        for (int a = 0; a < e.h; ++a)
                            for (int c = 0; c < e.w; ++c) one.push_back(f[size_t((o[0] + a) * frame.w + o[1] + c)]);
                        if (pre) {
                            double mean = 0;
                            for (float x : one) mean += x;
                            mean /= double(one.size());
                            for (int a = 0; a < e.h; ++a)
                                for (int c = 0; c < e.w; ++c) {
                                    float& x = one[size_t(a * e.w + c)];
                                    x = float(double(x) - mean);
                                    x = float(double(x) * (hann(a, e.h) * hann(c, e.w)));
                                }
                        }
                        v.insert(v.end(), one.begin(), one.end());
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
                b.zero_mean = pre;
                b.hann = pre;
                b.keep_maps = 1;
                const BatchRun r = run_batch(FLCC_LCORR, s, b, device_options(s.region, engine), img_in, tpl_in);
                INFO(engine << " " << th::describe(s) << " type " << type << " preprocessed " << pre << ": "
                                     << flcc_last_error_detail());
                REQUIRE(r.created == FLCC_SUCCESS);
                REQUIRE(r.executed == FLCC_SUCCESS);
                check_maps(FLCC_LCORR, s, {FLCC_PAIRWISE, n, n, n}, images, templs, r.maps.data(),
                           r.peaks.data(), b.peaks);
            }
}

namespace {

// The peaks of every image against every template (ALL_PAIRS, VALID) in each refinement,
// operation and engine, against the host runner's. Template t is cut from image t % images at
// (r0 + t % 4, c0 + 2 (t % 4)) with a little noise: its maps peak inside, below 1 (no ties at
// the clamp). all_fits: the sub-pixel fits of every peak are compared, else only those of each
// map's first peak whose fit window lies inside the map: in small maps of unrelated pairs the
// peaks lie mostly at the edge, where the fits extrapolate from values that agree to their
// rounding only. lcc_px: the fits' tolerance in LCC maps (broad peaks move more under the maps'
// rounding).
void check_peaks_against_host(const ref::Shape& s, int images, int templates, int r0, int c0, bool all_fits,
                              double lcc_px, std::mt19937& rng)
{
    const int H = s.image.h, W = s.image.w, O1 = H - s.templ.h + 1, O2 = W - s.templ.w + 1;
    const std::vector<float> im = smooth_stack(H, W, images, rng);
    std::vector<float> tp;
    std::uniform_real_distribution<float> noise(-20, 20);
    for (int t = 0; t < templates; ++t)
        for (int r = 0; r < s.templ.h; ++r)
            for (int c = 0; c < s.templ.w; ++c)
                tp.push_back(im[size_t(((t % images) * H + r0 + t % 4 + r) * W + c0 + 2 * (t % 4) + c)] + noise(rng));
    struct Mode {
        flcc_refine refine;
        int fit;
        int best;
    };
    for (const Mode m : {Mode{FLCC_REFINE_NONE, 5, 0}, Mode{FLCC_REFINE_PARABOLIC, 5, 0},
                         Mode{FLCC_REFINE_GAUSSIAN, 5, 0}, Mode{FLCC_REFINE_QUADRATIC, 3, 0},
                         Mode{FLCC_REFINE_QUADRATIC, 5, 0}, Mode{FLCC_REFINE_QUADRATIC, 7, 1},
                         Mode{FLCC_REFINE_PARABOLIC, 5, 1}})
        for (flcc_op op : {FLCC_LCORR, FLCC_XCORR})
        for (const char* engine : kEngines) {
            flcc_batch b;
            flcc_batch_init(&b);
            b.pairing = FLCC_ALL_PAIRS;
            b.images = images;
            b.templates = templates;
            b.peaks = 3;
            b.exclusion = 3;
            b.refine = m.refine;
            b.fit_size = m.fit;
            b.best_over_templates = m.best;
            b.zero_mean = 1;   // sharp peaks: the fits are well conditioned for XCORR too
            b.keep_maps = 1;
            flcc_options ho = host_options();
            ho.region = s.region;
            const BatchRun h = run_batch(op, s, b, ho, im.data(), tp.data());
            const BatchRun d = run_batch(op, s, b, device_options(s.region, engine), im.data(), tp.data());
            INFO(engine << " " << op_name(op) << " refine " << m.refine << " fit " << m.fit << " best " << m.best << ": "
                             << flcc_last_error_detail());
            REQUIRE(h.executed == FLCC_SUCCESS);
            REQUIRE(d.executed == FLCC_SUCCESS);
            REQUIRE(h.peaks.size() == d.peaks.size());
            double scale = 1;
            for (float v : h.maps) scale = std::max(scale, double(std::fabs(v)));
            for (size_t i = 0; i < h.maps.size(); ++i) CHECK(std::fabs(h.maps[i] - d.maps[i]) <= 1e-5 * scale);
            for (size_t i = 0; i < h.peaks.size(); ++i) {
                const flcc_peak &x = h.peaks[i], &y = d.peaks[i];
                INFO("peak " << i << ": host (" << x.h << ", " << x.w << ") " << x.value << ", GPU (" << y.h
                             << ", " << y.w << ") " << y.value);
                CHECK(std::fabs(x.value - y.value) <= 1e-5 * scale);
                // Near-ties (a later peak on the first one's shoulder, or two maxima of a map
                // that matches no template) may fall either way: the GPU's pick is right when the
                // host's map holds the same value there.
                if (x.h < 0) {   // fewer candidates than peaks: none there either
                    CHECK(y.h < 0);
                    continue;
                }
                if (x.h != y.h || x.w != y.w) {
                    const size_t map = i / size_t(b.peaks) * size_t(O1 * O2) * (b.best_over_templates ? 2 : 1);
                    REQUIRE(y.h >= 0);
                    REQUIRE(y.w >= 0);
                    CHECK(std::fabs(h.maps[map + size_t(y.h * O2 + y.w)] - x.value) <= 1e-5 * scale);
                    continue;
                }
                // XCORR's maps agree to their float rounding relative to the peak, which moves a
                // fit at the map's edge (extrapolated) by up to a few thousandths of a pixel.
                const double px = op == FLCC_LCORR ? lcc_px : 5e-3;
                const int f = m.fit / 2;
                const bool inside = x.h >= f && x.h < O1 - f && x.w >= f && x.w < O2 - f;
                if (all_fits || (i % size_t(b.peaks) == 0 && inside)) {
                    CHECK(std::fabs(x.y - y.y) <= px);
                    CHECK(std::fabs(x.x - y.x) <= px);
                    CHECK(std::fabs(x.dy - y.dy) <= px);
                    CHECK(std::fabs(x.dx - y.dx) <= px);
                }
                if (std::isinf(x.quality))   // no positive sidelobe
                    CHECK(y.quality == x.quality);
                else
                    CHECK(std::fabs(x.quality - y.quality) <= 1e-3 * std::fabs(x.quality));
                CHECK(std::fabs(x.psr - y.psr) <= 1e-3 * std::max(1.f, std::fabs(x.psr)));
                CHECK(x.templ == y.templ);
            }
        }
}

}  // namespace

TEST_CASE("GPU batch peaks and refinements agree with the host runner's", "[device][batch]")
{
    if (skip_without_gpu()) return;
    std::mt19937 rng(29);
    // A few maps of 25 x 21: each searched by a block.
    check_peaks_against_host({2, {48, 40, 1}, {24, 20, 1}, FLCC_VALID}, 3, 4, 7, 5, true, 1e-3, rng);
    // 2,048 maps of 13 x 9, more than kPeakWarps (8) per multiprocessor on GPUs of up to 256:
    // each searched by a warp (the best-over-templates modes' 64 maps by blocks). 8 x 8 windows
    // of the smooth patterns peak broadly: a fit moves by up to a few thousandths of a pixel.
    check_peaks_against_host({2, {20, 16, 1}, {8, 8, 1}, FLCC_VALID}, 64, 32, 3, 1, false, 5e-3, rng);
}

TEST_CASE("GPU batches: flat maps, non-finite input, template sets, frames and device pointers",
          "[device][batch]")
{
    if (skip_without_gpu()) return;
    const ref::Shape s{2, {16, 16, 1}, {16, 16, 1}, FLCC_FULL};
    std::mt19937 rng(31);
    std::uniform_real_distribution<float> u(0, 1);
    std::vector<float> flat(256, 7.f), noise(256), noise2(256);
    for (auto& v : noise) v = u(rng);
    for (auto& v : noise2) v = u(rng);
    // A DEVICE plan of `engine` that keeps its maps (templ_per_frame: a template set per frame).
    const auto plan_keeping_maps = [&](const char* engine, int templ_per_frame) {
        flcc_batch b;
        flcc_batch_init(&b);
        b.keep_maps = 1;
        b.templ_per_frame = templ_per_frame;
        flcc_options o = device_options(FLCC_FULL, engine);
        flcc_plan plan = nullptr;
        REQUIRE(flcc_batch_plan_create(&plan, FLCC_LCORR, 2, s.image, s.templ, &b, &o) == FLCC_SUCCESS);
        return plan;
    };

    SECTION("a flat map's peak: value 0, quality 0, zero displacement")
    for (const char* engine : kEngines)
    for (auto refine : {FLCC_REFINE_PARABOLIC, FLCC_REFINE_QUADRATIC})
        for (int which = 0; which < 2; ++which) {
            flcc_batch b;
            flcc_batch_init(&b);
            b.refine = refine;
            b.zero_mean = 1;
            const BatchRun r = run_batch(FLCC_LCORR, s, b, device_options(FLCC_FULL, engine), which == 0 ? flat.data() : noise.data(),
                                         which == 0 ? noise.data() : flat.data());
            INFO(engine);
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

    SECTION("non-finite images and templates, and the plan after them")
    {
        for (const char* engine : kEngines) {
            INFO(engine);
            flcc_plan plan = plan_keeping_maps(engine, 0);
            std::vector<float> maps(size_t(ref::out_elems(s)));
            flcc_peak peak;
            std::vector<float> bad = noise;
            bad[40] = std::numeric_limits<float>::infinity();
            CHECK(flcc_batch_exec(plan, noise.data(), bad.data(), maps.data(), &peak, 1) == FLCC_NONFINITE_INPUT);
            CHECK(flcc_batch_exec(plan, bad.data(), noise.data(), maps.data(), &peak, 1) == FLCC_NONFINITE_INPUT);
            REQUIRE(flcc_batch_exec(plan, noise2.data(), noise.data(), maps.data(), &peak, 1) == FLCC_SUCCESS);
            CHECK(th::error(FLCC_LCORR, th::reference(FLCC_LCORR, s, noise2.data(), noise.data()), maps.data()) <= kTol);
            flcc_destroy(plan);
        }
    }

    SECTION("template sets: reuse, change by value, one per frame; frames; device pointers")
    {
        for (const char* engine : kEngines) {
            INFO(engine);
            flcc_plan plan = plan_keeping_maps(engine, 0);
            const int64_t on = ref::out_elems(s);
            std::vector<float> maps(size_t(3 * on));
            flcc_peak peaks[3];
            const auto r12 = th::reference(FLCC_LCORR, s, noise.data(), noise2.data());
            const auto r21 = th::reference(FLCC_LCORR, s, noise2.data(), noise.data());
            CHECK(flcc_batch_exec(plan, noise.data(), nullptr, maps.data(), peaks, 1) == FLCC_NULL_POINTER);
            std::vector<float> t = noise2;
            REQUIRE(flcc_batch_exec(plan, noise.data(), t.data(), maps.data(), peaks, 1) == FLCC_SUCCESS);
            CHECK(th::error(FLCC_LCORR, r12, maps.data()) <= kTol);
            // Three frames against the prepared set.
            std::vector<float> three = noise;
            three.insert(three.end(), noise2.begin(), noise2.end());
            three.insert(three.end(), noise.begin(), noise.end());
            REQUIRE(flcc_batch_exec(plan, three.data(), nullptr, maps.data(), peaks, 3) == FLCC_SUCCESS);
            CHECK(th::error(FLCC_LCORR, r12, maps.data()) <= kTol);
            CHECK(th::error(FLCC_LCORR, th::reference(FLCC_LCORR, s, noise2.data(), noise2.data()),
                            maps.data() + on) <= kTol);
            CHECK(th::error(FLCC_LCORR, r12, maps.data() + 2 * on) <= kTol);
            // The same buffer with new values is noticed.
            std::copy(noise.begin(), noise.end(), t.begin());
            REQUIRE(flcc_batch_exec(plan, noise2.data(), t.data(), maps.data(), peaks, 1) == FLCC_SUCCESS);
            CHECK(th::error(FLCC_LCORR, r21, maps.data()) <= kTol);
            // Device memory for every array.
            const std::vector<float> host_maps(maps.begin(), maps.begin() + on);
            const flcc_peak host_peak = peaks[0];
            DeviceArray<float> di(noise2), dt_(noise), dm{size_t(on)};
            DeviceArray<flcc_peak> dp{size_t(1)};
            REQUIRE(flcc_batch_exec(plan, di.p, dt_.p, dm.p, dp.p, 1) == FLCC_SUCCESS);
            const std::vector<float> got = dm.get();
            CHECK(got == host_maps);
            const flcc_peak gp = dp.get()[0];
            CHECK(gp.h == host_peak.h);
            CHECK(gp.w == host_peak.w);
            CHECK(gp.y == host_peak.y);
            CHECK(gp.x == host_peak.x);
            flcc_destroy(plan);

            // One set per frame.
            plan = plan_keeping_maps(engine, 1);
            std::vector<float> images = noise, sets = noise2;
            images.insert(images.end(), noise2.begin(), noise2.end());
            sets.insert(sets.end(), noise.begin(), noise.end());
            REQUIRE(flcc_batch_exec(plan, images.data(), sets.data(), maps.data(), peaks, 2) == FLCC_SUCCESS);
            CHECK(th::error(FLCC_LCORR, r12, maps.data()) <= kTol);
            CHECK(th::error(FLCC_LCORR, r21, maps.data() + on) <= kTol);
            // NULL: the set prepared last (frame 1's).
            REQUIRE(flcc_batch_exec(plan, noise2.data(), nullptr, maps.data(), peaks, 1) == FLCC_SUCCESS);
            CHECK(th::error(FLCC_LCORR, r21, maps.data()) <= kTol);
            flcc_destroy(plan);
        }
    }
}

TEST_CASE("ANY and DEVICE keep the fastest batch runner and forget the timing's templates",
          "[device][batch]")
{
    std::mt19937 rng(37);
    const ref::Shape s{2, {64, 64, 1}, {32, 32, 1}, FLCC_VALID};
    const int pairs = 12;
    const std::vector<float> im = smooth_stack(64, 64, pairs, rng);
    std::vector<float> tp;
    for (int t = 0; t < pairs; ++t)
        for (int r = 0; r < 32; ++r)
            for (int c = 0; c < 32; ++c) tp.push_back(im[size_t((t * 64 + 9 + r) * 64 + 13 + c)]);
    flcc_batch b;
    flcc_batch_init(&b);
    b.images = b.templates = pairs;
    flcc_options ho = host_options();
    ho.region = s.region;
    const BatchRun h = run_batch(FLCC_LCORR, s, b, ho, im.data(), tp.data());
    REQUIRE(h.executed == FLCC_SUCCESS);
    for (flcc_platform platform : {FLCC_ANY, FLCC_DEVICE})
    for (flcc_rigor rigor : {FLCC_MEASURE, FLCC_ESTIMATE}) {
        if (platform == FLCC_DEVICE && !th::have_device()) continue;
        flcc_options o = ho;
        o.platform = platform;
        o.rigor = rigor;
        flcc_plan plan = nullptr;
        REQUIRE(flcc_batch_plan_create(&plan, FLCC_LCORR, 2, s.image, s.templ, &b, &o) == FLCC_SUCCESS);
        const std::string method = flcc_plan_method(plan);
        INFO("platform " << platform << " rigor " << rigor << ": " << method);
        if (!th::have_device())   // no engine: the host runner, its pair solver planned
            CHECK(method.rfind("host.", 0) == 0);
        else if (rigor == FLCC_ESTIMATE || platform == FLCC_DEVICE)   // an engine (ESTIMATE: unmeasured)
            CHECK(is_engine(method));
        std::vector<flcc_peak> peaks(static_cast<size_t>(pairs));
        // The timing's synthetic templates are not the caller's.
        CHECK(flcc_batch_exec(plan, im.data(), nullptr, nullptr, peaks.data(), 1) == FLCC_NULL_POINTER);
        REQUIRE(flcc_batch_exec(plan, im.data(), tp.data(), nullptr, peaks.data(), 1) == FLCC_SUCCESS);
        for (int i = 0; i < pairs; ++i) {
            CHECK(peaks[size_t(i)].h == h.peaks[size_t(i)].h);
            CHECK(peaks[size_t(i)].w == h.peaks[size_t(i)].w);
            CHECK(std::fabs(peaks[size_t(i)].dy - h.peaks[size_t(i)].dy) <= 1e-3);
            CHECK(std::fabs(peaks[size_t(i)].dx - h.peaks[size_t(i)].dx) <= 1e-3);
        }
        flcc_destroy(plan);
    }
}

TEST_CASE("GPU batch plans refuse what runs on the host only", "[device][batch]")
{
    if (skip_without_gpu()) return;
    flcc_batch b;
    flcc_batch_init(&b);
    flcc_options o = device_options();
    flcc_plan plan = nullptr;
    CHECK(flcc_batch_plan_create(&plan, FLCC_LCORR, 3, {8, 8, 8}, {2, 2, 2}, &b, &o) == FLCC_METHOD_NOT_APPLICABLE);
    b.bandpass_low = 1;
    CHECK(flcc_batch_plan_create(&plan, FLCC_LCORR, 2, {16, 16, 1}, {4, 4, 1}, &b, &o) == FLCC_METHOD_NOT_APPLICABLE);
    flcc_batch_init(&b);
    b.refine = FLCC_REFINE_UPSAMPLED;
    CHECK(flcc_batch_plan_create(&plan, FLCC_LCORR, 2, {16, 16, 1}, {4, 4, 1}, &b, &o) == FLCC_METHOD_NOT_APPLICABLE);
    o.method = "host.direct";
    flcc_batch_init(&b);
    CHECK(flcc_batch_plan_create(&plan, FLCC_LCORR, 2, {16, 16, 1}, {4, 4, 1}, &b, &o) == FLCC_METHOD_NOT_APPLICABLE);
    CHECK(plan == nullptr);
    // The direct engine: a pair beyond one block's shared memory, LCC wider than a block's
    // threads; without a name, DEVICE takes the Fourier engine for them.
    o.method = kDirect;
    CHECK(flcc_batch_plan_create(&plan, FLCC_XCORR, 2, {256, 256, 1}, {200, 200, 1}, &b, &o) ==
          FLCC_METHOD_NOT_APPLICABLE);
    CHECK(std::string(flcc_last_error_detail()).find(kDirect) != std::string::npos);
    CHECK(flcc_batch_plan_create(&plan, FLCC_LCORR, 2, {8, 300, 1}, {3, 3, 1}, &b, &o) == FLCC_METHOD_NOT_APPLICABLE);
    CHECK(plan == nullptr);
    // The per-block transforms: a linear correlation beyond 64 per axis (FULL 40 + 30 - 1).
    o.method = kBlock;
    o.region = FLCC_FULL;
    CHECK(flcc_batch_plan_create(&plan, FLCC_LCORR, 2, {32, 40, 1}, {8, 31, 1}, &b, &o) ==
          FLCC_METHOD_NOT_APPLICABLE);
    CHECK(std::string(flcc_last_error_detail()).find(kBlock) != std::string::npos);
    REQUIRE(flcc_batch_plan_create(&plan, FLCC_LCORR, 2, {32, 33, 1}, {8, 32, 1}, &b, &o) == FLCC_SUCCESS);
    CHECK(std::string(flcc_plan_method(plan)) == kBlock);
    flcc_destroy(plan);
    plan = nullptr;
    o.method = nullptr;
    REQUIRE(flcc_batch_plan_create(&plan, FLCC_XCORR, 2, {256, 256, 1}, {200, 200, 1}, &b, &o) == FLCC_SUCCESS);
    CHECK(std::string(flcc_plan_method(plan)) == kFourier);
    flcc_destroy(plan);
    // FLCC_ESTIMATE: pairs that fit a 64 x 64 box take the per-block transforms, unless the direct
    // engine's products are at most 64 per element of that box (16 x 16 SAME with 8 x 8: 112^2
    // products; 32 x 32 SAME: 768^2); other pairs the direct engine at <= 512 products per
    // Fourier box element, else the Fourier engine (128 x 128 FULL: 128^4 and 256^2).
    o.rigor = FLCC_ESTIMATE;
    o.region = FLCC_SAME;
    REQUIRE(flcc_batch_plan_create(&plan, FLCC_LCORR, 2, {16, 16, 1}, {8, 8, 1}, &b, &o) == FLCC_SUCCESS);
    CHECK(std::string(flcc_plan_method(plan)) == kDirect);
    flcc_destroy(plan);
    REQUIRE(flcc_batch_plan_create(&plan, FLCC_LCORR, 2, {32, 32, 1}, {32, 32, 1}, &b, &o) == FLCC_SUCCESS);
    CHECK(std::string(flcc_plan_method(plan)) == kBlock);
    flcc_destroy(plan);
    o.region = FLCC_FULL;
    REQUIRE(flcc_batch_plan_create(&plan, FLCC_LCORR, 2, {128, 128, 1}, {128, 128, 1}, &b, &o) == FLCC_SUCCESS);
    CHECK(std::string(flcc_plan_method(plan)) == kFourier);
    flcc_destroy(plan);
}
