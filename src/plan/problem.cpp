#include "plan/problem.h"

#include "geometry/region.h"
#include "plan/error.h"

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdio>
#include <limits>
#include <thread>

namespace flcc {

int hardware_threads()
{
    unsigned n = std::thread::hardware_concurrency();
    return n == 0 ? 1 : static_cast<int>(n);
}

bool Problem::template_is_cube(int n) const
{
    if (templ[1] != n || templ[2] != n) return false;
    return dim == 2 ? templ[0] == 1 : templ[0] == n;
}

std::string Problem::key() const
{
    static const char* region_names[] = {"full", "same", "valid"};
    static const char* platform_names[] = {"host", "device", "any"};
    char buf[256];
    if (dim == 2)
        std::snprintf(buf, sizeof buf, "%s 2d %lldx%lld t%lldx%lld %s %s th%d %s%s",
                      op == Op::conv ? "conv" : "lcorr", (long long)image[1], (long long)image[2],
                      (long long)templ[1], (long long)templ[2], region_names[region],
                      type == FLCC_STREAM ? "stream" : "single", threads,
                      platform_names[platform], device_resident ? " resident" : "");
    else
        std::snprintf(buf, sizeof buf, "%s 3d %lldx%lldx%lld t%lldx%lldx%lld %s %s th%d %s%s",
                      op == Op::conv ? "conv" : "lcorr", (long long)image[0], (long long)image[1],
                      (long long)image[2], (long long)templ[0], (long long)templ[1],
                      (long long)templ[2], region_names[region],
                      type == FLCC_STREAM ? "stream" : "single", threads,
                      platform_names[platform], device_resident ? " resident" : "");
    return buf;
}

namespace {

// The most bytes one frame's arrays (image, template and output together) may take: 2^47
// (128 TiB), the user address space Linux gives a process on x86-64 and AArch64 (48-bit virtual
// addresses; mappings above it only on explicit request), and never more than a pointer
// difference holds. A plan whose frame cannot be mapped can never execute, so it is refused.
constexpr int64_t kMaxFrameBytes =
    std::min<int64_t>(int64_t(1) << 47, int64_t(std::numeric_limits<ptrdiff_t>::max()));

// Elements of `e`, or -1 when the count overflows int64.
int64_t checked_elems(const Extent& e)
{
    int64_t n = 1;
    for (int64_t v : e)
        if (__builtin_mul_overflow(n, v, &n)) return -1;
    return n;
}

// The axis names as the user gave them: h, w (2D) or h, w, d (3D) for internal axes 0..2.
const char* axis_name(int dim, int a)
{
    static const char* names3[] = {"h", "w", "d"};
    static const char* names2[] = {"", "h", "w"};
    return dim == 2 ? names2[a] : names3[a];
}

// "10x12" (2D) or "10x12x3" (3D), in a buffer of its own (a refusal allocates nothing).
struct ExtentText {
    char text[72];
    ExtentText(int dim, const Extent& e)
    {
        if (dim == 2)
            std::snprintf(text, sizeof text, "%lldx%lld", (long long)e[1], (long long)e[2]);
        else
            std::snprintf(text, sizeof text, "%lldx%lldx%lld", (long long)e[0], (long long)e[1],
                          (long long)e[2]);
    }
};

}  // namespace

flcc_result make_problem(Problem& p, int op, int dim, flcc_size image, flcc_size templ,
                         const flcc_options& o, const char* prefix)
{
    // Enums are read as integers: a C caller may pass any int (see enum_value).
    const int type = enum_value(o.type), platform = enum_value(o.platform),
              region = enum_value(o.region), rigor = enum_value(o.rigor);
    if (op != FLCC_CONV && op != FLCC_LCORR && op != FLCC_XCORR)
        return fail(FLCC_INVALID_VALUE, "op = %d: not a flcc_op", op);
    if (dim != 2 && dim != 3) return fail(FLCC_INVALID_DIMENSION, "dim = %d: must be 2 or 3", dim);
    if (type != FLCC_SINGLE && type != FLCC_STREAM)
        return fail(FLCC_INVALID_TYPE, "%stype = %d: not a flcc_type", prefix, type);
    if (platform != FLCC_HOST && platform != FLCC_DEVICE && platform != FLCC_ANY)
        return fail(FLCC_INVALID_PLATFORM, "%splatform = %d: not a flcc_platform", prefix, platform);
    if (region != FLCC_FULL && region != FLCC_SAME && region != FLCC_VALID)
        return fail(FLCC_INVALID_VALUE, "%sregion = %d: not a flcc_region", prefix, region);
    if (rigor != FLCC_MEASURE && rigor != FLCC_ESTIMATE && rigor != FLCC_WISDOM_ONLY)
        return fail(FLCC_INVALID_VALUE, "%srigor = %d: not a flcc_rigor", prefix, rigor);
    if (o.threads < 0)
        return fail(FLCC_INVALID_VALUE, "%sthreads = %d: must be >= 0 (0 = all hardware threads)",
                    prefix, o.threads);
    if (o.device < -1)
        return fail(FLCC_INVALID_VALUE, "%sdevice = %d: must be >= -1 (-1 = the current device)",
                    prefix, o.device);
    if (o.check_finite != 0 && o.check_finite != 1)
        return fail(FLCC_INVALID_VALUE, "%scheck_finite = %d: must be 0 or 1", prefix,
                    o.check_finite);
    if (o.device_resident != 0 && o.device_resident != 1)
        return fail(FLCC_INVALID_VALUE, "%sdevice_resident = %d: must be 0 or 1", prefix,
                    o.device_resident);

    Problem q;
    // Cross-correlation is convolution with the template reversed (as scipy.signal.correlate
    // computes it): its solvers are convolution's, and so are its decisions.
    q.op = op == FLCC_LCORR ? Op::lcorr : Op::conv;
    q.dim = dim;
    if (dim == 2) {
        q.image = {1, image.h, image.w};
        q.templ = {1, templ.h, templ.w};
    } else {
        q.image = {image.h, image.w, image.d};
        q.templ = {templ.h, templ.w, templ.d};
    }
    for (int a = dim == 2 ? 1 : 0; a < 3; ++a) {
        if (q.image[a] < 1)
            return fail(FLCC_INVALID_SIZE, "image.%s = %lld: sizes must be >= 1", axis_name(dim, a),
                        (long long)q.image[a]);
        if (q.templ[a] < 1)
            return fail(FLCC_INVALID_SIZE, "templ.%s = %lld: sizes must be >= 1", axis_name(dim, a),
                        (long long)q.templ[a]);
    }

    q.region = static_cast<flcc_region>(region);
    for (int a = 0; a < 3; ++a) {
        if (q.region == FLCC_VALID && q.templ[a] > q.image[a])
            return fail(FLCC_INVALID_SIZE,
                        "template %s larger than image %s for the VALID region (axis %s)",
                        ExtentText(dim, q.templ).text, ExtentText(dim, q.image).text,
                        axis_name(dim, a));
        const geometry::AxisRegion r = geometry::axis_region(q.region, q.image[a], q.templ[a]);
        q.out[a] = r.out;
        q.pad[a] = r.pad;
        if (q.out[a] > INT_MAX)
            return fail(FLCC_INVALID_SIZE, "output %s = %lld (image + template - 1): more than INT_MAX",
                        axis_name(dim, a), (long long)q.out[a]);
    }

    // One frame's arrays, in bytes, within what a process can map.
    const int64_t ni = checked_elems(q.image), nt = checked_elems(q.templ), no = checked_elems(q.out);
    int64_t bytes = -1;
    if (ni >= 0 && nt >= 0 && no >= 0 && !__builtin_add_overflow(ni, nt, &bytes) &&
        !__builtin_add_overflow(bytes, no, &bytes) &&
        !__builtin_mul_overflow(bytes, int64_t(sizeof(float)), &bytes) && bytes <= kMaxFrameBytes)
        bytes = 0;
    if (bytes != 0)
        return fail(FLCC_INVALID_SIZE,
                    "image %s, template %s, output %s: one frame's arrays exceed %lld bytes, "
                    "more than a process can map",
                    ExtentText(dim, q.image).text, ExtentText(dim, q.templ).text,
                    ExtentText(dim, q.out).text, (long long)kMaxFrameBytes);

    q.type = static_cast<flcc_type>(type);
    q.threads = o.threads == 0 ? hardware_threads() : o.threads;
    q.platform = static_cast<flcc_platform>(platform);
    q.device = o.device;
    q.check_finite = o.check_finite != 0;
    q.device_resident = o.device_resident != 0;
    p = q;
    return FLCC_SUCCESS;
}

}  // namespace flcc
