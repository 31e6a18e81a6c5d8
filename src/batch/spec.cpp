#include "batch/spec.h"

#include "plan/error.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace flcc::batch {

int64_t Source::elem_bytes() const
{
    switch (type) {
    case FLCC_UINT16: return 2;
    case FLCC_UINT8: return 1;
    case FLCC_FLOAT32: break;
    }
    return 4;
}

int64_t Source::frame_elems() const { return cut ? volume(frame) : int64_t(count) * volume(extent); }

int Spec::image_of(int pair) const
{
    return pairing == FLCC_ALL_PAIRS ? pair / templates.count
                                     : int(int64_t(pair) * images.count / pairs);
}

int Spec::templ_of(int pair) const
{
    return pairing == FLCC_ALL_PAIRS ? pair % templates.count
                                     : int(int64_t(pair) * templates.count / pairs);
}

int64_t Spec::map_floats_per_frame() const
{
    return int64_t(maps_per_frame()) * volume(pair.out) * (best ? 2 : 1);
}

namespace {

// The most pairs per frame, and of arrays per side: far beyond any registration workload, and
// small enough that every per-frame count and offset fits an int.
constexpr int kMaxPairs = 1 << 24;
constexpr int kMaxPeaks = 64;
constexpr int kMaxUpsample = 1000;

flcc_result flag(int v, const char* name)
{
    if (v == 0 || v == 1) return FLCC_SUCCESS;
    return fail(FLCC_INVALID_VALUE, "batch.%s = %d: must be 0 or 1", name, v);
}

flcc_result sigma(float v, const char* name)
{
    if (std::isfinite(v) && v >= 0) return FLCC_SUCCESS;
    return fail(FLCC_INVALID_VALUE, "batch.%s = %g: must be a finite sigma >= 0 (0 = off)", name,
                double(v));
}

// Fills one side: its count, type, extent and, with origins, its frame and origins, each
// subregion checked to lie inside the frame.
flcc_result make_source(Source& s, const char* side, int count, int type, const Extent& extent,
                        int dim, const int* origins, flcc_size frame)
{
    if (count < 1 || count > kMaxPairs)
        return fail(FLCC_INVALID_VALUE, "batch.%s = %d: must be in [1, %d]", side, count, kMaxPairs);
    if (type < FLCC_FLOAT32 || type > FLCC_UINT8)
        return fail(FLCC_INVALID_VALUE, "batch.%s type = %d: not a flcc_dtype", side, type);
    s.count = count;
    s.type = static_cast<flcc_dtype>(type);
    s.extent = extent;
    s.cut = origins != nullptr;
    if (!s.cut) return FLCC_SUCCESS;
    const int sizes[3] = {frame.h, frame.w, frame.d};
    s.frame = dim == 2 ? Extent{1, sizes[0], sizes[1]} : Extent{sizes[0], sizes[1], sizes[2]};
    for (int a = 0; a < dim; ++a)
        if (sizes[a] < 1)
            return fail(FLCC_INVALID_SIZE, "batch.%s frame: size %d along axis %d must be >= 1",
                        side, sizes[a], a);
    int64_t frame_elems = 1;
    for (int64_t v : s.frame)
        if (__builtin_mul_overflow(frame_elems, v, &frame_elems) || frame_elems > (int64_t(1) << 40))
            return fail(FLCC_INVALID_SIZE, "batch.%s frame: too many elements", side);
    s.origins.resize(size_t(count));
    for (int i = 0; i < count; ++i) {
        Extent o{0, 0, 0};
        for (int a = 0; a < dim; ++a) o[size_t(a + 3 - dim)] = origins[int64_t(i) * dim + a];
        for (int a = 0; a < 3; ++a)
            if (o[a] < 0 || o[a] + extent[a] > s.frame[a]) {
                if (dim == 2)
                    return fail(FLCC_INVALID_SIZE,
                                "batch.%s origin %d = (%lld, %lld): the %lldx%lld subregion leaves "
                                "the %lldx%lld frame",
                                side, i, (long long)o[1], (long long)o[2], (long long)extent[1],
                                (long long)extent[2], (long long)s.frame[1], (long long)s.frame[2]);
                return fail(FLCC_INVALID_SIZE,
                            "batch.%s origin %d = (%lld, %lld, %lld): the %lldx%lldx%lld subregion "
                            "leaves the %lldx%lldx%lld frame",
                            side, i, (long long)o[0], (long long)o[1], (long long)o[2],
                            (long long)extent[0], (long long)extent[1], (long long)extent[2],
                            (long long)s.frame[0], (long long)s.frame[1], (long long)s.frame[2]);
            }
        s.origins[size_t(i)] = o;
    }
    return FLCC_SUCCESS;
}

}  // namespace

flcc_result make_spec(Spec& out, int op, int dim, flcc_size image, flcc_size templ,
                      const flcc_batch& b, const flcc_options& o)
{
    Spec s;
    flcc_result r = make_problem(s.pair, op, dim, image, templ, o, "options.");
    if (r != FLCC_SUCCESS) return r;
    if (o.threads > FLCC_MAX_THREADS)
        return fail(FLCC_INVALID_VALUE, "options.threads = %d: must be <= FLCC_MAX_THREADS (%d)",
                    o.threads, FLCC_MAX_THREADS);
    s.op = static_cast<flcc_op>(op);
    s.threads = std::min(s.pair.threads, FLCC_MAX_THREADS);
    s.check_finite = s.pair.check_finite;
    s.platform = s.pair.platform;
    s.device = s.pair.device;
    // Each pair is one frame of a single-threaded host plan; its type is set below.
    s.pair.threads = 1;
    s.pair.platform = FLCC_HOST;
    s.pair.device_resident = false;

    const int pairing = enum_value(b.pairing);
    if (pairing != FLCC_PAIRWISE && pairing != FLCC_ALL_PAIRS)
        return fail(FLCC_INVALID_VALUE, "batch.pairing = %d: not a flcc_pairing", pairing);
    s.pairing = static_cast<flcc_pairing>(pairing);
    if ((r = make_source(s.images, "images", b.images, enum_value(b.image_type), s.pair.image, dim,
                         b.image_origins, b.image_frame)) != FLCC_SUCCESS ||
        (r = make_source(s.templates, "templates", b.templates, enum_value(b.templ_type),
                         s.pair.templ, dim, b.templ_origins, b.templ_frame)) != FLCC_SUCCESS)
        return r;
    if (s.pairing == FLCC_PAIRWISE) {
        const int more = std::max(b.images, b.templates), fewer = std::min(b.images, b.templates);
        if (more % fewer != 0)
            return fail(FLCC_INVALID_VALUE,
                        "batch.images = %d, batch.templates = %d: PAIRWISE needs one to be a "
                        "multiple of the other",
                        b.images, b.templates);
        s.pairs = more;
    } else {
        if (int64_t(b.images) * b.templates > kMaxPairs)
            return fail(FLCC_INVALID_VALUE, "batch.images * batch.templates = %lld: more than %d pairs",
                        (long long)b.images * b.templates, kMaxPairs);
        s.pairs = b.images * b.templates;
    }

    if ((r = flag(b.zero_mean, "zero_mean")) != FLCC_SUCCESS ||
        (r = flag(b.hann, "hann")) != FLCC_SUCCESS ||
        (r = sigma(b.bandpass_low, "bandpass_low")) != FLCC_SUCCESS ||
        (r = sigma(b.bandpass_high, "bandpass_high")) != FLCC_SUCCESS ||
        (r = flag(b.keep_maps, "keep_maps")) != FLCC_SUCCESS ||
        (r = flag(b.best_over_templates, "best_over_templates")) != FLCC_SUCCESS ||
        (r = flag(b.templ_per_frame, "templ_per_frame")) != FLCC_SUCCESS)
        return r;
    s.zero_mean = b.zero_mean != 0;
    s.hann = b.hann != 0;
    s.bandpass_low = b.bandpass_low;
    s.bandpass_high = b.bandpass_high;
    s.keep_maps = b.keep_maps != 0;
    s.best = b.best_over_templates != 0;
    s.templ_per_frame = b.templ_per_frame != 0;
    if (s.best && s.pairing != FLCC_ALL_PAIRS)
        return fail(FLCC_INVALID_VALUE, "batch.best_over_templates = 1 needs pairing ALL_PAIRS");

    if (b.peaks < 0 || b.peaks > kMaxPeaks)
        return fail(FLCC_INVALID_VALUE, "batch.peaks = %d: must be in [0, %d]", b.peaks, kMaxPeaks);
    if (b.exclusion < 0)
        return fail(FLCC_INVALID_VALUE, "batch.exclusion = %d: must be >= 0", b.exclusion);
    const int refine = enum_value(b.refine);
    if (refine < FLCC_REFINE_NONE || refine > FLCC_REFINE_UPSAMPLED)
        return fail(FLCC_INVALID_VALUE, "batch.refine = %d: not a flcc_refine", refine);
    if (b.fit_size != 3 && b.fit_size != 5 && b.fit_size != 7)
        return fail(FLCC_INVALID_VALUE, "batch.fit_size = %d: must be 3, 5 or 7", b.fit_size);
    if (b.upsample < 2 || b.upsample > kMaxUpsample)
        return fail(FLCC_INVALID_VALUE, "batch.upsample = %d: must be in [2, %d]", b.upsample,
                    kMaxUpsample);
    if (b.peaks == 0 && !s.keep_maps)
        return fail(FLCC_INVALID_VALUE, "batch.peaks = 0 and batch.keep_maps = 0: nothing to output");
    s.peaks = b.peaks;
    s.exclusion = b.exclusion;
    s.refine = static_cast<flcc_refine>(refine);
    s.fit_size = b.fit_size;
    s.upsample = b.upsample;
    // The pair's template changes at every pair (SINGLE: the planner times its preparation
    // too), unless the templates stay resident: one executor per template (HostRunner), a set
    // that stays the same across frames, where a pair costs its frame alone (STREAM).
    s.pair.type = !s.templ_per_frame && !s.best && s.templates.count > 1 ? FLCC_STREAM : FLCC_SINGLE;
    out = std::move(s);
    return FLCC_SUCCESS;
}

}  // namespace flcc::batch
