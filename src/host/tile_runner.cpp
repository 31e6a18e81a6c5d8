#include "host/tile_runner.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>

namespace flcc::host {

template <class T>
AlignedArray<T>::AlignedArray(int64_t n) : n_(n)
{
    if (n <= 0) return;
    const size_t bytes = (static_cast<size_t>(n) * sizeof(T) + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, bytes);
    if (p == nullptr) throw std::bad_alloc();
    std::memset(p, 0, bytes);
    p_.reset(static_cast<T*>(p));
}

template <class T>
void AlignedArray<T>::Free::operator()(T* p) const
{
    std::free(p);
}

template class AlignedArray<float>;
template class AlignedArray<double>;

namespace {

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

}  // namespace

TileRunner::TileRunner(const Problem& p, const KernelSet& ks, Extent tile) : p_(p), ks_(ks)
{
    TileLayout& l = layout_;
    for (int a = 0; a < 3; ++a) {
        l.out[a] = std::max<int64_t>(1, std::min(tile[a], p.out[a]));
        // Output o's window covers image [o - pad, o - pad + T - 1]: inside for o in
        // [pad, S - T + pad]. Cut boundary and interior runs separately into tiles.
        const int64_t lo = std::min(p.pad[a], p.out[a]);
        const int64_t hi = std::max(lo, std::min(p.out[a], p.image[a] - p.templ[a] + p.pad[a] + 1));
        const auto cut = [&](int64_t b, int64_t e, bool boundary) {
            for (int64_t s = b; s < e; s += l.out[a])
                l.segments[a].push_back({s, std::min(l.out[a], e - s), boundary});
        };
        cut(0, lo, true);
        cut(lo, hi, false);
        cut(hi, p.out[a], true);
    }
    l.padded = {l.out[0], round_up(l.out[1], ks.row_multiple), round_up(l.out[2], ks.block_cols)};
    l.in = {l.out[0] + p.templ[0] - 1, l.padded[1] + p.templ[1] - 1,
            l.padded[2] + p.templ[2] - 1};
    // Room for whole-vector reads past the last column (window sums, statistics).
    l.in_row = round_up(l.in[2], 16) + 16;
    l.in_plane = l.in_row * l.in[1];
    l.num_row = l.padded[2];
    l.num_plane = l.num_row * l.padded[1];
}

TileScratch TileRunner::make_scratch() const
{
    const TileLayout& l = layout_;
    TileScratch s;
    s.x = AlignedArray<float>(l.in_plane * l.in[0]);
    s.num = AlignedArray<float>(l.num_plane * l.padded[0]);
    if (p_.op == Op::lcorr) {
        const int64_t row = l.in_row + 64;
        if (p_.templ[0] > 1) {
            s.z1 = AlignedArray<double>(row * l.in[1]);
            s.z2 = AlignedArray<double>(row * l.in[1]);
        }
        s.v1 = AlignedArray<double>(row);
        s.v2 = AlignedArray<double>(row);
        s.q1 = AlignedArray<double>(row);
        s.q2 = AlignedArray<double>(row);
    }
    return s;
}

int64_t TileRunner::scratch_bytes() const
{
    const TileLayout& l = layout_;
    int64_t b = 4 * (l.in_plane * l.in[0] + l.num_plane * l.padded[0]);
    if (p_.op == Op::lcorr) b += 8 * (l.in_row + 64) * (4 + (p_.templ[0] > 1 ? 2 * l.in[1] : 0));
    return b;
}

TileRunner::Box TileRunner::box_of(int64_t index) const
{
    const TileLayout& l = layout_;
    Box b;
    const int64_t n1 = int64_t(l.segments[1].size()), n2 = int64_t(l.segments[2].size());
    const int64_t t[3] = {index / (n1 * n2), (index / n2) % n1, index % n2};
    b.boundary = false;
    for (int a = 0; a < 3; ++a) {
        const Segment& s = l.segments[a][size_t(t[a])];
        b.origin[a] = s.start;
        b.real[a] = s.length;
        b.boundary = b.boundary || s.boundary;
    }
    return b;
}

bool TileRunner::gather(const float* frame, const Box& b, float* x, TileStats& st,
                        bool& has_pad) const
{
    const TileLayout& l = layout_;
    const int64_t planes = b.real[0] + p_.templ[0] - 1;
    const int64_t rows = l.in[1];
    const int64_t cols = l.in[2];
    const int64_t p0 = b.origin[0] - p_.pad[0];
    const int64_t r0 = b.origin[1] - p_.pad[1];
    const int64_t c0 = b.origin[2] - p_.pad[2];
    const int64_t cb = std::max<int64_t>(0, c0), ce = std::min(p_.image[2], c0 + cols);
    has_pad = c0 < 0 || c0 + cols > p_.image[2];
    for (int64_t a = 0; a < planes; ++a) {
        const int64_t ip = p0 + a;
        for (int64_t i = 0; i < rows; ++i) {
            float* dst = x + a * l.in_plane + i * l.in_row;
            const int64_t ir = r0 + i;
            if (ip < 0 || ip >= p_.image[0] || ir < 0 || ir >= p_.image[1] || ce <= cb) {
                std::memset(dst, 0, sizeof(float) * l.in_row);
                has_pad = true;
                continue;
            }
            const float* src = frame + (ip * p_.image[1] + ir) * p_.image[2];
            std::memset(dst, 0, sizeof(float) * (cb - c0));
            ks_.copy_stats(dst + (cb - c0), src + cb, ce - cb, st);
            std::memset(dst + (ce - c0), 0, sizeof(float) * (l.in_row - (ce - c0)));
        }
    }
    return std::isfinite(st.sum);
}

// A bound F on the rounding error of the window sums, in units of u * (largest term): the
// running plane sums (3D), the running column sums, the prefix scan and the final difference,
// each bounded by (operations along its path) x (largest partial sum), doubled for safety.
double TileRunner::guard_factor(const Box& b) const
{
    const TileLayout& l = layout_;
    const double t0 = double(p_.templ[0]), t1 = double(p_.templ[1]), t2 = double(p_.templ[2]);
    const double planes = double(b.real[0]), rows = double(l.padded[1]);
    const double len = double(l.in[2]) + 16;   // prefix scan length
    const double ez = t0 > 1 ? t0 * t0 + 2 * planes * (t0 + 1) : 0;
    const double ev = (t1 + 2 * rows) * ez + t0 * (t1 * t1 + 2 * rows * (t1 + 1));
    const double eq = len * ev + len * len * t0 * t1;
    return 2 * (2 * eq + t0 * t1 * t2);
}

bool TileRunner::run(const float* frame, float* out_frame, int64_t index, TileScratch& s,
                     Numerator& numerator, int thread) const
{
    const TileLayout& l = layout_;
    const Box b = box_of(index);
    float* x = s.x.data();
    TileStats st;
    bool has_pad = false;
    if (!gather(frame, b, x, st, has_pad) && p_.check_finite) return false;

    const int64_t in_planes = b.real[0] + p_.templ[0] - 1;
    const bool lcorr = p_.op == Op::lcorr;
    double tau_abs = -1;   // exact mode unless set below
    if (lcorr) {
        double c = st.count > 0 && !b.boundary ? st.sum / double(st.count) : 0.0;
        if (!std::isfinite(c)) c = 0;   // unchecked non-finite input: garbage, but no trap
        if (st.integral) c = std::nearbyint(c);
        double m = std::max(std::fabs(double(st.vmax) - c), std::fabs(double(st.vmin) - c));
        if (has_pad) m = std::max(m, std::fabs(c));
        double scale = 1;
        if (m > 0x1p60 || (m > 0 && m < 0x1p-60)) {
            scale = std::ldexp(1.0, -std::ilogb(m));
            m *= scale;
        }
        ks_.centre(x, l.in_plane * in_planes, c, scale);

        const double n = double(volume(p_.templ));
        const double len = double(l.in[2]) + 16;
        const double biggest_partial = len * double(p_.templ[0] * p_.templ[1]) * m * m;
        const bool exact = st.integral && scale == 1 && m < 0x1p24 && biggest_partial <= 0x1p52;
        if (!exact) {
            const double f = guard_factor(b), u = 0x1p-53;
            tau_abs = (3.5 * n * f * u + f * f * u * u) * m * m;
        }
    }

    TileView v;
    v.x = x;
    v.x_row = l.in_row;
    v.x_plane = l.in_plane;
    v.num = s.num.data();
    v.num_row = l.num_row;
    v.num_plane = l.num_plane;
    v.planes = b.real[0];
    v.rows = (b.real[1] + ks_.row_multiple - 1) / ks_.row_multiple * ks_.row_multiple;
    v.cols = (b.real[2] + ks_.block_cols - 1) / ks_.block_cols * ks_.block_cols;
    v.real_rows = b.real[1];
    v.real_cols = b.real[2];
    numerator.compute(v, thread);

    for (int64_t q = 0; q < b.real[0]; ++q) {
        float* num = s.num.data() + q * l.num_plane;
        if (lcorr) {
            LccPlaneArgs a;
            a.x = x + q * l.in_plane;
            a.x_row = l.in_row;
            a.x_plane = l.in_plane;
            if (p_.templ[0] > 1) {
                const int64_t zr = l.in_row + 64;
                if (q == 0)
                    ks_.plane_sums_init(x, l.in_row, l.in_plane, p_.templ[0], l.in[1], l.in_row,
                                        s.z1.data(), s.z2.data(), zr);
                else
                    ks_.plane_sums_advance(x, l.in_row, l.in_plane, p_.templ[0], q - 1, l.in[1],
                                           l.in_row, s.z1.data(), s.z2.data(), zr);
                a.z1 = s.z1.data();
                a.z2 = s.z2.data();
                a.z_row = zr;
            }
            a.num = num;
            a.num_row = l.num_row;
            a.rows = b.real[1];
            a.cols = b.real[2];
            a.t1 = p_.templ[1];
            a.t2 = p_.templ[2];
            a.n = double(volume(p_.templ));
            a.tau_abs = tau_abs;
            a.v1 = s.v1.data();
            a.v2 = s.v2.data();
            a.q1 = s.q1.data();
            a.q2 = s.q2.data();
            ks_.lcc_plane(a);
        }
        float* dst = out_frame +
                     ((b.origin[0] + q) * p_.out[1] + b.origin[1]) * p_.out[2] + b.origin[2];
        for (int64_t r = 0; r < b.real[1]; ++r)
            std::memcpy(dst + r * p_.out[2], num + r * l.num_row, sizeof(float) * b.real[2]);
    }
    return true;
}

}  // namespace flcc::host
