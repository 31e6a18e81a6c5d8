#include "host/fourier_accuracy.h"

#include <algorithm>
#include <cmath>

namespace flcc::host {

namespace {

// The background's column means use every kColumnStride-th row.
constexpr int64_t kColumnStride = 4;

// |dN| <= kFftError u sqrt(log2 V) rms(box): twice the constant the worst data classes (flat
// panels by a step, few image values by the padding) need, for margin.
constexpr double kFftError = 4;
// Coefficients whose predicted error exceeds this are recomputed (the contract allows 1e-5).
constexpr double kTargetError = 1e-6;

// r of the window of output o (frame coordinates) directly from the original image, in double
// and around the window's own mean, so that neither the tile's centring nor the transform's
// rounding reach it: N = sum (v - mean) t', D = sum (v - mean)^2 over the window, padding (0)
// included analytically. taps: the normalised template.
float direct_lcc(const Problem& p, const float* frame, const float* taps, double tap_sum,
                 const Extent& o)
{
    const Extent& tp = p.templ;
    int64_t start[3], lo[3], hi[3];
    for (int a = 0; a < 3; ++a) {
        start[a] = o[a] - p.pad[a];   // image index of tap 0
        lo[a] = std::max<int64_t>(0, -start[a]);
        hi[a] = std::min(tp[a], p.image[a] - start[a]);
        if (hi[a] <= lo[a]) return 0.0f;   // all padding: constant
    }
    const auto row = [&](int64_t a, int64_t i) {
        return frame + ((start[0] + a) * p.image[1] + start[1] + i) * p.image[2] + start[2];
    };
    double sum = 0, count = 0;
    for (int64_t a = lo[0]; a < hi[0]; ++a)
        for (int64_t i = lo[1]; i < hi[1]; ++i) {
            const float* v = row(a, i);
            for (int64_t j = lo[2]; j < hi[2]; ++j) sum += v[j];
            count += double(hi[2] - lo[2]);
        }
    const double n = double(volume(tp)), mean = sum / n;
    double num = 0, d = 0, off = 0, t_real = 0;
    for (int64_t a = lo[0]; a < hi[0]; ++a)
        for (int64_t i = lo[1]; i < hi[1]; ++i) {
            const float* v = row(a, i);
            const float* w = taps + (a * tp[1] + i) * tp[2];
            for (int64_t j = lo[2]; j < hi[2]; ++j) {
                const double x = double(v[j]) - mean;
                num += x * double(w[j]);
                d += x * x;
                off += x;
                t_real += w[j];
            }
        }
    const double pad = n - count;
    num -= mean * (tap_sum - t_real);   // the padding's (0 - mean) t'
    d += pad * mean * mean;
    off -= pad * mean;
    d -= off * off / n;               // the rounding of the mean
    if (!(d > 0)) return 0.0f;
    return float(std::clamp(num / std::sqrt(d), -1.0, 1.0));
}

}  // namespace

void make_zero_sum(float* taps, int64_t n)
{
    for (int pass = 0; pass < 8; ++pass) {
        double s = 0, err = 0;   // Neumaier's compensated sum
        for (int64_t j = 0; j < n; ++j) {
            const double y = taps[j], t = s + y;
            err += std::fabs(s) >= std::fabs(y) ? (s - t) + y : (y - t) + s;
            s = t;
        }
        s += err;
        if (s == 0) return;
        // The smallest tap at least as large as the residual: its rounding error is smallest.
        int64_t k = -1;
        for (int64_t j = 0; j < n; ++j)
            if (std::fabs(taps[j]) >= std::fabs(s) &&
                (k < 0 || std::fabs(taps[j]) < std::fabs(taps[k])))
                k = j;
        if (k < 0) return;
        const float moved = float(double(taps[k]) - s);
        if (moved == taps[k]) return;
        taps[k] = moved;
    }
}

void TemplateMarginals::compute(const float* taps, const Extent& t)
{
    for (int a = 0; a < 3; ++a) marg[a].assign(size_t(t[a]), 0.0);
    total = 0;
    for (int64_t a = 0; a < t[0]; ++a)
        for (int64_t i = 0; i < t[1]; ++i)
            for (int64_t j = 0; j < t[2]; ++j) {
                const double w = taps[(a * t[1] + i) * t[2] + j];
                marg[0][size_t(a)] += w;
                marg[1][size_t(i)] += w;
                marg[2][size_t(j)] += w;
                total += w;
            }
}

Background::Background(const Extent& max_box, const KernelSet& ks) : ks_(ks), col_sums_(max_box[2])
{
    sums_[0].resize(size_t(max_box[0]));
    sums_[1].resize(size_t(max_box[1]));
    for (int a = 0; a < 3; ++a) {
        effect_[a].resize(size_t(max_box[a]));
        along_[a].resize(size_t(max_box[a]));
    }
}

void Background::begin(const Extent& box)
{
    box_ = box;
    energy_ = 0;
    std::fill(sums_[0].begin(), sums_[0].begin() + box[0], 0.0);
    std::fill(sums_[1].begin(), sums_[1].begin() + box[1], 0.0);
    std::fill(col_sums_.data(), col_sums_.data() + box[2], 0.0f);
}

void Background::copy_row(float* __restrict dst, const float* __restrict src, int64_t a, int64_t i)
{
    // Float suffices: the background need not be exact, only known exactly, and the energy is
    // an estimate. The column means come from every kColumnStride-th row (of each plane), which
    // is plenty for a background.
    const int64_t n = box_[2];
    if (i % kColumnStride == 0) {
        float* __restrict cols = col_sums_.data();
        for (int64_t c = 0; c < n; ++c) cols[c] += src[c];
    }
    float sum = 0, squares = 0;
    ks_.copy_moments(dst, src, n, sum, squares);
    sums_[0][size_t(a)] += sum;
    sums_[1][size_t(i)] += sum;
    energy_ += squares;
}

bool Background::fit()
{
    const double e0 = double(box_[0]), e1 = double(box_[1]), e2 = double(box_[2]);
    const double v = e0 * e1 * e2;
    double total = 0;
    for (int64_t a = 0; a < box_[0]; ++a) total += sums_[0][size_t(a)];
    const double mean = total / v;
    // The effects (plane, row, column means less the mean) are orthogonal on the grid.
    const double sampled_rows = double((box_[1] + kColumnStride - 1) / kColumnStride);
    const double count[3] = {e1 * e2, e0 * e2, e0 * e1};
    const double col_count = e0 * sampled_rows;
    double fitted = v * mean * mean, bound = std::fabs(mean);
    for (int a = 0; a < 3; ++a) {
        double squares = 0, big = 0;
        for (int64_t k = 0; k < box_[a]; ++k) {
            const double d = a < 2 ? sums_[a][size_t(k)] / count[a] - mean
                                   : double(col_sums_.data()[k]) / col_count - mean;
            along_[a][size_t(k)] = d;   // staging, before the grid
            squares += d * d;
            big = std::max(big, std::fabs(d));
        }
        fitted += count[a] * squares;
        bound += big;
    }
    // Worth a pass when it removes at least half of the energy (the error goes with its root).
    if (!(fitted > 0.5 * energy_) || !std::isfinite(bound) || !(bound > 0)) return false;
    const int k = std::ilogb(bound) - 22;   // terms below 2^23 units; any sum below 2^24
    if (k < -120) return false;             // keeps the grid's floats normal
    const auto grid = [k](double x) {
        return float(std::ldexp(std::nearbyint(std::ldexp(x, -k)), k));
    };
    mean_ = grid(mean);
    for (int a = 0; a < 3; ++a)
        for (int64_t j = 0; j < box_[a]; ++j) effect_[a][size_t(j)] = grid(along_[a][size_t(j)]);
    return true;
}

double Background::subtract(float* real, const Extent& n) const
{
    const float* e2 = effect_[2].data();
    double energy = 0;
    for (int64_t a = 0; a < box_[0]; ++a)
        for (int64_t i = 0; i < box_[1]; ++i) {
            float* __restrict row = real + (a * n[1] + i) * n[2];
            const float base = mean_ + effect_[0][size_t(a)] + effect_[1][size_t(i)];   // exact
            float pq[16] = {};
            int64_t c = 0;
            for (; c + 16 <= box_[2]; c += 16)
                for (int l = 0; l < 16; ++l) {
                    const float y = row[c + l] - (base + e2[c + l]);
                    row[c + l] = y;
                    pq[l] += y * y;
                }
            double squares = 0;
            for (; c < box_[2]; ++c) {
                row[c] -= base + e2[c];
                squares += double(row[c]) * double(row[c]);
            }
            for (float q : pq) squares += q;
            energy += squares;
        }
    return energy;
}

void Background::correlate(const TemplateMarginals& t, const Extent& out)
{
    constant_ = double(mean_) * t.total;
    for (int a = 0; a < 3; ++a) {
        const std::vector<double>& m = t.marg[a];
        const float* e = effect_[a].data();
        for (int64_t o = 0; o < out[a]; ++o) {
            double s = 0;
            for (size_t j = 0; j < m.size(); ++j) s += double(e[o + int64_t(j)]) * m[j];
            along_[a][size_t(o)] = s;
        }
    }
}

double fft_error_bound(double energy, int64_t box_volume, int64_t fft_volume)
{
    const double log2v = std::log2(double(std::max<int64_t>(fft_volume, 2)));
    const double v = double(std::max<int64_t>(box_volume, 1));
    return kFftError * 0x1p-24 * std::sqrt(log2v * energy / v);
}

double zero_numerator_limit(double bound)
{
    if (!(bound > 0)) return 0;
    const double root = bound / kTargetError;
    return root * root;
}

void check_lcc_tile(const Problem& p, const TileView& t, const float* numerator, int64_t num_row,
                    int64_t num_plane, double bound, const float* taps, double tap_sum,
                    const float* frame, float* out_frame)
{
    if (!(bound > 0)) return;
    const float e = float(bound), k = float(kTargetError);
    for (int64_t q = 0; q < t.planes; ++q)
        for (int64_t r = 0; r < t.real_rows; ++r) {
            const float* n = numerator + q * num_plane + r * num_row;
            float* o = out_frame +
                       ((t.origin[0] + q) * p.out[1] + t.origin[1] + r) * p.out[2] + t.origin[2];
            // Suspect: sqrt(D) = |N / r| < E / kTargetError (outputs of zero variance, r == 0,
            // pass). A branch-free scan first, so that it vectorises; suspects are rare.
            int suspects = 0;
            for (int64_t c = 0; c < t.real_cols; ++c)
                suspects |= std::fabs(n[c]) * k < e * std::fabs(o[c]);
            if (suspects == 0) continue;
            for (int64_t c = 0; c < t.real_cols; ++c)
                if (std::fabs(n[c]) * k < e * std::fabs(o[c]))
                    o[c] = direct_lcc(p, frame, taps, tap_sum,
                                      {t.origin[0] + q, t.origin[1] + r, t.origin[2] + c});
        }
}

}  // namespace flcc::host
