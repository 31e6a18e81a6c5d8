#include "plan/template.h"

#include <cmath>

namespace flcc {

bool template_is_constant(const float* t, int64_t n)
{
    for (int64_t i = 1; i < n; ++i)
        if (t[i] != t[0]) return false;
    return true;
}

bool all_finite(const float* t, int64_t n)
{
    for (int64_t i = 0; i < n; ++i)
        if (!std::isfinite(t[i])) return false;
    return true;
}

void normalised_template(const float* t, int64_t n, bool constant, float* out)
{
    if (constant) {
        for (int64_t i = 0; i < n; ++i) out[i] = 0;
        return;
    }
    // Two passes in double: the mean, then the centred norm. Scaling by the largest magnitude
    // first keeps the squares finite for values near FLT_MAX.
    double big = 0;
    for (int64_t i = 0; i < n; ++i) big = std::fmax(big, std::fabs(double(t[i])));
    const double scale = 1.0 / big;
    double mean = 0;
    for (int64_t i = 0; i < n; ++i) mean += double(t[i]) * scale;
    mean /= double(n);
    double norm2 = 0;
    for (int64_t i = 0; i < n; ++i) {
        const double d = double(t[i]) * scale - mean;
        norm2 += d * d;
    }
    const double inv = norm2 > 0 ? 1.0 / std::sqrt(norm2) : 0.0;
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>((double(t[i]) * scale - mean) * inv);
}

void flipped_template(const float* t, int64_t n, float* out)
{
    for (int64_t i = 0; i < n; ++i) out[i] = t[n - 1 - i];
}

void prepare_template(bool lcorr, const float* t, int64_t n, bool constant, float* out)
{
    if (lcorr)
        normalised_template(t, n, constant, out);
    else
        flipped_template(t, n, out);
}

}  // namespace flcc
