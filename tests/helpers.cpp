#include "helpers.h"

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace th {

Run run(flcc_op op, const ref::Shape& s, const std::vector<float>& image,
        const std::vector<float>& templ, const RunOptions& o)
{
    Run r;
    flcc_options opts;
    flcc_options_init(&opts);
    opts.region = s.region;
    opts.method = o.method;
    opts.type = o.type;
    opts.platform = o.platform;
    opts.rigor = o.rigor;
    opts.threads = o.threads;
    flcc_plan plan = nullptr;
    r.result = flcc_plan_create(&plan, op, s.dim, s.image, s.templ, &opts);
    if (r.result != FLCC_SUCCESS) return r;
    r.method = flcc_plan_method(plan);
    r.out.assign(size_t(ref::out_elems(s) * o.count), -999.0f);   // poison: every output written?
    const auto exec = op == FLCC_CONV ? flcc_conv_exec : op == FLCC_XCORR ? flcc_xcorr_exec : flcc_lcorr_exec;
    r.result = exec(plan, image.data(), templ.data(), r.out.data(), o.count);
    flcc_destroy(plan);
    return r;
}

std::vector<std::string> solvers(const std::string& prefix)
{
    // FLCC_TEST_SOLVERS narrows the sweeps to names that start with it (a sanitizer's subset).
    const char* only = std::getenv("FLCC_TEST_SOLVERS");
    const std::string narrow = only != nullptr ? only : "";
    std::vector<std::string> v;
    for (int i = 0; i < flcc_solver_count(); ++i) {
        const std::string n = flcc_solver_name(i);
        if (n.compare(0, prefix.size(), prefix) == 0 && n.compare(0, narrow.size(), narrow) == 0) v.push_back(n);
    }
    return v;
}

int solver_dim(const std::string& name)
{
    // "<platform>.<family><dim>[.<variant>]"
    const size_t dot = name.find('.');
    const size_t end = name.find('.', dot + 1);
    const std::string family = name.substr(dot + 1, end == std::string::npos ? std::string::npos : end - dot - 1);
    return family.back() - '0';
}

int solver_cube(const std::string& name)
{
    const size_t k = name.rfind(".k");
    if (k == std::string::npos) return 0;
    return std::atoi(name.c_str() + k + 2);
}

std::vector<ref::Shape> shapes_for(const std::string& name)
{
    const int dim = solver_dim(name);
    const int n = solver_cube(name);
    std::vector<ref::Shape> v;
    auto add = [&](flcc_size im, flcc_size t) {
        for (flcc_region reg : {FLCC_FULL, FLCC_SAME, FLCC_VALID}) {
            if (reg == FLCC_VALID &&
                (t.h > im.h || t.w > im.w || (dim == 3 && t.d > im.d)))
                continue;
            v.push_back({dim, im, t, reg});
        }
    };
    if (dim == 2) {
        if (n) {
            add({n + 37, n + 53, 1}, {n, n, 1});
            add({n, n, 1}, {n, n, 1});             // template = image
            add({n + 3, 2 * n + 70, 1}, {n, n, 1});   // wide
        } else {
            add({13, 17, 1}, {3, 5, 1});
            add({31, 7, 1}, {1, 7, 1});
            add({1, 40, 1}, {1, 9, 1});             // 1 x N
            add({20, 20, 1}, {20, 20, 1});          // template = image
            add({37, 41, 1}, {6, 2, 1});
            add({64, 70, 1}, {11, 13, 1});
            add({5, 5, 1}, {7, 9, 1});              // template larger than image
            add({2, 3, 1}, {15, 24, 1});            // template far larger than the image
            add({97, 101, 1}, {1, 1, 1});
            add({53, 59, 1}, {17, 23, 1});          // primes
        }
    } else {
        if (n) {
            add({n + 6, n + 5, n + 9}, {n, n, n});
            add({n, n, n}, {n, n, n});
        } else {
            add({9, 10, 11}, {2, 3, 4});
            add({7, 7, 7}, {7, 7, 7});
            add({1, 12, 13}, {1, 3, 3});
            add({12, 5, 20}, {3, 1, 5});
            add({4, 6, 5}, {6, 3, 7});              // template larger than image
            add({13, 11, 17}, {5, 4, 3});
        }
    }
    return v;
}

std::vector<double> reference(flcc_op op, const ref::Shape& s, const float* image, const float* templ)
{
    return op == FLCC_CONV    ? ref::conv(s, image, templ)
           : op == FLCC_XCORR ? ref::xcorr(s, image, templ)
                              : ref::lcorr(s, image, templ);
}

double error(flcc_op op, const std::vector<double>& r, const float* out)
{
    const double e = ref::max_abs_diff(r, out);
    return op == FLCC_LCORR ? e : e / std::max(ref::max_abs(r), 1.0);
}

std::string describe(const ref::Shape& s)
{
    static const char* reg[] = {"full", "same", "valid"};
    char buf[160];
    if (s.dim == 2)
        std::snprintf(buf, sizeof buf, "%dx%d t%dx%d %s", s.image.h, s.image.w, s.templ.h,
                      s.templ.w, reg[s.region]);
    else
        std::snprintf(buf, sizeof buf, "%dx%dx%d t%dx%dx%d %s", s.image.h, s.image.w, s.image.d,
                      s.templ.h, s.templ.w, s.templ.d, reg[s.region]);
    return buf;
}

std::string worst(const ref::Shape& s, const std::vector<double>& r, const float* out)
{
    size_t at = 0;
    double e = -1;
    for (size_t i = 0; i < r.size(); ++i) {
        const double d = std::fabs(r[i] - double(out[i]));
        if (!(d <= e)) e = d, at = i;
    }
    const auto ext = ref::out_extent(s);
    char buf[200];
    std::snprintf(buf, sizeof buf, "at (%lld, %lld, %lld): ref %.9g, out %.9g",
                  (long long)(at / size_t(ext[1] * ext[2])), (long long)(at / size_t(ext[2]) % size_t(ext[1])),
                  (long long)(at % size_t(ext[2])), r.empty() ? 0.0 : r[at], r.empty() ? 0.0 : double(out[at]));
    return buf;
}

bool have_device()
{
    flcc_options o;
    flcc_options_init(&o);
    o.platform = FLCC_DEVICE;
    o.rigor = FLCC_ESTIMATE;
    flcc_plan p = nullptr;
    const flcc_result r =
        flcc_plan_create(&p, FLCC_CONV, 2, flcc_size{8, 8, 1}, flcc_size{3, 3, 1}, &o);
    flcc_destroy(p);
    return r == FLCC_SUCCESS;
}

}  // namespace th
