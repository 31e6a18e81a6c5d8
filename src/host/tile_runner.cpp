#include "host/tile_runner.h"

#include "geometry/guard.h"
#include "geometry/interior.h"
#include "plan/template.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#include <sys/mman.h>

namespace flcc::host {

namespace {
constexpr size_t kArrayAlign = 64;
constexpr size_t kMapAtLeast = size_t(1) << 18;   // bytes; below, calloc's zeroing is cheap
}  // namespace

template <class T>
AlignedArray<T>::AlignedArray(int64_t n) : n_(n)
{
    if (n <= 0) return;
    // Whole 64-byte blocks (vector loops may read to the end of the last one).
    const size_t bytes = (static_cast<size_t>(n) * sizeof(T) + kArrayAlign - 1) / kArrayAlign *
                         kArrayAlign;
    if (bytes >= kMapAtLeast) {
        void* block = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                           -1, 0);
        if (block == MAP_FAILED) throw std::bad_alloc();
        p_ = std::unique_ptr<T, Free>(static_cast<T*>(block), Free{block, bytes});   // page-aligned
        return;
    }
    void* block = std::calloc(1, bytes + kArrayAlign);
    if (block == nullptr) throw std::bad_alloc();
    const auto address = reinterpret_cast<std::uintptr_t>(block);
    p_ = std::unique_ptr<T, Free>(
        reinterpret_cast<T*>((address + kArrayAlign - 1) / kArrayAlign * kArrayAlign), Free{block, 0});
}

template <class T>
void AlignedArray<T>::Free::operator()(T*) const
{
    if (mapped_bytes != 0)
        munmap(block, mapped_bytes);
    else
        std::free(block);
}

template class AlignedArray<float>;
template class AlignedArray<double>;

namespace {

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

constexpr int64_t kPrefetchRows = 4;

}  // namespace

TileRunner::TileRunner(const Problem& p, const KernelSet& ks, Extent tile, int row_multiple,
                       int col_multiple, bool in_place)
    : p_(p), ks_(ks), row_multiple_(row_multiple), col_multiple_(col_multiple),
      in_place_(in_place && p.op == Op::conv)
{
    TileLayout& l = layout_;
    const int multiple[3] = {1, row_multiple, col_multiple};
    for (int a = 0; a < 3; ++a) {
        l.out[a] = std::max<int64_t>(1, std::min(tile[a], p.out[a]));
        // Boundary and interior runs (geometry/interior.h) are cut into tiles separately.
        const geometry::Interior in = geometry::axis_interior(p.image[a], p.templ[a], p.out[a], p.pad[a]);
        const int64_t lo = in.lo, hi = in.hi;
        const auto cut = [&](int64_t b, int64_t e, bool boundary) {
            for (int64_t s = b; s < e; s += l.out[a])
                l.segments[a].push_back({s, std::min(l.out[a], e - s), boundary});
        };
        if (in_place_) {
            // Interior tiles of whole multiples run in place; the gathered tiles around them
            // take the rest: the near boundary widened to one whole multiple, and the far one
            // with the interior's remainder (no gathered tile is mostly discarded padding).
            const int64_t m = multiple[a];
            const int64_t b0 = lo > 0 ? std::min(hi, std::max<int64_t>(lo, m)) : lo;
            const int64_t whole = b0 + (hi - b0) / m * m;
            cut(0, b0, true);
            cut(b0, whole, false);
            cut(whole, p.out[a], true);
        } else {
            cut(0, lo, true);
            cut(lo, hi, false);
            cut(hi, p.out[a], true);
        }
    }
    l.padded = {l.out[0], round_up(l.out[1], row_multiple), round_up(l.out[2], col_multiple)};
    l.in = {l.out[0] + p.templ[0] - 1, l.padded[1] + p.templ[1] - 1,
            l.padded[2] + p.templ[2] - 1};
    // Room for whole-vector reads past the last column (window sums, statistics).
    l.in_row = round_up(l.in[2], 16) + 16;
    l.in_plane = l.in_row * l.in[1];
    l.num_row = round_up(l.padded[2], 16);   // the finalisation reads whole vectors
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
        s.zeros = AlignedArray<double>(row);   // zero-initialised, never written
    }
    return s;
}

int64_t TileRunner::scratch_bytes() const
{
    const TileLayout& l = layout_;
    int64_t b = 4 * (l.in_plane * l.in[0] + l.num_plane * l.padded[0]);
    if (p_.op == Op::lcorr) b += 8 * (l.in_row + 64) * (5 + (p_.templ[0] > 1 ? 2 * l.in[1] : 0));
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

template <class F>
void TileRunner::for_box_rows(const float* frame, const Box& b, float* x, F&& f) const
{
    const TileLayout& l = layout_;
    const int64_t planes = b.real[0] + p_.templ[0] - 1;
    const int64_t p0 = b.origin[0] - p_.pad[0];
    const int64_t r0 = b.origin[1] - p_.pad[1];
    const int64_t c0 = b.origin[2] - p_.pad[2];
    const int64_t cb = std::max<int64_t>(0, c0), ce = std::min(p_.image[2], c0 + l.in[2]);
    for (int64_t a = 0; a < planes; ++a) {
        const int64_t ip = p0 + a;
        for (int64_t i = 0; i < l.in[1]; ++i) {
            float* dst = x == nullptr ? nullptr : x + a * l.in_plane + i * l.in_row;
            const int64_t ir = r0 + i;
            if (ip < 0 || ip >= p_.image[0] || ir < 0 || ir >= p_.image[1] || ce <= cb) {
                f(dst, nullptr, int64_t(0), int64_t(0));
            } else {
                const float* src = frame + (ip * p_.image[1] + ir) * p_.image[2] + cb;
                // Rows of a narrow box are too short for the hardware prefetcher: ask for the
                // row kPrefetchRows ahead (harmless past the box: a prefetch never faults).
                if (ir + kPrefetchRows < p_.image[1])
                    for (int64_t k = 0; k < ce - cb; k += 16)
                        __builtin_prefetch(src + kPrefetchRows * p_.image[2] + k);
                f(dst, src, cb - c0, ce - cb);
            }
        }
    }
}

double TileRunner::centre_of(const float* frame, const Box& b) const
{
    double sum = 0;
    int64_t count = 0, row = 0;
    bool integral = true;
    for_box_rows(frame, b, nullptr, [&](float*, const float* src, int64_t, int64_t n) {
        if (src != nullptr && row++ % 8 == 0) {
            sum += ks_.sum(src, n, integral);
            count += n;
        }
    });
    const double mean = count > 0 ? sum / double(count) : 0.0;
    if (!std::isfinite(mean)) return 0;   // non-finite input: reported by the gather
    return integral && std::fabs(mean) < 0x1p30 ? std::nearbyint(mean) : mean;
}

// A bound F on the rounding error of the window sums, in units of u * (largest term)
// (geometry/guard.h): the running plane sums (3D), the running column sums, the prefix scan
// and the final difference.
double TileRunner::guard_factor(const Box& b) const
{
    const TileLayout& l = layout_;
    return geometry::tile_pipeline_guard(double(p_.templ[0]), double(p_.templ[1]), double(p_.templ[2]),
                                         double(b.real[0]), double(l.padded[1]),
                                         double(l.in[2]) + 16);   // prefix scan length
}

bool TileRunner::run_in_place(const float* frame, float* out_frame, const Box& b,
                              Numerator& numerator, int thread) const
{
    const int64_t in_row = p_.image[2], in_plane = p_.image[1] * p_.image[2];
    const int64_t out_row = p_.out[2], out_plane = p_.out[1] * p_.out[2];
    TileView v;
    v.x = frame + (b.origin[0] - p_.pad[0]) * in_plane + (b.origin[1] - p_.pad[1]) * in_row +
          (b.origin[2] - p_.pad[2]);
    v.x_row = in_row;
    v.x_plane = in_plane;
    v.num = out_frame + b.origin[0] * out_plane + b.origin[1] * out_row + b.origin[2];
    v.num_row = out_row;
    v.num_plane = out_plane;
    v.planes = b.real[0];
    v.rows = v.real_rows = b.real[1];
    v.cols = v.real_cols = b.real[2];
    v.origin = b.origin;
    v.boundary = false;
    v.centre = 0;
    v.scale = 1;
    const bool outputs_finite = numerator.compute(v, thread);
    // Every value of the input box reaches some output of the tile (with some tap), and a
    // non-finite term makes an IEEE sum non-finite: finite outputs prove a finite box. A
    // non-finite output may also be an overflow of finite data, so the box decides then
    // (rare: a plain scan will do).
    if (outputs_finite || !p_.check_finite) return true;
    for (int64_t q = 0; q < b.real[0] + p_.templ[0] - 1; ++q)
        for (int64_t r = 0; r < b.real[1] + p_.templ[1] - 1; ++r)
            if (!all_finite(v.x + q * in_plane + r * in_row, b.real[2] + p_.templ[2] - 1))
                return false;
    return true;
}

bool TileRunner::run(const float* frame, float* out_frame, int64_t index, TileScratch& s,
                     Numerator& numerator, int thread) const
{
    const TileLayout& l = layout_;
    const Box b = box_of(index);
    const bool lcorr = p_.op == Op::lcorr;
    // Convolution needs neither centring nor the window statistics: interior tiles of whole
    // multiples skip the copies.
    if (in_place_ && !b.boundary && b.real[1] % row_multiple_ == 0 &&
        b.real[2] % col_multiple_ == 0)
        return run_in_place(frame, out_frame, b, numerator, thread);
    float* x = s.x.data();

    // Gather the input box, centred on c for LCC (boundary tiles: c = 0, see Segment), padding
    // included (the padding holds 0 - c: LCC is invariant to a constant on the padded image).
    const double c = lcorr && !b.boundary ? centre_of(frame, b) : 0.0;
    const float cf = static_cast<float>(c);
    TileStats st;
    const float pad = -cf;
    const auto fill = [pad](float* from, float* to) {
        // A zero padding (boundary tiles, c = 0) as memset's wide stores: FULL boxes are mostly
        // padding. (-0 becomes +0: only the sign of an exactly zero window sum can differ.)
        if (pad == 0)
            std::memset(from, 0, sizeof(float) * size_t(to - from));
        else
            std::fill(from, to, pad);
    };
    for_box_rows(frame, b, x, [&](float* dst, const float* src, int64_t lead, int64_t n) {
        fill(dst, dst + lead);
        ks_.copy_centre(dst + lead, src, n, cf, st);
        fill(dst + lead + n, dst + l.in_row);
    });
    if (!st.finite && p_.check_finite) return false;

    double tau_abs = -1;   // exact mode unless set below
    double small_s2 = 0;
    double scale = 1;
    if (lcorr && st.finite) {
        // The magnitude of the values real windows see: image values only. Boundary tiles have
        // c = 0, so their padding is 0; interior tiles' real windows never reach the -c fill.
        double m = std::max(std::fabs(double(st.vmax) - double(cf)), std::fabs(double(st.vmin) - double(cf)));
        if (m > 0x1p40 || (m > 0 && m < 0x1p-40)) {
            // Extreme magnitude: centre and scale by a power of two in double (LCC is invariant
            // to scaling), so sums cannot overflow and D fits a float.
            scale = std::ldexp(1.0, -std::ilogb(m));
            m *= scale;
            for_box_rows(frame, b, x, [&](float* dst, const float* src, int64_t lead, int64_t n) {
                const float pad = static_cast<float>(-double(cf) * scale);
                std::fill(dst, dst + lead, pad);
                ks_.copy_scaled(dst + lead, src, n, double(cf), scale);
                std::fill(dst + lead + n, dst + l.in_row, pad);
            });
        }
        const double n = double(volume(p_.templ));
        const double len = double(l.in[2]) + 16;
        const double biggest_partial = len * double(p_.templ[0] * p_.templ[1]) * m * m;
        // Exact: integers, every partial sum below 2^52 and n*m <= 2^26, so that n*S2 and S1^2
        // (both at most (n*m)^2) are integers below 2^53 too.
        const bool exact = st.integral && cf == std::nearbyint(cf) && scale == 1 && m < 0x1p24 &&
                           biggest_partial <= 0x1p52 && n * m <= 0x1p26;
        if (!exact) {
            const double f = guard_factor(b), u = 0x1p-53;
            tau_abs = (3.5 * n * f * u + f * f * u * u) * m * m;
            small_s2 = 1e-6 * n * m * m;
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
    v.rows = round_up(b.real[1], row_multiple_);
    v.cols = round_up(b.real[2], col_multiple_);
    v.real_rows = b.real[1];
    v.real_cols = b.real[2];
    v.origin = b.origin;
    v.boundary = b.boundary;
    v.centre = double(cf);
    v.scale = scale;
    numerator.compute(v, thread);   // the gather checked the input

    for (int64_t q = 0; q < b.real[0]; ++q) {
        float* num = s.num.data() + q * l.num_plane;
        float* dst = out_frame +
                     ((b.origin[0] + q) * p_.out[1] + b.origin[1]) * p_.out[2] + b.origin[2];
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
            a.small_s2 = small_s2;
            a.v1 = s.v1.data();
            a.v2 = s.v2.data();
            a.q1 = s.q1.data();
            a.q2 = s.q2.data();
            a.zeros = s.zeros.data();
            a.taps = numerator.lcc_taps();
            a.tap_sum = numerator.lcc_tap_sum();
            a.zero_num_d = numerator.lcc_zero_num_d(thread);
            a.t0 = p_.templ[0];
            a.frame = frame;
            for (int k = 0; k < 3; ++k) a.image[k] = p_.image[k];
            a.box[0] = b.origin[0] + q - p_.pad[0];
            a.box[1] = b.origin[1] - p_.pad[1];
            a.box[2] = b.origin[2] - p_.pad[2];
            a.out = dst;
            a.out_row = p_.out[2];
            ks_.lcc_plane(a);
        } else {
            for (int64_t r = 0; r < b.real[1]; ++r)
                std::memcpy(dst + r * p_.out[2], num + r * l.num_row, sizeof(float) * b.real[2]);
        }
    }
    return true;
}

}  // namespace flcc::host
