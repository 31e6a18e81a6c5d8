// Fuzz target: execution. A small problem drawn from the input (2D or 3D, at most 24 per axis,
// any region, either operation, SINGLE or STREAM, 1-3 frames, 1-2 threads, the finite check on
// or off, host platform, the planner's choice or a forced host solver by its flcc_solver_name),
// and data of many kinds: uniform, integer, offset, constant, near-constant, huge, tiny and
// denormal scales, raw float bits from the input, a palette of edge values (NaN, Inf, FLT_MAX,
// denormals, signed zeros), plus single edge values put anywhere. Checks, aborting on failure:
//   - the result code: FLCC_NONFINITE_INPUT exactly when the check is on and some input value
//     is NaN or Inf, else success;
//   - LCC of finite input: every output finite, |r| <= 1, exactly 0 on panels of zero variance
//     and everywhere for a constant template;
//   - well-scaled data (uniform, uint8, uint16, offset): the float64 reference within the
//     bounds of DESIGN.md section 4 (LCC 1e-5, convolution 1e-5 * max(|y|_inf, 1));
//   - the template cache: after an exec with another template, the first template again gives
//     the first output bit for bit, and so does a cached repeat.
// Work per exec is bounded (outputs x template elements); larger draws are scaled down.
#include "flcc.h"
#include "fuzz_input.h"
#include "reference.h"

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

#define CHECK(cond)                                                                              \
    do {                                                                                         \
        if (!(cond)) {                                                                           \
            std::fprintf(stderr, "fuzz_exec: %s:%d: CHECK(%s) failed (%s; last detail: %s)\n",   \
                         __FILE__, __LINE__, #cond, what.c_str(), flcc_last_error_detail());     \
            std::abort();                                                                        \
        }                                                                                        \
    } while (0)

constexpr int64_t kMaxWork = int64_t(1) << 21;   // output elements x template elements x frames

enum Kind { uniform, uint8, uint16, offset, constant, near_constant, huge, tiny, raw_bits, palette, n_kinds };
const char* kind_names[] = {"uniform", "uint8", "uint16", "offset", "constant", "near_constant",
                            "huge", "tiny", "raw_bits", "palette"};

const float edge_values[] = {0.0f, -0.0f, 1.0f, -1.0f, FLT_MAX, -FLT_MAX, FLT_MIN, -FLT_MIN,
                             std::numeric_limits<float>::denorm_min(), 1e-40f, 3e38f, 1e20f,
                             -1e20f, 65535.0f, 0.5f, 16777217.0f,
                             std::numeric_limits<float>::quiet_NaN(),
                             std::numeric_limits<float>::infinity(),
                             -std::numeric_limits<float>::infinity(), 1e4f};
constexpr int n_edges = int(sizeof edge_values / sizeof edge_values[0]);

bool well_scaled(int kind) { return kind <= offset; }

std::vector<float> make(int kind, size_t n, fuzz_input* in, std::mt19937& rng)
{
    std::vector<float> v(n);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    std::normal_distribution<float> g(0.0f, 1.0f);
    const float c = edge_values[fuzz_u8(in) % n_edges];
    const int e = int(fuzz_u8(in) % 100);
    for (size_t i = 0; i < n; ++i) {
        switch (kind) {
        case uniform: v[i] = u(rng); break;
        case uint8: v[i] = float(rng() % 256); break;
        case uint16: v[i] = float(rng() % 65536); break;
        case offset: v[i] = 1e4f + g(rng); break;
        case constant: v[i] = c; break;
        case near_constant: v[i] = 1000.0f + (rng() % 2 ? std::ldexp(1.0f, -13) : 0.0f); break;
        case huge: v[i] = std::ldexp(u(rng) - 0.5f, 28 + e); break;      // up to 2^127
        case tiny: v[i] = std::ldexp(u(rng) - 0.5f, -50 - e); break;     // down into denormals
        case raw_bits: {
            uint32_t bits = 0;
            if (fuzz_bytes(in, &bits, 4) < 4) bits = uint32_t(rng());
            std::memcpy(&v[i], &bits, 4);
            break;
        }
        default: v[i] = edge_values[rng() % n_edges]; break;
        }
    }
    return v;
}

bool all_finite(const std::vector<float>& v)
{
    for (float x : v)
        if (!std::isfinite(x)) return false;
    return true;
}

int64_t elems(int dim, const flcc_size& s) { return int64_t(s.h) * s.w * (dim == 3 ? s.d : 1); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    // Wisdom (the planner's decisions and FFTW's) carries over from input to input, as in a
    // long-running program: it spares FFTW_MEASURE's timing of the same transforms again.
    fuzz_input in = fuzz_begin(data, size);
    std::string what = "setup";

    const uint8_t flags = fuzz_u8(&in);
    const flcc_op op = flags & 1 ? FLCC_LCORR : FLCC_CONV;
    const int dim = flags & 2 ? 3 : 2;
    const flcc_type type = flags & 4 ? FLCC_STREAM : FLCC_SINGLE;
    const int check_finite = flags & 8 ? 0 : 1;
    const int count = 1 + (flags >> 4) % 3;
    const int threads = flags & 64 ? 2 : 1;
    const flcc_rigor rigor = flags & 128 ? FLCC_MEASURE : FLCC_ESTIMATE;
    const flcc_region region = flcc_region(fuzz_u8(&in) % 3);
    const bool cache_check = fuzz_u8(&in) % 2 == 0;
    int s[3], t[3];
    for (int a = 0; a < 3; ++a) s[a] = 1 + fuzz_u8(&in) % 24;
    for (int a = 0; a < 3; ++a) t[a] = 1 + fuzz_u8(&in) % 24;
    if (dim == 2) s[2] = t[2] = 1;
    if (region == FLCC_VALID)
        for (int a = 0; a < 3; ++a) t[a] = std::min(t[a], s[a]);
    // Bound the work: shrink the largest axis of the template, else of the image.
    const auto out_axis = [&](int a) {
        return region == FLCC_FULL ? s[a] + t[a] - 1 : region == FLCC_SAME ? s[a] : s[a] - t[a] + 1;
    };
    for (;;) {
        int64_t out = 1, tn = 1;
        for (int a = 0; a < 3; ++a) out *= out_axis(a), tn *= t[a];
        if (out * tn * count <= kMaxWork) break;
        int* v = t;
        int best = 0;
        for (int a = 1; a < 3; ++a)
            if (t[a] > t[best]) best = a;
        if (t[best] == 1 || (s[best] > 2 * t[best] && region != FLCC_VALID)) {
            v = s;
            best = 0;
            for (int a = 1; a < 3; ++a)
                if (s[a] > s[best]) best = a;
        }
        v[best] = (v[best] + 1) / 2;
        if (region == FLCC_VALID) t[best] = std::min(t[best], s[best]);
    }
    ref::Shape shape;
    shape.dim = dim;
    shape.region = region;
    shape.image = dim == 2 ? flcc_size{s[0], s[1], 1} : flcc_size{s[0], s[1], s[2]};
    shape.templ = dim == 2 ? flcc_size{t[0], t[1], 1} : flcc_size{t[0], t[1], t[2]};

    // The solver: the planner's choice or a host solver of the right dimension, by name.
    // Names are "host.<family><dim>.<variant>".
    std::vector<const char*> names;
    for (int i = 0; i < flcc_solver_count(); ++i) {
        const char* n = flcc_solver_name(i);
        const char* dot = std::strchr(n + 5, '.');
        if (std::strncmp(n, "host.", 5) == 0 && dot != nullptr && dot[-1] == char('0' + dim))
            names.push_back(n);
    }
    const size_t pick = fuzz_u8(&in) % (names.size() + 3);
    const char* method = pick < names.size() ? names[pick] : nullptr;

    const int image_kind = fuzz_u8(&in) % n_kinds, templ_kind = fuzz_u8(&in) % n_kinds;
    std::mt19937 rng(fuzz_u32(&in));
    const size_t in_n = size_t(elems(dim, shape.image)), t_n = size_t(elems(dim, shape.templ));
    std::vector<float> image = make(image_kind, in_n * count, &in, rng);
    std::vector<float> templ = make(templ_kind, t_n, &in, rng);
    const int specials = fuzz_u8(&in) % 4;
    for (int k = 0; k < specials; ++k) {
        const uint8_t where = fuzz_u8(&in);
        const float v = edge_values[fuzz_u8(&in) % n_edges];
        std::vector<float>& dst = where & 1 ? templ : image;
        dst[fuzz_u32(&in) % dst.size()] = v;
    }
    const bool finite = all_finite(image) && all_finite(templ);
    const bool nice = well_scaled(image_kind) && well_scaled(templ_kind) && specials == 0;

    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "%s %dD image %dx%dx%d templ %dx%dx%d region %d %s count %d threads %d rigor %d "
                  "check_finite %d method %s data %s/%s specials %d",
                  op == FLCC_CONV ? "conv" : "lcorr", dim, s[0], s[1], s[2], t[0], t[1], t[2],
                  int(region), type == FLCC_STREAM ? "stream" : "single", count, threads,
                  int(rigor), check_finite, method ? method : "(planner)", kind_names[image_kind],
                  kind_names[templ_kind], specials);
    what = buf;

    flcc_options o;
    flcc_options_init(&o);
    o.type = type;
    o.platform = FLCC_HOST;
    o.region = region;
    o.rigor = rigor;
    o.threads = threads;
    o.method = method;
    o.check_finite = check_finite;
    flcc_plan plan = nullptr;
    const flcc_result pr = flcc_plan_create(&plan, op, dim, shape.image, shape.templ, &o);
    if (method != nullptr && pr == FLCC_METHOD_NOT_APPLICABLE) return 0;
    CHECK(pr == FLCC_SUCCESS);
    CHECK(plan != nullptr);
    what += std::string(" -> ") + flcc_plan_method(plan);

    const size_t out_n = size_t(ref::out_elems(shape));
    const auto exec = [&](const std::vector<float>& tp, std::vector<float>& out) {
        out.assign(out_n * count, -12345.0f);
        return op == FLCC_CONV ? flcc_conv_exec(plan, image.data(), tp.data(), out.data(), count)
                               : flcc_lcorr_exec(plan, image.data(), tp.data(), out.data(), count);
    };
    std::vector<float> out;
    const flcc_result er = exec(templ, out);
    if (check_finite && !finite)
        CHECK(er == FLCC_NONFINITE_INPUT);
    else if (finite)
        CHECK(er == FLCC_SUCCESS);
    else
        CHECK(er == FLCC_SUCCESS || er == FLCC_NONFINITE_INPUT);

    if (er == FLCC_SUCCESS && finite) {
        bool constant_templ = true;
        for (float v : templ) constant_templ = constant_templ && v == templ[0];
        for (int f = 0; f < count; ++f) {
            const float* img = image.data() + size_t(f) * in_n;
            const float* res = out.data() + size_t(f) * out_n;
            if (op == FLCC_LCORR) {
                const std::vector<bool> zero = ref::zero_variance(shape, img);
                for (size_t i = 0; i < out_n; ++i) {
                    CHECK(std::isfinite(res[i]) && std::fabs(res[i]) <= 1.0f);
                    if (zero[i] || constant_templ) CHECK(res[i] == 0.0f);
                }
            }
            if (nice) {
                const std::vector<double> r = op == FLCC_CONV ? ref::conv(shape, img, templ.data())
                                                              : ref::lcorr(shape, img, templ.data());
                const double err = ref::max_abs_diff(r, res);
                const double bound = op == FLCC_CONV ? 1e-5 * std::max(ref::max_abs(r), 1.0) : 1e-5;
                if (!(err <= bound))
                    std::fprintf(stderr, "frame %d: error %.3g > bound %.3g\n", f, err, bound);
                CHECK(err <= bound);
            }
        }
    }

    if (cache_check && er == FLCC_SUCCESS) {
        std::vector<float> other = templ, again;
        other[fuzz_u32(&in) % other.size()] += 1.0f;
        const flcc_result r2 = exec(other, again);
        CHECK(r2 == FLCC_SUCCESS || r2 == FLCC_NONFINITE_INPUT);
        for (int k = 0; k < 2; ++k) {   // prepared afresh, then from the cache
            CHECK(exec(templ, again) == FLCC_SUCCESS);
            CHECK(std::memcmp(again.data(), out.data(), out.size() * sizeof(float)) == 0);
        }
    }
    CHECK(flcc_destroy(plan) == FLCC_SUCCESS);
    return 0;
}
