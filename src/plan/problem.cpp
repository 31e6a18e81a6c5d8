#include "plan/problem.h"

#include <climits>
#include <cstdio>
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
    char buf[256];
    if (dim == 2)
        std::snprintf(buf, sizeof buf, "%s 2d %lldx%lld t%lldx%lld %s %s th%d",
                      op == Op::conv ? "conv" : "lcorr", (long long)image[1], (long long)image[2],
                      (long long)templ[1], (long long)templ[2], region_names[region],
                      type == FLCC_STREAM ? "stream" : "single", threads);
    else
        std::snprintf(buf, sizeof buf, "%s 3d %lldx%lldx%lld t%lldx%lldx%lld %s %s th%d",
                      op == Op::conv ? "conv" : "lcorr", (long long)image[0], (long long)image[1],
                      (long long)image[2], (long long)templ[0], (long long)templ[1],
                      (long long)templ[2], region_names[region],
                      type == FLCC_STREAM ? "stream" : "single", threads);
    return buf;
}

namespace {

// Bytes of one float array of `e`, or -1 when the count overflows.
int64_t checked_bytes(const Extent& e)
{
    int64_t n = 1;
    for (int64_t v : e)
        if (__builtin_mul_overflow(n, v, &n)) return -1;
    int64_t bytes;
    if (__builtin_mul_overflow(n, int64_t(sizeof(float)), &bytes)) return -1;
    return bytes;
}

}  // namespace

flcc_result make_problem(Problem& p, flcc_op op, int dim, flcc_size image, flcc_size templ,
                         const flcc_options& o)
{
    if (op != FLCC_CONV && op != FLCC_LCORR) return FLCC_INVALID_VALUE;
    if (dim != 2 && dim != 3) return FLCC_INVALID_DIMENSION;
    if (o.type != FLCC_SINGLE && o.type != FLCC_STREAM) return FLCC_INVALID_TYPE;
    if (o.platform != FLCC_HOST && o.platform != FLCC_DEVICE && o.platform != FLCC_ANY)
        return FLCC_INVALID_PLATFORM;
    if (o.region != FLCC_FULL && o.region != FLCC_SAME && o.region != FLCC_VALID)
        return FLCC_INVALID_VALUE;
    if (o.rigor != FLCC_MEASURE && o.rigor != FLCC_ESTIMATE && o.rigor != FLCC_WISDOM_ONLY)
        return FLCC_INVALID_VALUE;
    if (o.threads < 0 || o.device < -1) return FLCC_INVALID_VALUE;
    if (o.check_finite != 0 && o.check_finite != 1) return FLCC_INVALID_VALUE;
    if (o.device_resident != 0 && o.device_resident != 1) return FLCC_INVALID_VALUE;

    Problem q;
    q.op = op == FLCC_CONV ? Op::conv : Op::lcorr;
    q.dim = dim;
    if (dim == 2) {
        q.image = {1, image.h, image.w};
        q.templ = {1, templ.h, templ.w};
    } else {
        q.image = {image.h, image.w, image.d};
        q.templ = {templ.h, templ.w, templ.d};
    }
    for (int a = 0; a < 3; ++a)
        if (q.image[a] < 1 || q.templ[a] < 1) return FLCC_INVALID_SIZE;

    for (int a = 0; a < 3; ++a) {
        const int64_t s = q.image[a], t = q.templ[a];
        switch (o.region) {
        case FLCC_FULL: q.out[a] = s + t - 1; q.pad[a] = t - 1; break;
        case FLCC_SAME: q.out[a] = s; q.pad[a] = (t - 1) - (t - 1) / 2; break;
        case FLCC_VALID:
            if (t > s) return FLCC_INVALID_SIZE;
            q.out[a] = s - t + 1;
            q.pad[a] = 0;
            break;
        }
        if (q.out[a] > INT_MAX) return FLCC_INVALID_SIZE;
    }
    if (checked_bytes(q.image) < 0 || checked_bytes(q.templ) < 0 || checked_bytes(q.out) < 0)
        return FLCC_INVALID_SIZE;

    q.region = o.region;
    q.type = o.type;
    q.threads = o.threads == 0 ? hardware_threads() : o.threads;
    q.device = o.device;
    q.check_finite = o.check_finite != 0;
    q.device_resident = o.device_resident != 0;
    p = q;
    return FLCC_SUCCESS;
}

}  // namespace flcc
