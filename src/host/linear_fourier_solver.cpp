// The host Fourier solvers of one transform box: host.fourier2.linear, host.fourier3.linear.
// The numerator of a frame is the linear correlation of the image alone with the prepared
// template, from one transform: the image's values, placed at the start of a box of fast
// transform sizes with zeros after them, one real-to-complex transform, one product with the
// template's filter, one complex-to-real transform; output o reads the circular correlation at
// (o - lo) mod n per axis. The box only needs to hold the image and the template's reach past it
// (S + T - 1 for FULL, S for VALID), where the tiled variants transform each tile's padded input
// box (a FULL 128 x 128 pair: one 256² box here, nine boxes of up to 256² there). These are the
// solvers of small problems, above all the pairs of batch plans.
//
// The window sums and the finalisation are the tile pipeline's, on the layout of the whole
// variant (one tile per boundary or interior run, interior tiles centred): each tile takes its
// numerator from the frame's, as (N - centre * tap sum) * scale for the tile's centring.
//
// Accuracy: the transform sees the image less its mean mu (rounded to an integer for integer
// data), so its rounding error is relative to the image's spread, not its mean; mu times the
// sum of the taps over the image part of each window (from the taps' summed-volume table) is
// added back in double. Where no window reaches the padding (VALID), the image also loses its
// additive background (plane, row and column means: gradients, steps) first, as the tiled
// variants' boxes do. An image of extreme magnitude is scaled by a power of two before the
// transform, as the tile pipeline scales its boxes. The a-posteriori check (fourier_accuracy.h)
// then recomputes the windows of too small a variance for that error.
//
// Threads: frames and tiles one at a time, FFTW's parallel loops on the executor's threads (as
// the whole tiled variant). Memory and FFTW's reserve as in fourier_solver.cpp.
#include "geometry/fft_size.h"
#include "host/fourier_accuracy.h"
#include "host/fourier_common.h"
#include "host/kernels/kernel_set.h"
#include "host/real_fft.h"
#include "host/thread_pool.h"
#include "host/tile_runner.h"
#include "plan/error.h"
#include "plan/registry.h"
#include "plan/template.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <vector>

namespace flcc::host {

namespace {

constexpr int64_t kLinearBudgetBytes = int64_t(1) << 30;   // scratch, transforms and filter

// One axis of the linear box: the input box (out + T - 1, index i holds image index i - pad)
// holds the image at [lo, hi); its circular correlation on n points, the image placed at 0 and
// zeros after it, gives output o at (o - lo) mod n. Output o's window covers the image's
// [o - lo, o - lo + T): n must hold the image (len), keep windows starting before it from
// wrapping onto its end (len + lo) and windows reaching past it from wrapping onto its start
// (out - lo + T - 1 + 1); and the template (T), which the filter holds unfolded.
struct LinearAxis {
    int64_t lo = 0, hi = 0, n = 1;
};

LinearAxis linear_axis(const Problem& p, int a)
{
    const int64_t box = p.out[a] + p.templ[a] - 1;
    LinearAxis x;
    x.lo = std::clamp<int64_t>(p.pad[a], 0, box);
    x.hi = std::clamp<int64_t>(p.pad[a] + p.image[a], 0, box);
    const int64_t len = x.hi - x.lo;
    const int64_t need =
        std::max({len, len + x.lo, p.out[a] - x.lo + p.templ[a] - 1, p.templ[a]});
    x.n = geometry::fast_fft_size(std::max<int64_t>(need, 1));
    return x;
}

struct Layout {
    LinearAxis axis[3];
    Extent n{};
    int64_t real = 0, complex = 0;
    explicit Layout(const Problem& p)
    {
        for (int a = 0; a < 3; ++a) {
            axis[a] = linear_axis(p, a);
            n[a] = axis[a].n;
        }
        real = volume(n);
        complex = RealFft::complex_elems(n);
    }
    // Transform buffers (real box, spectrum) and the filter.
    int64_t fft_bytes() const { return 4 * real + 16 * complex; }
};

fftwf_complex* as_complex(AlignedArray<float>& a)
{
    return reinterpret_cast<fftwf_complex*>(a.data());
}

class LinearExecutor final : public Executor, private Numerator {
public:
    LinearExecutor(const Problem& p, const TileRunner& runner, const Layout& layout)
        : p_(p), ks_(runner.kernel_set()), runner_(runner), layout_(layout),
          fft_pool_(p.threads), scratch_(runner_.make_scratch()), real_(layout.real),
          spectrum_(2 * layout.complex), filter_(2 * layout.complex), taps_(p.templ_elems()),
          numerator_(p.out_elems()),
          table_(size_t((p.templ[0] + 1) * (p.templ[1] + 1) * (p.templ[2] + 1))),
          row_table_(size_t(p.templ[2] + 1))
    {
        fft_ = std::make_unique<RealFft>(layout_.n, real_.data(), as_complex(spectrum_),
                                         fft_pool_, true);
        bool valid = true;   // no window reaches the padding
        for (int a = 0; a < 3; ++a)
            valid = valid && layout_.axis[a].lo == 0 &&
                    layout_.axis[a].hi == p.out[a] + p.templ[a] - 1;
        if (p.op == Op::lcorr && valid) background_ = std::make_unique<Background>(p.image, ks_);
        const LinearAxis& x = layout_.axis[2];
        for (int64_t c = 0; c < p.out[2]; ++c) {
            first_.push_back(int32_t(std::clamp<int64_t>(x.lo - c, 0, p.templ[2])));
            last_.push_back(int32_t(std::clamp<int64_t>(x.hi - c, 0, p.templ[2])));
        }
        reserve_fft_memory();
    }

    flcc_result set_template(const float* templ, bool constant) override
    {
        const int64_t n = p_.templ_elems();
        if (p_.op == Op::lcorr) {
            normalised_template(templ, n, constant, taps_.data());
            make_zero_sum(taps_.data(), n);
            marginals_.compute(taps_.data(), p_.templ);
        } else {
            flipped_template(templ, n, taps_.data());
        }
        make_table();
        {
            FftScope scope(fft_guard_, &fft_pool_);
            make_filter(taps_.data(), p_.templ, *fft_, layout_.n, real_.data(), filter_.data());
        }
        if (fft_guard_.take_failure())
            return fail(FLCC_ALLOC_FAILED, "out of memory in FFTW transforming the template");
        return FLCC_SUCCESS;
    }

    flcc_result execute(const float* image, float* out, int64_t count, MemorySpace) override
    {
        FftScope scope(fft_guard_, &fft_pool_);
        const int64_t tiles = runner_.layout().tiles_per_frame();
        for (int64_t f = 0; f < count; ++f) {
            const float* frame = image + f * p_.image_elems();
            float* out_frame = out + f * p_.out_elems();
            frame_numerator(frame);
            if (fft_guard_.take_failure())
                return fail(FLCC_ALLOC_FAILED, "out of memory in FFTW executing a transform");
            for (int64_t t = 0; t < tiles; ++t) {
                if (!runner_.run(frame, out_frame, t, scratch_, *this, 0)) return FLCC_NONFINITE_INPUT;
                if (p_.op == Op::lcorr)
                    check_lcc_tile(p_, tile_, tile_.num, tile_.num_row, tile_.num_plane, tile_bound(),
                                   taps_.data(), tap_sum_, frame, out_frame);
            }
        }
        return FLCC_SUCCESS;
    }

    int64_t memory_bytes() const override
    {
        return runner_.scratch_bytes() + layout_.fft_bytes() + 4 * (taps_.size() + numerator_.size()) +
               8 * int64_t(table_.size()) + fft_guard_.reserve_bytes();
    }

private:
    // Runs the transforms once (zeroed) to measure what FFTW holds while it executes them, then
    // reserves that for each thread of FFTW's parallel loops.
    void reserve_fft_memory()
    {
        if (!fft_allocator_in_effect()) return;   // FFTW's allocations are not seen
        std::fill(real_.data(), real_.data() + layout_.real, 0.0f);
        {
            FftScope scope(fft_guard_, &fft_pool_);
            fft_->forward(real_.data(), as_complex(spectrum_));
            fft_->inverse(as_complex(spectrum_), real_.data());
        }
        if (fft_guard_.take_failure()) {
            set_detail("out of memory in FFTW executing a transform at plan creation");
            throw std::bad_alloc();
        }
        fft_guard_.reserve_for(fft_pool_.size());
    }

    // The taps' summed-volume table in double: table[(a, i, c)] = sum of taps over planes < a,
    // rows < i, columns < c; and their total.
    void make_table()
    {
        const Extent& t = p_.templ;
        const int64_t r1 = t[2] + 1, r0 = (t[1] + 1) * r1;
        double* s = table_.data();
        std::fill(s, s + table_.size(), 0.0);
        for (int64_t a = 0; a < t[0]; ++a)
            for (int64_t i = 0; i < t[1]; ++i) {
                double row = 0;
                for (int64_t c = 0; c < t[2]; ++c) {
                    row += double(taps_.data()[(a * t[1] + i) * t[2] + c]);
                    const int64_t at = (a + 1) * r0 + (i + 1) * r1 + c + 1;
                    s[at] = row + s[at - r1] + s[at - r0] - s[at - r0 - r1];
                }
            }
        tap_sum_ = s[t[0] * r0 + t[1] * r1 + t[2]];
    }

    const float* lcc_taps() const override { return p_.op == Op::lcorr ? taps_.data() : nullptr; }
    double lcc_tap_sum() const override { return tap_sum_; }
    double lcc_zero_num_d(int) const override { return zero_numerator_limit(tile_bound()); }

    // The frame's numerator times unit_ (over the whole output) and its error bound.
    void frame_numerator(const float* frame)
    {
        const Extent& n = layout_.n;
        const Extent& S = p_.image;
        float* real = real_.data();
        // The image's mean and range: an extreme magnitude is scaled by a power of two first
        // (unit_), as the tile pipeline scales its boxes, so that the transform neither
        // overflows nor loses denormal digits.
        double sum = 0;
        bool integral = true;
        float lo = std::numeric_limits<float>::infinity(), hi = -lo;
        for (int64_t row = 0; row < S[0] * S[1]; ++row) {
            const float* v = frame + row * S[2];
            sum += ks_.sum(v, S[2], integral);
            ks_.extent(v, S[2], lo, hi);
        }
        double mean = sum / double(std::max<int64_t>(p_.image_elems(), 1));
        if (!std::isfinite(mean)) mean = 0;   // non-finite input: the gather reports it
        if (integral && std::fabs(mean) < 0x1p30) mean = std::nearbyint(mean);
        const double m = std::max(std::fabs(double(hi) - mean), std::fabs(double(lo) - mean));
        const bool extreme = std::isfinite(m) && (m > 0x1p40 || (m > 0 && m < 0x1p-40));
        unit_ = extreme ? std::ldexp(1.0, -std::ilogb(m)) : 1.0;
        // The image at the start of the box, (x - mean) * unit_ (VALID LCC of ordinary
        // magnitude: less its background instead), zeros after it.
        Background* bg = extreme ? nullptr : background_.get();
        if (bg != nullptr) bg->begin(S);
        double energy = 0;
        for (int64_t a = 0; a < n[0]; ++a) {
            float* plane = real + a * n[1] * n[2];
            if (a >= S[0]) {
                std::memset(plane, 0, sizeof(float) * size_t(n[1] * n[2]));
                continue;
            }
            for (int64_t i = 0; i < S[1]; ++i) {
                float* dst = plane + i * n[2];
                const float* src = frame + (a * S[1] + i) * S[2];
                if (bg != nullptr) {
                    bg->copy_row(dst, src, a, i);
                } else {
                    ks_.copy_scaled(dst, src, S[2], mean, unit_);
                    energy += ks_.sum_squares(dst, S[2]);
                }
                std::memset(dst + S[2], 0, sizeof(float) * size_t(n[2] - S[2]));
            }
            std::memset(plane + S[1] * n[2], 0, sizeof(float) * size_t((n[1] - S[1]) * n[2]));
        }
        const bool background = bg != nullptr && bg->fit();
        if (bg != nullptr) energy = background ? bg->subtract(real, n) : bg->energy();

        fft_->forward(real, as_complex(spectrum_));
        ks_.multiply_spectra(spectrum_.data(), filter_.data(), layout_.complex);
        fft_->inverse(as_complex(spectrum_), real);

        // Output o at (o - lo) mod n: per row, columns [0, lo) from the box row's last lo
        // columns, the rest from its start; then what the centring took away.
        const Extent& out = p_.out;
        const LinearAxis* ax = layout_.axis;
        const auto wrap = [](int64_t o, const LinearAxis& x) { return (o - x.lo + x.n) % x.n; };
        const int64_t head = std::min(ax[2].lo, out[2]);
        if (background) bg->correlate(marginals_, out);
        const double shift = bg != nullptr ? 0.0 : mean * unit_;
        for (int64_t q = 0; q < out[0]; ++q)
            for (int64_t r = 0; r < out[1]; ++r) {
                const float* src = real + (wrap(q, ax[0]) * n[1] + wrap(r, ax[1])) * n[2];
                float* dst = numerator_.data() + (q * out[1] + r) * out[2];
                std::memcpy(dst, src + n[2] - ax[2].lo, sizeof(float) * size_t(head));
                std::memcpy(dst + head, src, sizeof(float) * size_t(out[2] - head));
                if (background)
                    add_background(dst, out[2], bg->constant() + bg->along(0)[q] + bg->along(1)[r],
                                   bg->along(2));
                else if (shift != 0)
                    add_mean(shift, q, r, dst);
            }
        bound_ = fft_error_bound(energy, p_.image_elems(), layout_.real);
    }

    // dst[c] += mean * (the taps over the image part of output (q, r, c)'s window), in double.
    // The taps over the image are a box of the table: its planes and rows fixed for the row, its
    // columns [first_[c], last_[c]) per output column.
    void add_mean(double mean, int64_t q, int64_t r, float* dst)
    {
        const LinearAxis* ax = layout_.axis;
        const Extent& tp = p_.templ;
        const int64_t o[2] = {q, r};
        int64_t b[2], e[2];
        for (int a = 0; a < 2; ++a) {
            b[a] = std::clamp<int64_t>(ax[a].lo - o[a], 0, tp[a]);
            e[a] = std::clamp<int64_t>(ax[a].hi - o[a], 0, tp[a]);
        }
        const int64_t r1 = tp[2] + 1, r0 = (tp[1] + 1) * r1;
        const double* s = table_.data();
        double* rows = row_table_.data();   // the taps over the row's planes and rows, columns < k
        for (int64_t k = 0; k <= tp[2]; ++k)
            rows[k] = s[e[0] * r0 + e[1] * r1 + k] - s[b[0] * r0 + e[1] * r1 + k] -
                      s[e[0] * r0 + b[1] * r1 + k] + s[b[0] * r0 + b[1] * r1 + k];
        for (int64_t c = 0; c < p_.out[2]; ++c)
            dst[c] = float(double(dst[c]) + mean * (rows[last_[size_t(c)]] - rows[first_[size_t(c)]]));
    }

    // A tile's numerator from the frame's (N * unit_): its box holds (frame - centre) * scale,
    // so N_tile = (N - centre * tap sum) * scale (its windows lie in the image wherever
    // centre != 0).
    bool compute(const TileView& t, int) override   // true: it does not check (not in place)
    {
        const Extent& out = p_.out;
        const double ratio = t.scale / unit_, shift = t.centre * tap_sum_ * unit_;
        const bool plain = shift == 0 && ratio == 1;
        for (int64_t q = 0; q < t.planes; ++q)
            for (int64_t r = 0; r < t.rows; ++r) {
                const float* src = numerator_.data() +
                                   ((t.origin[0] + q) * out[1] + t.origin[1] + r) * out[2] + t.origin[2];
                float* dst = t.num + q * t.num_plane + r * t.num_row;
                if (plain) {
                    std::memcpy(dst, src, sizeof(float) * size_t(t.cols));
                    continue;
                }
                for (int64_t c = 0; c < t.cols; ++c) dst[c] = float((double(src[c]) - shift) * ratio);
            }
        tile_ = t;
        return true;
    }

    // The error bound of the last tile's numerators: the frame's, in the tile's scale.
    double tile_bound() const { return bound_ * tile_.scale / unit_; }

    Problem p_;
    const KernelSet& ks_;
    TileRunner runner_;
    Layout layout_;
    ThreadPool fft_pool_;   // FFTW's parallel loops
    FftGuard fft_guard_;    // before fft_: outlives the plans
    TileScratch scratch_;
    AlignedArray<float> real_, spectrum_, filter_, taps_;
    AlignedArray<float> numerator_;   // the frame's numerator, over the whole output
    std::unique_ptr<RealFft> fft_;
    std::unique_ptr<Background> background_;    // VALID LCC
    TemplateMarginals marginals_;               // LCC: for the background's correlation
    std::vector<double> table_;                 // the taps' summed-volume table
    std::vector<double> row_table_;             // add_mean's per-row table
    std::vector<int32_t> first_, last_;         // per output column: its taps over the image
    double tap_sum_ = 0;
    double unit_ = 1;     // the frame's scale (a power of two) in numerator_ and bound_
    TileView tile_{};     // the last tile, for the a-posteriori check
    double bound_ = 0;    // the frame's numerator's error bound
};

class LinearCandidate final : public Candidate {
public:
    explicit LinearCandidate(const Problem& p)
        : p_(p), runner_(p, select_kernel_set(), p.out, 1, 1), layout_(p)
    {
    }

    bool within_budget() const
    {
        return runner_.scratch_bytes() + layout_.fft_bytes() <= kLinearBudgetBytes;
    }

    double estimate_seconds() const override
    {
        const FourierCostModel m;
        const double fft = m.pair(layout_.n, p_.dim);
        const double filters = p_.type == FLCC_STREAM ? 0.0 : 0.5 * fft;
        const TileLayout& l = runner_.layout();
        const double box = double(volume(l.in));
        const double gather = p_.dim == 3
                                  ? double(l.in[0] * l.in[1]) * m.gather_row_3d + box * m.gather_3d
                                  : box * m.gather;
        const double sums = p_.dim == 3 && p_.op == Op::lcorr
                                ? double(l.out[0]) * double(l.in_plane) * m.plane_sums_3d
                                : 0.0;
        const double per_output = p_.op == Op::conv ? m.per_output_conv
                                  : p_.dim == 3     ? m.per_output_lcorr_3d
                                                    : m.per_output_lcorr_2d;
        const double speedup = std::max(1.0, m.fft_thread_efficiency * p_.threads);
        return (fft + filters) / speedup + double(p_.out_elems()) * per_output + gather + sums;
    }

    flcc_result create(std::unique_ptr<Executor>& out) const override
    {
        try {
            out = std::make_unique<LinearExecutor>(p_, runner_, layout_);
        } catch (const std::bad_alloc&) {
            return FLCC_ALLOC_FAILED;
        }
        return FLCC_SUCCESS;
    }

private:
    Problem p_;
    TileRunner runner_;
    Layout layout_;
};

class LinearSolver final : public Solver {
public:
    explicit LinearSolver(int dim)
        : dim_(dim), name_("host.fourier" + std::to_string(dim) + ".linear")
    {
    }

    const char* name() const override { return name_.c_str(); }
    flcc_platform platform() const override { return FLCC_HOST; }

    std::unique_ptr<Candidate> plan(const Problem& p) const override
    {
        if (p.dim != dim_) return nullptr;
        auto c = std::make_unique<LinearCandidate>(p);
        if (!c->within_budget()) return nullptr;
        return c;
    }

private:
    int dim_;
    std::string name_;
};

}  // namespace

}  // namespace flcc::host

namespace flcc {

void register_host_linear_fourier(SolverList& list)
{
    static const host::LinearSolver two(2), three(3);
    list.push_back(&two);
    list.push_back(&three);
}

}  // namespace flcc
