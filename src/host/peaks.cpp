#include "host/peaks.h"

#include "host/kernels/kernel_set.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace flcc::host {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kPi = 3.14159265358979323846;

int64_t index_of(const Extent& e, int64_t q, int64_t r, int64_t c) { return (q * e[1] + r) * e[2] + c; }

// True when (q, r, c) lies at Chebyshev distance at most `radius` from p.
bool near(const MapPeak& p, int64_t q, int64_t r, int64_t c, int radius)
{
    return std::llabs(q - p.at[0]) <= radius && std::llabs(r - p.at[1]) <= radius &&
           std::llabs(c - p.at[2]) <= radius;
}

// Calls f(q, r, c, v) for every finite value of the map.
template <class F>
void for_each_finite(const float* map, const Extent& e, F&& f)
{
    for (int64_t q = 0; q < e[0]; ++q)
        for (int64_t r = 0; r < e[1]; ++r)
            for (int64_t c = 0; c < e[2]; ++c) {
                const float v = map[index_of(e, q, r, c)];
                if (std::isfinite(v)) f(q, r, c, v);
            }
}

// Offset of the vertex of the parabola through (-1, a), (0, b), (1, c); 0 unless b is a maximum
// of it.
double vertex(double a, double b, double c)
{
    const double den = a - 2.0 * b + c;
    return den >= 0 ? 0.0 : 0.5 * (a - c) / den;
}

double gaussian_vertex(double a, double b, double c)
{
    if (std::min({a, b, c}) <= 0) return vertex(a, b, c);
    return vertex(std::log(a), std::log(b), std::log(c));
}

// The three-point fit along each axis of more than one element (0 at an edge or a non-finite
// neighbour).
void three_point(const float* map, const Extent& e, MapPeak& p, bool gaussian)
{
    for (int a = 0; a < 3; ++a) {
        p.refined[a] = double(p.at[a]);
        if (p.at[a] <= 0 || p.at[a] >= e[a] - 1) continue;
        int64_t lo[3] = {p.at[0], p.at[1], p.at[2]}, hi[3] = {p.at[0], p.at[1], p.at[2]};
        --lo[a];
        ++hi[a];
        const double m = map[index_of(e, lo[0], lo[1], lo[2])];
        const double x = map[index_of(e, hi[0], hi[1], hi[2])];
        if (!std::isfinite(m) || !std::isfinite(x)) continue;
        const double v = p.value;
        p.refined[a] += gaussian ? gaussian_vertex(m, v, x) : vertex(m, v, x);
    }
}

// Solves A x = b (n x n, n <= 10) by Gaussian elimination with partial pivoting; false when
// singular.
bool solve(double A[10][10], double b[10], int n, double x[10])
{
    for (int col = 0; col < n; ++col) {
        int pivot = col;
        for (int r = col + 1; r < n; ++r)
            if (std::fabs(A[r][col]) > std::fabs(A[pivot][col])) pivot = r;
        if (std::fabs(A[pivot][col]) < 1e-300) return false;
        std::swap(A[col], A[pivot]);
        std::swap(b[col], b[pivot]);
        for (int r = col + 1; r < n; ++r) {
            const double f = A[r][col] / A[col][col];
            for (int k = col; k < n; ++k) A[r][k] -= f * A[col][k];
            b[r] -= f * b[col];
        }
    }
    for (int r = n - 1; r >= 0; --r) {
        double s = b[r];
        for (int k = r + 1; k < n; ++k) s -= A[r][k] * x[k];
        x[r] = s / A[r][r];
    }
    return true;
}

// The least-squares quadratic over the fit^dim neighbourhood of the peak: its stationary point,
// clamped to the neighbourhood, when it is a maximum.
void quadratic(const float* map, const Extent& e, MapPeak& p, int fit)
{
    const int radius = fit / 2;
    int64_t lo[3], hi[3];
    int axes[3], dims = 0;
    for (int a = 0; a < 3; ++a) {
        lo[a] = std::max<int64_t>(p.at[a] - radius, 0);
        hi[a] = std::min<int64_t>(p.at[a] + radius, e[a] - 1);
        if (e[a] > 1) {
            if (hi[a] - lo[a] + 1 < 3) return three_point(map, e, p, false);
            axes[dims++] = a;
        }
        p.refined[a] = double(p.at[a]);
    }
    if (dims == 0) return;
    // Terms: 1, x_i (dims), x_i x_j for i <= j (dims (dims + 1) / 2).
    const int n = 1 + dims + dims * (dims + 1) / 2;
    double A[10][10] = {}, b[10] = {};
    for (int64_t q = lo[0]; q <= hi[0]; ++q)
        for (int64_t r = lo[1]; r <= hi[1]; ++r)
            for (int64_t c = lo[2]; c <= hi[2]; ++c) {
                const double v = map[index_of(e, q, r, c)];
                if (!std::isfinite(v)) continue;
                const int64_t pos[3] = {q, r, c};
                double x[3], t[10];
                for (int i = 0; i < dims; ++i) x[i] = double(pos[axes[i]] - p.at[axes[i]]);
                int k = 0;
                t[k++] = 1;
                for (int i = 0; i < dims; ++i) t[k++] = x[i];
                for (int i = 0; i < dims; ++i)
                    for (int j = i; j < dims; ++j) t[k++] = x[i] * x[j];
                for (int i = 0; i < n; ++i) {
                    b[i] += t[i] * v;
                    for (int j = 0; j < n; ++j) A[i][j] += t[i] * t[j];
                }
            }
    double coef[10];
    if (!solve(A, b, n, coef)) return;
    // f = c0 + g.x + sum_{i<=j} c_ij x_i x_j: gradient g + M x with M_ii = 2 c_ii, M_ij = c_ij.
    double M[10][10] = {}, g[10] = {}, s[10];
    int k = 1 + dims;
    for (int i = 0; i < dims; ++i) {
        g[i] = -coef[1 + i];
        for (int j = i; j < dims; ++j, ++k) {
            M[i][j] += i == j ? 2 * coef[k] : coef[k];
            if (i != j) M[j][i] += coef[k];
        }
    }
    // A maximum: -M positive definite (Cholesky succeeds).
    double L[3][3] = {};
    for (int i = 0; i < dims; ++i)
        for (int j = 0; j <= i; ++j) {
            double sum = -M[i][j];
            for (int m = 0; m < j; ++m) sum -= L[i][m] * L[j][m];
            if (i == j) {
                if (sum <= 0) return;
                L[i][i] = std::sqrt(sum);
            } else {
                L[i][j] = sum / L[j][j];
            }
        }
    if (!solve(M, g, dims, s)) return;
    for (int i = 0; i < dims; ++i)
        p.refined[axes[i]] = double(p.at[axes[i]]) + std::clamp(s[i], -double(radius), double(radius));
}

// The upsampled grid along each axis: G[a] points at offsets (first[a] + g) / upsample.
struct Grid {
    int64_t G[3], first[3];
    Grid(const Extent& e, int upsample)
    {
        const int64_t reach = (3 * int64_t(upsample) + 3) / 4;   // ceil(0.75 upsample)
        for (int a = 0; a < 3; ++a) {
            G[a] = e[a] > 1 ? 2 * reach + 1 : 1;
            first[a] = e[a] > 1 ? -reach : 0;
        }
    }
};

// The DFT interpolation on the grid around `at` (peaks.h), into values[(g0 G1 + g1) G2 + g2].
// Scratch layout: the transposed kernel matrices KT_a[n * G_a + g] = K_N(at_a + offset_g - n)
// per axis, then A[(q * N1 + r) * G2 + g2] (the columns contracted) and B[q * G2 + g2] (then the
// rows, for one g1). Every contraction is an axpy along g2, which vectorises.
void grid_values(const float* map, const Extent& e, const int64_t at[3], int upsample,
                 double* scratch, double* values, bool reuse_kernels = false)
{
    const Grid grid(e, upsample);
    const int64_t* G = grid.G;
    double* KT[3];
    double* next = scratch;
    for (int a = 2; a >= 0; --a) {
        KT[a] = next;
        // The columns' kernel is stored g-major (K2[g * N2 + c]): the contraction of a row is
        // then G2 dot products along the row, which vectorise; the others are n-major.
        for (int64_t n = 0; n < e[a] && !reuse_kernels; ++n)
            for (int64_t g = 0; g < G[a]; ++g)
                KT[a][a == 2 ? g * e[a] + n : n * G[a] + g] =
                    dft_kernel(e[a], double(at[a] - n) + double(grid.first[a] + g) / upsample);
        next += e[a] * G[a];
    }
    double* A = next;
    double* B = A + e[0] * e[1] * G[2];

    for (int64_t qr = 0; qr < e[0] * e[1]; ++qr) {
        double* __restrict a = A + qr * G[2];
        const float* __restrict row = map + qr * e[2];
        bool finite = true;
        for (int64_t c = 0; c < e[2]; ++c) finite &= std::isfinite(row[c]);
        for (int64_t g = 0; g < G[2]; ++g) {
            const double* __restrict k = KT[2] + g * e[2];
            double sum = 0;
            if (finite) {
                // Eight partial sums, so that the dot product vectorises.
                double part[8] = {0, 0, 0, 0, 0, 0, 0, 0};
                int64_t c = 0;
                for (; c + 8 <= e[2]; c += 8)
                    for (int i = 0; i < 8; ++i) part[i] += double(row[c + i]) * k[c + i];
                for (; c < e[2]; ++c) sum += double(row[c]) * k[c];
                for (int i = 0; i < 8; ++i) sum += part[i];
            } else {   // non-finite values count as 0
                for (int64_t c = 0; c < e[2]; ++c)
                    if (std::isfinite(row[c])) sum += double(row[c]) * k[c];
            }
            a[g] = sum;
        }
    }
    for (int64_t g1 = 0; g1 < G[1]; ++g1) {
        for (int64_t q = 0; q < e[0]; ++q) {
            double* __restrict b = B + q * G[2];
            std::fill(b, b + G[2], 0.0);
            for (int64_t r = 0; r < e[1]; ++r) {
                const double w = KT[1][r * G[1] + g1];
                if (w == 0) continue;
                const double* __restrict a = A + (q * e[1] + r) * G[2];
                for (int64_t g = 0; g < G[2]; ++g) b[g] += w * a[g];
            }
        }
        for (int64_t g0 = 0; g0 < G[0]; ++g0) {
            double* __restrict c = values + (g0 * G[1] + g1) * G[2];
            std::fill(c, c + G[2], 0.0);
            for (int64_t q = 0; q < e[0]; ++q) {
                const double w = KT[0][q * G[0] + g0];
                if (w == 0) continue;
                const double* __restrict b = B + q * G[2];
                for (int64_t g = 0; g < G[2]; ++g) c[g] += w * b[g];
            }
        }
    }
}

// The doubles grid_values needs besides the values.
int64_t grid_scratch_doubles(const Extent& e, const Grid& grid)
{
    const int64_t* G = grid.G;
    return e[0] * G[0] + e[1] * G[1] + e[2] * G[2] + e[0] * e[1] * G[2] + e[0] * G[2];
}

// The maximum of the DFT interpolation on the grid around p (peaks.h).
void upsampled(const float* map, const Extent& e, MapPeak& p, const PeakSearch& s)
{
    for (int a = 0; a < 3; ++a) p.refined[a] = double(p.at[a]);
    const int upsample = std::max(s.upsample, 1);
    if (s.scratch == nullptr || s.scratch_doubles < upsample_scratch_doubles(e, upsample)) return;
    const Grid grid(e, upsample);
    double* values = s.scratch + grid_scratch_doubles(e, grid);
    grid_values(map, e, p.at, upsample, s.scratch, values);
    const int64_t j = upsampled_grid_argmax(grid_shape(e, upsample), values);
    for (int a = 0; a < 3; ++a) p.refined[a] = double(p.at[a]) + double(grid_offset(grid_shape(e, upsample), j, a)) / upsample;
}

// The highest finite value outside `radius` of p, and the mean and deviation of those values.
void sidelobe(const float* map, const Extent& e, MapPeak& p, int radius)
{
    const KernelSet& ks = select_kernel_set();
    FiniteMoments m;
    for (int64_t q = 0; q < e[0]; ++q)
        for (int64_t r = 0; r < e[1]; ++r) {
            const float* row = map + index_of(e, q, r, 0);
            // The columns near the peak, on rows near it, are left out.
            if (std::llabs(q - p.at[0]) > radius || std::llabs(r - p.at[1]) > radius) {
                ks.finite_moments(row, e[2], m);
                continue;
            }
            const int64_t c0 = std::clamp<int64_t>(p.at[2] - radius, 0, e[2]);
            const int64_t c1 = std::clamp<int64_t>(p.at[2] + radius + 1, 0, e[2]);
            ks.finite_moments(row, c0, m);
            ks.finite_moments(row + c1, e[2] - c1, m);
        }
    p.quality = float(m.count == 0 || m.top <= 0 ? kInf : p.value / m.top);
    if (m.count == 0) {
        p.psr = 0;
        return;
    }
    const double mean = m.sum / double(m.count);
    const double var = std::max(0.0, m.sum2 / double(m.count) - mean * mean);
    p.psr = var > 0 ? float((p.value - mean) / std::sqrt(var)) : 0.f;
}

// The lowest and highest finite values of the map, and the position of the first highest one
// (row-major), in one pass.
struct Extremes {
    float lowest = std::numeric_limits<float>::infinity();
    float highest = -std::numeric_limits<float>::infinity();
    int64_t first = -1;   // index of the first highest value
};

Extremes extremes(const float* map, const Extent& e)
{
    Extremes x;
    const KernelSet& ks = select_kernel_set();
    const int64_t rows = e[0] * e[1], n = e[2];
    for (int64_t row = 0; row < rows; ++row) {
        const float* v = map + row * n;
        float top = -std::numeric_limits<float>::infinity();
        ks.finite_extent(v, n, x.lowest, top);
        if (top > x.highest) {   // a new highest value: its first column in this row
            x.highest = top;
            int64_t k = 0;
            while (v[k] != top) ++k;
            x.first = row * n + k;
        }
    }
    return x;
}

}  // namespace

int64_t upsample_scratch_doubles(const Extent& e, int upsample)
{
    const Grid grid(e, std::max(upsample, 1));
    return grid_scratch_doubles(e, grid) + grid.G[0] * grid.G[1] * grid.G[2];
}

UpsampledGrid grid_shape(const Extent& e, int upsample)
{
    const Grid grid(e, std::max(upsample, 1));
    UpsampledGrid g;
    for (int a = 0; a < 3; ++a) {
        g.G[a] = grid.G[a];
        g.first[a] = grid.first[a];
    }
    return g;
}

int64_t grid_offset(const UpsampledGrid& g, int64_t index, int axis)
{
    const int64_t pos[3] = {index / (g.G[1] * g.G[2]), index / g.G[2] % g.G[1], index % g.G[2]};
    return g.first[axis] + pos[axis];
}

bool upsampled_values(const float* map, const Extent& e, const int64_t at[3], int upsample,
                      double* scratch, int64_t scratch_doubles, double* values, bool reuse_kernels)
{
    upsample = std::max(upsample, 1);
    const Grid grid(e, upsample);
    if (scratch == nullptr || scratch_doubles < grid_scratch_doubles(e, grid)) return false;
    grid_values(map, e, at, upsample, scratch, values, reuse_kernels);
    return true;
}

int64_t upsampled_grid_argmax(const UpsampledGrid& g, const double* values)
{
    double best = -kInf;
    int64_t best_d2 = 0, best_j[3] = {0, 0, 0}, best_index = 0;
    for (int64_t i = 0; i < g.G[0] * g.G[1] * g.G[2]; ++i) {
        const int64_t j[3] = {grid_offset(g, i, 0), grid_offset(g, i, 1), grid_offset(g, i, 2)};
        const int64_t d2 = j[0] * j[0] + j[1] * j[1] + j[2] * j[2];
        // Ties: nearer the integer peak, then first in (plane, row, column) order.
        const bool first = std::lexicographical_compare(j, j + 3, best_j, best_j + 3);
        const bool wins = values[i] > best ||
                          (values[i] == best && (d2 < best_d2 || (d2 == best_d2 && first)));
        if (!wins) continue;
        best = values[i];
        best_d2 = d2;
        std::copy(j, j + 3, best_j);
        best_index = i;
    }
    return best_index;
}

double dft_kernel(int64_t n, double x)
{
    const double N = double(n);
    const double r = x - N * std::round(x / N);   // K_n has period n
    if (r == std::floor(r)) return r == 0 ? 1.0 : 0.0;
    const double s = std::sin(kPi * r), t = kPi * r / N;
    return n % 2 != 0 ? s / (N * std::sin(t)) : s * std::cos(t) / (N * std::sin(t));
}

void refine_peak(const float* map, const Extent& e, const PeakSearch& s, MapPeak& p)
{
    switch (s.refine) {
    case Refine::none:
    case Refine::upsampled:
        for (int a = 0; a < 3; ++a) p.refined[a] = double(p.at[a]);
        break;
    case Refine::parabolic: three_point(map, e, p, false); break;
    case Refine::gaussian: three_point(map, e, p, true); break;
    case Refine::quadratic: quadratic(map, e, p, s.fit); break;
    }
}

void find_peaks(const float* map, const Extent& e, const PeakSearch& s, MapPeak* out)
{
    const int k = s.k;
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (int j = 0; j < k; ++j) out[j] = {nan, {-1, -1, -1}, {-1, -1, -1}, nan, nan};
    if (k < 1) return;
    const Extremes x = extremes(map, e);
    const float lowest = x.lowest, highest = x.highest;
    if (!(lowest < highest)) {   // flat: every finite value equal, or none
        const int64_t* f = s.flat_at;
        out[0] = {std::isfinite(highest) ? highest : nan, {f[0], f[1], f[2]},
                  {double(f[0]), double(f[1]), double(f[2])}, 0.f, 0.f};
        return;
    }
    for (int j = 0; j < k; ++j) {
        MapPeak& p = out[j];
        bool found = false;
        if (j == 0) {   // the first highest value (no peak excludes it)
            p.value = highest;
            p.at[0] = x.first / (e[1] * e[2]);
            p.at[1] = x.first / e[2] % e[1];
            p.at[2] = x.first % e[2];
            found = true;
        } else {
            for_each_finite(map, e, [&](int64_t q, int64_t r, int64_t c, float v) {
                if (found && v <= p.value) return;
                for (int i = 0; i < j; ++i)
                    if (near(out[i], q, r, c, s.exclusion)) return;
                p.value = v;
                p.at[0] = q;
                p.at[1] = r;
                p.at[2] = c;
                found = true;
            });
        }
        if (!found) return;
        if (s.refine == Refine::upsampled)
            upsampled(map, e, p, s);
        else
            refine_peak(map, e, s, p);
        sidelobe(map, e, p, s.exclusion);
    }
}

}  // namespace flcc::host
