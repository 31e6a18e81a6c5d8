// The host Fourier solvers (FFTW3, single precision): overlap-save on the shared tile pipeline.
// The numerator of a tile is the valid correlation of its input box with the prepared template
// (normalised zero-mean for LCC, flipped for convolution): one real-to-complex transform of the
// zero-padded box, one product with the template's filter conj(FFT(template)) / N, one
// complex-to-real transform. The FFT is at least as large as the box on every axis, so the
// circular correlation's outputs [0, tile) never wrap around: a tile is fft - T + 1 outputs.
// The filters are made once per template (set_template), one per FFT size the tiles use.
//
// Solvers, one per largest FFT box, so that the planner's MEASURE mode picks the size:
//   host.fourier2.t64 .t128 .t256 .t512 .t1024 .t2048 .t4096
//                          2D, FFT boxes of at most B x B
//   host.fourier2.whole    2D, one box per axis covering the whole output
//   host.fourier3.t16 .t32 .t64 .t128 .t256
//                          3D, FFT boxes of at most B x B x B
//   host.fourier3.whole    3D, one box covering the whole output
// Per axis, an output that fits one box (out + T - 1 <= B) is not tiled along that axis and its
// box shrinks to the fast size (2^a 3^b 5^c 7^d) above out + T - 1; an axis that needs tiling
// needs B > T, else the variant does not apply (the cost model ranks short tiles last). The tile
// pipeline cuts boundary outputs (windows reaching into the padding) into their own tiles, so
// tiles come in a few lengths per axis; each length gets the fast FFT size above its box, with
// its own FFTW plans and filter. A variant whose FFT buffers (per-thread boxes and filters)
// would exceed kFftBudgetBytes does not apply.
//
// Threads: tiles run in parallel on the executor's pool, each with single-threaded FFTs and its
// thread's buffers. The whole variants, and problems with fewer tiles than threads, run tiles
// one at a time and give FFTW the threads instead (FFTW's parallel loops then run on the FFT
// pool, see real_fft.h). Plans are made at executor creation, never in execute.
//
// Memory: execute allocates nothing of its own. FFTW may allocate buffers while it executes;
// the executor runs every transform once at creation to measure what FFTW holds at once per
// thread, and keeps a reserve of that size per thread that calls FFTW concurrently (real_fft.h).
// A transform FFTW executes with reserve memory makes the exec (or template preparation)
// return FLCC_ALLOC_FAILED; the executor stays usable.
//
// LCC accuracy (fourier_accuracy.h): the FFT's error is relative to the box's energy, so boxes
// lose their additive background (plane, row and column means) before the transform, and every
// coefficient whose window variance is too small against the error is recomputed directly.
#include "host/fourier_solver.h"

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
#include <atomic>
#include <cmath>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

namespace flcc::host {

namespace {

std::atomic<int64_t> template_preparations{0};

constexpr int64_t kFftBudgetBytes = int64_t(1) << 30;

// The tiles of a problem as the Fourier numerator sees them: per axis, the distinct tile
// lengths, the FFT size of each, and how many tiles use each FFT size. A tile's FFT extent is
// the product of its axes' sizes ("shapes", indexed (i0 * K1 + i1) * K2 + i2).
struct Cut {
    struct Axis {
        std::vector<int64_t> lengths;   // distinct tile lengths
        std::vector<int> size_of;       // lengths[i] uses sizes[size_of[i]]
        std::vector<int64_t> sizes;     // distinct FFT sizes
        std::vector<int64_t> tiles;     // tiles per frame along the axis using sizes[j]
    };
    Axis axis[3];
    std::vector<Extent> shapes;
    std::vector<int64_t> shape_tiles;   // tiles per frame of each shape
    int pool_threads = 1, fft_threads = 1;
    int64_t fft_bytes = 0;              // per-thread boxes and spectra plus every filter
    int64_t max_real = 0, max_complex = 0;

    Cut(const Problem& p, const TileLayout& l, bool whole)
    {
        for (int a = 0; a < 3; ++a) {
            Axis& ax = axis[a];
            for (const Segment& s : l.segments[a]) {
                size_t i = 0;
                while (i < ax.lengths.size() && ax.lengths[i] != s.length) ++i;
                if (i == ax.lengths.size()) {
                    const int64_t n = geometry::fast_fft_size(s.length + p.templ[a] - 1);
                    size_t j = 0;
                    while (j < ax.sizes.size() && ax.sizes[j] != n) ++j;
                    if (j == ax.sizes.size()) {
                        ax.sizes.push_back(n);
                        ax.tiles.push_back(0);
                    }
                    ax.lengths.push_back(s.length);
                    ax.size_of.push_back(int(j));
                }
                ++ax.tiles[size_t(ax.size_of[i])];
            }
        }
        int64_t filters = 0;
        for (size_t i0 = 0; i0 < axis[0].sizes.size(); ++i0)
            for (size_t i1 = 0; i1 < axis[1].sizes.size(); ++i1)
                for (size_t i2 = 0; i2 < axis[2].sizes.size(); ++i2) {
                    const Extent n{axis[0].sizes[i0], axis[1].sizes[i1], axis[2].sizes[i2]};
                    shapes.push_back(n);
                    shape_tiles.push_back(axis[0].tiles[i0] * axis[1].tiles[i1] *
                                          axis[2].tiles[i2]);
                    max_real = std::max(max_real, volume(n));
                    max_complex = std::max(max_complex, RealFft::complex_elems(n));
                    filters += RealFft::complex_elems(n);
                }
        if (whole || l.tiles_per_frame() < p.threads) {
            pool_threads = 1;
            fft_threads = p.threads;
        } else {
            pool_threads = p.threads;
            fft_threads = 1;
        }
        fft_bytes = pool_threads * (4 * max_real + 8 * max_complex) + 8 * filters;
    }

    int shape_of(int64_t planes, int64_t rows, int64_t cols) const
    {
        const int64_t len[3] = {planes, rows, cols};
        int idx[3];
        for (int a = 0; a < 3; ++a) {
            const Axis& ax = axis[a];
            size_t i = 0;
            while (ax.lengths[i] != len[a]) ++i;
            idx[a] = ax.size_of[i];
        }
        return (idx[0] * int(axis[1].sizes.size()) + idx[1]) * int(axis[2].sizes.size()) + idx[2];
    }
};

// A shape's transforms and its filter conj(FFT(template)) / N (interleaved re, im).
struct Shape {
    Extent n{};
    std::unique_ptr<RealFft> fft;
    AlignedArray<float> filter;
};

// Per-thread state: the transform buffers (the zero-padded box, then the numerator; its
// spectrum), and the last LCC tile's view and error bound for the a-posteriori check.
struct FftScratch {
    AlignedArray<float> real, spectrum;
    std::unique_ptr<Background> background;   // LCC
    TileView tile{};
    Extent n{};
    double bound = 0;
};

fftwf_complex* as_complex(AlignedArray<float>& a)
{
    return reinterpret_cast<fftwf_complex*>(a.data());
}

class FourierExecutor final : public Executor, private Numerator {
public:
    // `runner` and `cut`: the candidate's layout (FourierCandidate).
    FourierExecutor(const Problem& p, const TileRunner& runner, const Cut& cut)
        : p_(p), ks_(runner.kernel_set()), runner_(runner), cut_(cut), pool_(cut_.pool_threads),
          fft_pool_(cut_.fft_threads), taps_(p.templ_elems())
    {
        for (int t = 0; t < pool_.size(); ++t) {
            scratch_.push_back(runner_.make_scratch());
            fft_scratch_.emplace_back();
            fft_scratch_.back().real = AlignedArray<float>(cut_.max_real);
            fft_scratch_.back().spectrum = AlignedArray<float>(2 * cut_.max_complex);
            if (p.op == Op::lcorr) {
                const Extent& in = runner_.layout().in;
                fft_scratch_.back().background = std::make_unique<Background>(in, ks_);
            }
        }
        // FFTW_MEASURE (slow to plan, faster to run) for the shapes doing at least a
        // tenth of the work, FFTW_ESTIMATE for the rest (short tiles at the ends of the axes).
        const FourierCostModel model;
        double total = 0;
        for (size_t i = 0; i < cut_.shapes.size(); ++i)
            total += double(cut_.shape_tiles[i]) * model.pair(cut_.shapes[i], p.dim);
        FftScratch& b = fft_scratch_[0];
        shapes_.resize(cut_.shapes.size());
        for (size_t i = 0; i < shapes_.size(); ++i) {
            Shape& s = shapes_[i];
            s.n = cut_.shapes[i];
            const double work = double(cut_.shape_tiles[i]) * model.pair(s.n, p.dim);
            const bool measure = work >= 0.1 * total;
            s.fft = std::make_unique<RealFft>(s.n, b.real.data(), as_complex(b.spectrum),
                                              fft_pool_, measure);
            s.filter = AlignedArray<float>(2 * RealFft::complex_elems(s.n));
        }
        reserve_fft_memory();
    }

    flcc_result set_template(const float* templ, bool constant) override
    {
        template_preparations.fetch_add(1, std::memory_order_relaxed);
        if (p_.op == Op::lcorr) {
            normalised_template(templ, p_.templ_elems(), constant, taps_.data());
            make_zero_sum(taps_.data(), p_.templ_elems());
            marginals_.compute(taps_.data(), p_.templ);
        } else {
            flipped_template(templ, p_.templ_elems(), taps_.data());
        }
        pool_.parallel_for(int64_t(shapes_.size()), [&](int64_t i, int thread) {
            FftScope scope(fft_guard_, &fft_pool_);
            Shape& s = shapes_[size_t(i)];
            make_filter(taps_.data(), p_.templ, *s.fft, s.n, fft_scratch_[size_t(thread)].real.data(),
                        s.filter.data());
        });
        if (fft_guard_.take_failure())
            return fail(FLCC_ALLOC_FAILED, "out of memory in FFTW transforming the template");
        return FLCC_SUCCESS;
    }

    flcc_result execute(const float* image, float* out, int64_t count, MemorySpace) override
    {
        const int64_t tiles = runner_.layout().tiles_per_frame();
        std::atomic<bool> nonfinite{false};
        pool_.parallel_for(count * tiles, [&](int64_t task, int thread) {
            FftScope scope(fft_guard_, &fft_pool_);
            const int64_t f = task / tiles;
            const float* frame = image + f * p_.image_elems();
            float* out_frame = out + f * p_.out_elems();
            if (!runner_.run(frame, out_frame, task % tiles, scratch_[size_t(thread)], *this,
                             thread)) {
                nonfinite.store(true, std::memory_order_relaxed);
                return;
            }
            if (p_.op == Op::lcorr) {
                const FftScratch& b = fft_scratch_[size_t(thread)];
                check_lcc_tile(p_, b.tile, b.real.data(), b.n[2], b.n[1] * b.n[2], b.bound,
                               taps_.data(), marginals_.total, frame, out_frame);
            }
        });
        if (fft_guard_.take_failure())
            return fail(FLCC_ALLOC_FAILED, "out of memory in FFTW executing a transform");
        return nonfinite.load() ? FLCC_NONFINITE_INPUT : FLCC_SUCCESS;
    }

    int64_t memory_bytes() const override
    {
        return int64_t(scratch_.size()) * runner_.scratch_bytes() + cut_.fft_bytes +
               4 * taps_.size() + fft_guard_.reserve_bytes();
    }

private:
    // Runs every shape's transforms once on thread 0's buffers (zeroed) to measure what FFTW
    // holds per thread while it executes them, then reserves that for every thread that calls
    // FFTW at once: the tile pool's threads, or the FFT pool's in FFTW's parallel loops.
    void reserve_fft_memory()
    {
        if (!fft_allocator_in_effect()) return;   // FFTW's allocations are not seen
        FftScratch& b = fft_scratch_[0];
        for (Shape& s : shapes_) {
            std::fill(b.real.data(), b.real.data() + volume(s.n), 0.0f);
            FftScope scope(fft_guard_, &fft_pool_);
            s.fft->forward(b.real.data(), as_complex(b.spectrum));
            s.fft->inverse(as_complex(b.spectrum), b.real.data());
        }
        if (fft_guard_.take_failure()) {
            set_detail("out of memory in FFTW executing a transform at plan creation");
            throw std::bad_alloc();
        }
        fft_guard_.reserve_for(std::max(pool_.size(), fft_pool_.size()));
    }

    // LCC: the pipeline recomputes, from the original image, windows far from their tile's
    // centring (whose centred values lost digits) and windows its zero-variance guard cannot
    // resolve, with these taps.
    const float* lcc_taps() const override
    {
        return p_.op == Op::lcorr ? taps_.data() : nullptr;
    }
    double lcc_tap_sum() const override { return marginals_.total; }   // ~0: make_zero_sum
    double lcc_zero_num_d(int thread) const override
    {
        return zero_numerator_limit(fft_scratch_[size_t(thread)].bound);
    }

    bool compute(const TileView& t, int thread) override   // true: it does not check (not in place)
    {
        const Shape& s = shapes_[size_t(cut_.shape_of(t.planes, t.rows, t.cols))];
        FftScratch& b = fft_scratch_[size_t(thread)];
        const Extent& n = s.n;
        const Extent box{t.planes + p_.templ[0] - 1, t.rows + p_.templ[1] - 1,
                         t.cols + p_.templ[2] - 1};
        float* real = b.real.data();
        Background* bg = b.background.get();   // LCC only

        load_box(t, box, n, real, bg);
        const bool background = bg != nullptr && bg->fit();
        const double energy = background ? bg->subtract(real, n) : bg != nullptr ? bg->energy() : 0;

        s.fft->forward(real, as_complex(b.spectrum));
        ks_.multiply_spectra(b.spectrum.data(), s.filter.data(), RealFft::complex_elems(n));
        s.fft->inverse(as_complex(b.spectrum), real);

        // The numerator, plus the background's correlation with the template (in double, one
        // rounding: no error beyond the transform's); kept in `real` too, for the check.
        if (background) bg->correlate(marginals_, {t.planes, t.rows, t.cols});
        for (int64_t q = 0; q < t.planes; ++q)
            for (int64_t r = 0; r < t.rows; ++r) {
                float* row = real + (q * n[1] + r) * n[2];
                if (background)
                    add_background(row, t.cols, bg->constant() + bg->along(0)[q] + bg->along(1)[r],
                                   bg->along(2));
                std::memcpy(t.num + q * t.num_plane + r * t.num_row, row,
                            sizeof(float) * size_t(t.cols));
            }

        if (bg != nullptr) {
            b.tile = t;
            b.n = n;
            b.bound = fft_error_bound(energy, volume(box), volume(n));
        }
        return true;
    }

    // Copies the box into the FFT buffer, zero-padded to the FFT extent n, accumulating the
    // background's sums when there is one. Only the box is read: the tile pipeline leaves stale
    // planes in x beyond the box of a short tile.
    static void load_box(const TileView& t, const Extent& box, const Extent& n, float* real,
                         Background* bg)
    {
        if (bg != nullptr) bg->begin(box);
        for (int64_t a = 0; a < n[0]; ++a) {
            float* dst_plane = real + a * n[1] * n[2];
            if (a >= box[0]) {
                std::memset(dst_plane, 0, sizeof(float) * size_t(n[1] * n[2]));
                continue;
            }
            for (int64_t i = 0; i < box[1]; ++i) {
                float* dst = dst_plane + i * n[2];
                const float* src = t.x + a * t.x_plane + i * t.x_row;
                if (bg != nullptr)
                    bg->copy_row(dst, src, a, i);
                else
                    std::memcpy(dst, src, sizeof(float) * size_t(box[2]));
                std::memset(dst + box[2], 0, sizeof(float) * size_t(n[2] - box[2]));
            }
            std::memset(dst_plane + box[1] * n[2], 0,
                        sizeof(float) * size_t((n[1] - box[1]) * n[2]));
        }
    }

    Problem p_;
    const KernelSet& ks_;
    TileRunner runner_;
    Cut cut_;
    ThreadPool pool_;       // tiles
    ThreadPool fft_pool_;   // FFTW's parallel loops
    FftGuard fft_guard_;    // FFTW's memory in set_template and execute (before shapes_: outlives them)
    std::vector<TileScratch> scratch_;
    std::vector<FftScratch> fft_scratch_;
    std::vector<Shape> shapes_;
    AlignedArray<float> taps_;
    TemplateMarginals marginals_;   // LCC: for the background's correlation
};

// The box sizes of the tiled variants: powers of two from these up (register_host_fourier).
constexpr int kSmallestBox[4] = {0, 0, 64, 16};
constexpr int kLargestBox[4] = {0, 0, 4096, 256};

// The largest output tile of a variant of largest box `box` (0: whole): per axis the whole
// output when its box fits the variant's limit, else limit - T + 1 (false when the limit is not
// above the template).
bool tile_of(const Problem& p, int box, Extent& tile)
{
    for (int a = 0; a < 3; ++a) {
        const int64_t limit = box == 0 || (p.dim == 2 && a == 0) ? INT64_MAX : box;
        if (p.out[a] + p.templ[a] - 1 <= limit)
            tile[a] = p.out[a];
        else if (limit > p.templ[a])
            tile[a] = limit - p.templ[a] + 1;
        else
            return false;
    }
    return true;
}

// A variant's plan for one problem: its tile pipeline (with the tile layout) and its cut into
// FFT shapes, made once and handed to the executor.
class FourierCandidate final : public Candidate {
public:
    FourierCandidate(const Problem& p, int box, const Extent& tile)
        : p_(p), box_(box), runner_(p, select_kernel_set(), tile, 1, 1),
          cut_(p, runner_.layout(), box == 0)
    {
    }

    bool within_budget() const { return cut_.fft_bytes <= kFftBudgetBytes; }

    // The variant of half this box (registered before it) leaves every axis untiled too when
    // each axis's box fits half of it: same tiles, same FFT sizes, same computation.
    bool repeats_smaller_variant() const override
    {
        const Problem& p = p_;
        if (box_ == 0 || box_ <= kSmallestBox[p.dim]) return false;
        for (int a = p.dim == 2 ? 1 : 0; a < 3; ++a)
            if (p.out[a] + p.templ[a] - 1 > box_ / 2) return false;
        return true;
    }

    double estimate_seconds() const override
    {
        const Problem& p = p_;
        const Cut& cut = cut_;
        const FourierCostModel m;
        double fft = 0, filters = 0;
        for (size_t i = 0; i < cut.shapes.size(); ++i) {
            fft += double(cut.shape_tiles[i]) * m.pair(cut.shapes[i], p.dim);
            filters += 0.5 * m.pair(cut.shapes[i], p.dim);
        }
        if (p.type == FLCC_STREAM) filters = 0;
        // The pipeline gathers whole boxes, short tiles included (and in 3D LCC makes sums
        // over the template's planes on whole box planes).
        const TileLayout& l = runner_.layout();
        double rows = 0, planes = 0;
        for (const Segment& s : l.segments[0]) {
            rows += double(s.length + p.templ[0] - 1);
            planes += double(s.length);
        }
        const double box_planes = double(l.segments[1].size() * l.segments[2].size());
        rows *= box_planes * double(l.in[1]);
        planes *= box_planes * double(l.in_plane);
        const double per_output = p.op == Op::conv ? m.per_output_conv
                                  : p.dim == 3     ? m.per_output_lcorr_3d
                                                   : m.per_output_lcorr_2d;
        const double gather = p.dim == 3 ? rows * (m.gather_row_3d + m.gather_3d * double(l.in_row))
                                         : rows * m.gather * double(l.in_row);
        const double sums = p.dim == 3 && p.op == Op::lcorr ? planes * m.plane_sums_3d : 0.0;
        const double pipeline = double(p.out_elems()) * per_output + gather + sums;
        if (cut.pool_threads == 1 && p.threads > 1) {
            const double speedup = std::max(1.0, m.fft_thread_efficiency * p.threads);
            return (fft + filters) / speedup + pipeline;
        }
        return (fft + filters + pipeline) / cut.pool_threads;
    }

    flcc_result create(std::unique_ptr<Executor>& out) const override
    {
        try {
            out = std::make_unique<FourierExecutor>(p_, runner_, cut_);
        } catch (const std::bad_alloc&) {
            return FLCC_ALLOC_FAILED;
        }
        return FLCC_SUCCESS;
    }

private:
    Problem p_;
    int box_;
    TileRunner runner_;
    Cut cut_;
};

class FourierSolver final : public Solver {
public:
    // box = 0: the whole variant.
    FourierSolver(int dim, int box) : dim_(dim), box_(box)
    {
        name_ = "host.fourier" + std::to_string(dim) + "." +
                (box ? "t" + std::to_string(box) : std::string("whole"));
    }

    const char* name() const override { return name_.c_str(); }
    flcc_platform platform() const override { return FLCC_HOST; }

    std::unique_ptr<Candidate> plan(const Problem& p) const override
    {
        if (p.dim != dim_) return nullptr;
        Extent tile;
        if (!tile_of(p, box_, tile)) return nullptr;
        auto c = std::make_unique<FourierCandidate>(p, box_, tile);
        if (!c->within_budget()) return nullptr;
        return c;
    }

private:
    int dim_, box_;
    std::string name_;
};

}  // namespace

int64_t fourier_template_preparations() { return template_preparations.load(); }

}  // namespace flcc::host

namespace flcc {

void register_host_fourier(SolverList& list)
{
    static std::vector<std::unique_ptr<host::FourierSolver>> solvers = [] {
        std::vector<std::unique_ptr<host::FourierSolver>> s;
        for (int dim : {2, 3}) {
            for (int b = host::kSmallestBox[dim]; b <= host::kLargestBox[dim]; b *= 2)
                s.push_back(std::make_unique<host::FourierSolver>(dim, b));
            s.push_back(std::make_unique<host::FourierSolver>(dim, 0));
        }
        return s;
    }();
    for (const auto& s : solvers) list.push_back(s.get());
}

}  // namespace flcc
