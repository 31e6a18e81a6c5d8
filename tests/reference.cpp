#include "reference.h"

#include <algorithm>
#include <cmath>

namespace ref {

namespace {

struct Dims {
    int64_t s[3], t[3], o[3], pad[3];
};

Dims dims_of(const Shape& sh)
{
    Dims d;
    if (sh.dim == 2) {
        d.s[0] = 1, d.s[1] = sh.image.h, d.s[2] = sh.image.w;
        d.t[0] = 1, d.t[1] = sh.templ.h, d.t[2] = sh.templ.w;
    } else {
        d.s[0] = sh.image.h, d.s[1] = sh.image.w, d.s[2] = sh.image.d;
        d.t[0] = sh.templ.h, d.t[1] = sh.templ.w, d.t[2] = sh.templ.d;
    }
    for (int a = 0; a < 3; ++a) {
        const int64_t S = d.s[a], T = d.t[a];
        if (sh.region == FLCC_FULL) d.o[a] = S + T - 1, d.pad[a] = T - 1;
        if (sh.region == FLCC_SAME) d.o[a] = S, d.pad[a] = (T - 1) - (T - 1) / 2;
        if (sh.region == FLCC_VALID) d.o[a] = S - T + 1, d.pad[a] = 0;
    }
    return d;
}

// The part of output (p, r, c)'s window that lies inside the image: template offsets
// [lo[a], hi[a]) per axis (empty where lo >= hi), the window's first image index `origin`. The
// padding beyond the image is zeros, so sums over the window are sums over this part.
struct Inside {
    int64_t lo[3], hi[3], origin[3];
    int64_t count() const
    {
        int64_t n = 1;
        for (int a = 0; a < 3; ++a) n *= std::max<int64_t>(0, hi[a] - lo[a]);
        return n;
    }
};

Inside inside_of(const Dims& d, int64_t p, int64_t r, int64_t c)
{
    Inside w;
    const int64_t o[3] = {p, r, c};
    for (int a = 0; a < 3; ++a) {
        w.origin[a] = o[a] - d.pad[a];
        w.lo[a] = std::max<int64_t>(0, -w.origin[a]);
        w.hi[a] = std::min<int64_t>(d.t[a], d.s[a] - w.origin[a]);
    }
    return w;
}

// f(template index, image value) over the window's part inside the image, in template order.
template <class F>
void for_inside(const Dims& d, const Inside& w, const float* img, F&& f)
{
    for (int64_t a = w.lo[0]; a < w.hi[0]; ++a)
        for (int64_t i = w.lo[1]; i < w.hi[1]; ++i) {
            const float* row = img + ((w.origin[0] + a) * d.s[1] + w.origin[1] + i) * d.s[2] + w.origin[2];
            const int64_t k = (a * d.t[1] + i) * d.t[2];
            for (int64_t j = w.lo[2]; j < w.hi[2]; ++j) f(k + j, double(row[j]));
        }
}

// The lowest and highest value of a window (the padding's zeros included) and its sum.
struct Range {
    double lo, hi, sum;
};

Range range_of(const Dims& d, const Inside& w, const float* img)
{
    const bool padded = w.count() < d.t[0] * d.t[1] * d.t[2];
    Range g{padded ? 0.0 : INFINITY, padded ? 0.0 : -INFINITY, 0.0};
    for_inside(d, w, img, [&](int64_t, double v) {
        g.lo = std::min(g.lo, v);
        g.hi = std::max(g.hi, v);
        g.sum += v;
    });
    return g;
}

template <class F>
void for_outputs(const Dims& d, F&& f)
{
    for (int64_t p = 0; p < d.o[0]; ++p)
        for (int64_t r = 0; r < d.o[1]; ++r)
            for (int64_t c = 0; c < d.o[2]; ++c) f(p, r, c, (p * d.o[1] + r) * d.o[2] + c);
}

}  // namespace

std::vector<int64_t> out_extent(const Shape& s)
{
    const Dims d = dims_of(s);
    return {d.o[0], d.o[1], d.o[2]};
}
int64_t image_elems(const Shape& s)
{
    const Dims d = dims_of(s);
    return d.s[0] * d.s[1] * d.s[2];
}
int64_t templ_elems(const Shape& s)
{
    const Dims d = dims_of(s);
    return d.t[0] * d.t[1] * d.t[2];
}
int64_t out_elems(const Shape& s)
{
    const Dims d = dims_of(s);
    return d.o[0] * d.o[1] * d.o[2];
}

namespace {

// Correlation with the template as it is (scipy.signal.correlate) or reversed along every axis
// (convolution), both placed as DESIGN.md section 1 places convolution.
std::vector<double> correlate(const Shape& sh, const float* img, const float* t, bool reversed)
{
    const Dims d = dims_of(sh);
    std::vector<double> out(size_t(d.o[0] * d.o[1] * d.o[2]));
    const int64_t tn = d.t[0] * d.t[1] * d.t[2];
    for_outputs(d, [&](int64_t p, int64_t r, int64_t c, int64_t o) {
        double s = 0;
        for_inside(d, inside_of(d, p, r, c), img,
                   [&](int64_t k, double v) { s += double(t[reversed ? tn - 1 - k : k]) * v; });
        out[size_t(o)] = s;
    });
    return out;
}

}  // namespace

std::vector<double> conv(const Shape& sh, const float* img, const float* t) { return correlate(sh, img, t, true); }

std::vector<double> xcorr(const Shape& sh, const float* img, const float* t) { return correlate(sh, img, t, false); }

std::vector<double> lcorr(const Shape& sh, const float* img, const float* t)
{
    const Dims d = dims_of(sh);
    const int64_t tn = d.t[0] * d.t[1] * d.t[2];
    double tm = 0;
    for (int64_t k = 0; k < tn; ++k) tm += t[k];
    tm /= double(tn);
    double tss = 0;
    for (int64_t k = 0; k < tn; ++k) tss += (t[k] - tm) * (t[k] - tm);
    const bool tconst = std::all_of(t, t + tn, [&](float v) { return v == t[0]; });
    std::vector<double> out(size_t(d.o[0] * d.o[1] * d.o[2]), 0.0);
    if (tconst) return out;
    // The window's values beyond the image are zeros: their terms are counted in closed form.
    std::vector<double> tc(static_cast<size_t>(tn));
    double tc_all = 0;
    for (int64_t k = 0; k < tn; ++k) tc_all += tc[size_t(k)] = t[k] - tm;
    for_outputs(d, [&](int64_t p, int64_t r, int64_t c, int64_t o) {
        const Inside w = inside_of(d, p, r, c);
        const Range g = range_of(d, w, img);
        if (g.lo == g.hi) return;   // zero variance: exactly 0
        const double m = g.sum / double(tn);
        double num = 0, wss = 0, tc_in = 0;
        for_inside(d, w, img, [&](int64_t k, double v) {
            num += (v - m) * tc[size_t(k)];
            wss += (v - m) * (v - m);
            tc_in += tc[size_t(k)];
        });
        num -= m * (tc_all - tc_in);               // sum over the zeros of (0 - m)(t - tm)
        wss += double(tn - w.count()) * m * m;   // sum over the zeros of (0 - m)^2
        out[size_t(o)] = num / std::sqrt(wss * tss);
    });
    return out;
}

std::vector<bool> zero_variance(const Shape& sh, const float* img)
{
    const Dims d = dims_of(sh);
    std::vector<bool> out(size_t(d.o[0] * d.o[1] * d.o[2]));
    for_outputs(d, [&](int64_t p, int64_t r, int64_t c, int64_t o) {
        const Range g = range_of(d, inside_of(d, p, r, c), img);
        out[size_t(o)] = g.lo == g.hi;
    });
    return out;
}

double max_abs_diff(const std::vector<double>& a, const float* b)
{
    double e = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        const double d = std::fabs(a[i] - double(b[i]));
        if (!(d <= e)) e = d;   // NaN propagates as the error
    }
    return e;
}

double max_abs(const std::vector<double>& a)
{
    double m = 0;
    for (double v : a) m = std::max(m, std::fabs(v));
    return m;
}

const char* data_name(Data d)
{
    switch (d) {
    case Data::uniform: return "uniform[0,1)";
    case Data::uint8: return "uint8";
    case Data::uint16: return "uint16";
    case Data::offset: return "1e4+N(0,1)";
    case Data::ramp: return "uint16 ramp+N(0,3)";
    case Data::panels: return "constant panels";
    case Data::constant: return "constant";
    case Data::plateaus: return "plateaus 0 | 1e3, N(0,1)";
    }
    return "?";
}

std::vector<float> make_data(Data kind, const Shape& s, bool image, std::mt19937& rng)
{
    const int64_t n = image ? image_elems(s) : templ_elems(s);
    std::vector<float> v(static_cast<size_t>(n));
    std::uniform_real_distribution<double> u(0, 1);
    std::normal_distribution<double> g(0, 1);
    // Row length (fastest axis) and rows, for the ramp and the panels.
    const flcc_size e = image ? s.image : s.templ;
    const int64_t cols = s.dim == 2 ? e.w : e.d;
    const int64_t rows = s.dim == 2 ? e.h : e.w;
    for (int64_t i = 0; i < n; ++i) {
        double x = 0;
        switch (kind) {
        case Data::uniform: x = u(rng); break;
        case Data::uint8: x = std::floor(u(rng) * 256); break;
        case Data::uint16: x = std::floor(u(rng) * 65536); break;
        case Data::offset: x = 1e4 + g(rng); break;
        case Data::ramp:
            x = std::round(5000 + 50000.0 * double(i % cols) / double(std::max<int64_t>(cols - 1, 1)) +
                           3 * g(rng));
            break;
        case Data::panels: {
            // Left half one level, top of the right half another, the rest random integers:
            // many panels have zero variance, and many straddle a step.
            const int64_t c = i % cols, r = (i / cols) % rows;
            x = c < cols / 2 ? 12345.0 : r < rows / 3 ? 77.0 : std::floor(u(rng) * 1000);
            break;
        }
        case Data::constant: x = 12345.0; break;
        case Data::plateaus: x = (i % cols < cols / 2 ? 0.0 : 1e3) + g(rng); break;
        }
        v[size_t(i)] = float(x);
    }
    if ((kind == Data::panels || kind == Data::constant) && !image)
        for (auto& t : v) t = float(std::floor(u(rng) * 1000));   // a varied template
    return v;
}

}  // namespace ref
