// Shared helpers of the batch plan tests (test_batch.cpp, test_device_batch.cpp): random stacks,
// one plan's run, and a frame's maps and first peaks against the float64 reference.
#pragma once

#include "helpers.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace bt {

inline constexpr double kTol = 1e-5;

inline const char* op_name(flcc_op op)
{
    return op == FLCC_CONV ? "conv" : op == FLCC_LCORR ? "lcorr" : "xcorr";
}

inline flcc_options host_options(const char* method = nullptr, int threads = 2)
{
    flcc_options o;
    flcc_options_init(&o);
    o.platform = FLCC_HOST;
    o.rigor = FLCC_ESTIMATE;
    o.threads = threads;
    o.method = method;
    return o;
}

// The image and template of pair p.
struct Pairing {
    flcc_pairing pairing;
    int images, templates, pairs;
    int image_of(int p) const
    {
        return pairing == FLCC_ALL_PAIRS ? p / templates : int(int64_t(p) * images / pairs);
    }
    int templ_of(int p) const
    {
        return pairing == FLCC_ALL_PAIRS ? p % templates : int(int64_t(p) * templates / pairs);
    }
};

// A batch of pg's pairing that keeps its maps.
inline flcc_batch batch_keeping_maps(const Pairing& pg)
{
    flcc_batch b;
    flcc_batch_init(&b);
    b.pairing = pg.pairing;
    b.images = pg.images;
    b.templates = pg.templates;
    b.keep_maps = 1;
    return b;
}

// Checks one frame's maps against the reference, and each map's first peak against the
// reference map's maximum: the peak's value is the map's value there, and the reference there is
// within the tolerance of the reference's maximum.
inline void check_maps(flcc_op op, const ref::Shape& s, const Pairing& pg, const std::vector<float>& images,
                const std::vector<float>& templs, const float* maps, const flcc_peak* peaks, int k)
{
    const int64_t in = ref::image_elems(s), tn = ref::templ_elems(s), on = ref::out_elems(s);
    for (int p = 0; p < pg.pairs; ++p) {
        const auto r = th::reference(op, s, images.data() + pg.image_of(p) * in,
                                     templs.data() + pg.templ_of(p) * tn);
        const float* m = maps + p * on;
        INFO(op_name(op) << " " << th::describe(s) << " pair " << p << ": " << th::worst(s, r, m));
        CHECK(th::error(op, r, m) <= kTol);
        if (peaks == nullptr) continue;
        const flcc_peak& pk = peaks[int64_t(p) * k];
        const auto e = ref::out_extent(s);
        const int64_t at = s.dim == 2 ? int64_t(pk.h) * e[2] + pk.w
                                      : (int64_t(pk.h) * e[1] + pk.w) * e[2] + pk.d;
        REQUIRE(at >= 0);
        REQUIRE(at < on);
        CHECK(pk.value == m[at]);
        const double top = *std::max_element(r.begin(), r.end());
        const double scale = op == FLCC_LCORR ? 1 : std::max(ref::max_abs(r), 1.0);
        CHECK(top - r[size_t(at)] <= 2 * kTol * scale);
        CHECK(pk.templ == pg.templ_of(p));
    }
}

// `count` uniform random images (image = true) or templates of shape s, back to back.
inline std::vector<float> stack(const ref::Shape& s, bool image, int count, std::mt19937& rng)
{
    std::vector<float> v;
    for (int i = 0; i < count; ++i) {
        const auto one = ref::make_data(ref::Data::uniform, s, image, rng);
        v.insert(v.end(), one.begin(), one.end());
    }
    return v;
}

struct BatchRun {
    flcc_result created = FLCC_EXEC_FAILED, executed = FLCC_EXEC_FAILED;
    std::vector<float> maps;
    std::vector<flcc_peak> peaks;
    std::string method;
    int pairs = 0;
};

inline BatchRun run_batch(flcc_op op, const ref::Shape& s, const flcc_batch& b, const flcc_options& o,
                   const void* images, const void* templs, int frames = 1)
{
    BatchRun r;
    flcc_plan plan = nullptr;
    r.created = flcc_batch_plan_create(&plan, op, s.dim, s.image, s.templ, &b, &o);
    if (r.created != FLCC_SUCCESS) return r;
    r.method = flcc_plan_method(plan);
    flcc_batch_pairs(plan, &r.pairs);
    const int maps_per_frame = b.best_over_templates ? b.images : r.pairs;
    if (b.keep_maps)
        r.maps.resize(size_t(frames) * maps_per_frame * ref::out_elems(s) *
                      (b.best_over_templates ? 2 : 1));
    r.peaks.resize(size_t(frames) * maps_per_frame * std::max(b.peaks, 1));
    r.executed = flcc_batch_exec(plan, images, templs, b.keep_maps ? r.maps.data() : nullptr,
                                 b.peaks > 0 ? r.peaks.data() : nullptr, frames);
    flcc_destroy(plan);
    return r;
}

}  // namespace bt
