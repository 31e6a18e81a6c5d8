// The host direct solvers: the numerator is a register-blocked spatial correlation per tile.
// One solver per specialised size (geometry/specialised_sizes.def: square in 2D, cubic in 3D,
// the 3D ones running the square kernel of their size on each template slice) plus a generic
// one per dimension.
#include "geometry/specialised_sizes.h"
#include "host/kernels/kernel_set.h"
#include "host/thread_pool.h"
#include "host/tile_runner.h"
#include "plan/registry.h"
#include "plan/template.h"

#include <atomic>
#include <new>
#include <string>

namespace flcc::host {

namespace {

class DirectExecutor final : public Executor, private Numerator {
public:
    DirectExecutor(const Problem& p, const KernelSet& ks, CorrelateFn fn, Extent tile)
        : p_(p), fn_(fn), pool_(p.threads),
          runner_(p, ks, tile, ks.row_multiple, ks.block_cols, /*in_place=*/true), taps_(p.templ_elems())
    {
        for (int t = 0; t < pool_.size(); ++t) scratch_.push_back(runner_.make_scratch());
    }

    flcc_result set_template(const float* templ, bool constant) override
    {
        prepare_template(p_.op == Op::lcorr, templ, p_.templ_elems(), constant, taps_.data());
        tap_sum_ = 0;
        for (int64_t i = 0; i < p_.templ_elems(); ++i) tap_sum_ += taps_.data()[i];
        return FLCC_SUCCESS;
    }

    flcc_result execute(const float* image, float* out, int64_t count, MemorySpace) override
    {
        const int64_t tiles = runner_.layout().tiles_per_frame();
        std::atomic<bool> nonfinite{false};
        pool_.parallel_for(count * tiles, [&](int64_t task, int thread) {
            const int64_t f = task / tiles;
            if (!runner_.run(image + f * p_.image_elems(), out + f * p_.out_elems(), task % tiles,
                             scratch_[thread], *this, thread))
                nonfinite.store(true, std::memory_order_relaxed);
        });
        return nonfinite.load() ? FLCC_NONFINITE_INPUT : FLCC_SUCCESS;
    }

    int64_t memory_bytes() const override
    {
        return int64_t(scratch_.size()) * runner_.scratch_bytes() + 4 * taps_.size();
    }

private:
    const float* lcc_taps() const override { return taps_.data(); }
    double lcc_tap_sum() const override { return tap_sum_; }

    bool compute(const TileView& t, int) override
    {
        const int64_t slice = p_.templ[1] * p_.templ[2];
        bool finite = true;
        for (int64_t q = 0; q < t.planes; ++q)
            for (int64_t a = 0; a < p_.templ[0]; ++a) {
                // A non-finite partial sum stays non-finite: the last slice's store tells.
                const bool f = fn_(t.x + (q + a) * t.x_plane, t.x_row, taps_.data() + a * slice,
                                   int(p_.templ[1]), int(p_.templ[2]), t.num + q * t.num_plane,
                                   t.num_row, t.rows, t.cols, a > 0);
                if (a == p_.templ[0] - 1) finite = finite && f;
            }
        return finite;
    }

    Problem p_;
    CorrelateFn fn_;
    ThreadPool pool_;
    TileRunner runner_;
    std::vector<TileScratch> scratch_;
    AlignedArray<float> taps_;
    double tap_sum_ = 0;
};

// Output tile of the direct solvers: a few rows of a few hundred columns keeps the input box and
// the numerator block in L2 while each thread gets many tiles.
Extent direct_tile(const Problem& p)
{
    if (p.dim == 2) return {1, 128, 256};
    return {8, 16, 128};
}

// The candidate of a direct solver: its kernel set, kernel and tile.
class DirectCandidate final : public Candidate {
public:
    DirectCandidate(const Problem& p, const KernelSet& ks, CorrelateFn fn, bool specialised)
        : p_(p), ks_(ks), fn_(fn), specialised_(specialised), tile_(direct_tile(p))
    {
    }

    // Cost model: fused multiply-adds at 40 G/s per thread for kernels of 64-column blocks
    // (AVX-512), 20 G/s for 16-column blocks and 4 G/s below (the rate scales with the vector
    // width), the generic kernels at three quarters of that, plus the per-output cost of
    // gathering, window sums and finalisation.
    double estimate_seconds() const override
    {
        const Problem& p = p_;
        const double per_thread = ks_.block_cols >= 64 ? 40e9 : ks_.block_cols >= 16 ? 20e9 : 4e9;
        const double rate = per_thread * p.threads * (specialised_ ? 1.0 : 0.75);
        const double macs = double(p.out_elems()) * double(p.templ_elems());
        const double per_output = (p.op == Op::lcorr ? 2e-9 : 0.6e-9) / p.threads;
        return macs / rate + double(p.out_elems()) * per_output;
    }

    flcc_result create(std::unique_ptr<Executor>& out) const override
    {
        try {
            out = std::make_unique<DirectExecutor>(p_, ks_, fn_, tile_);
        } catch (const std::bad_alloc&) {
            return FLCC_ALLOC_FAILED;
        }
        return FLCC_SUCCESS;
    }

private:
    Problem p_;
    const KernelSet& ks_;
    CorrelateFn fn_;
    bool specialised_;
    Extent tile_;
};

// Both lists run the kernel set's square kernels (KernelSet::square[n]).
constexpr int kSquareKernels = int(sizeof(KernelSet::square) / sizeof(KernelSet::square[0]));
static_assert(geometry::kHostDirect2D.first >= 2 && geometry::kHostDirect2D.last < kSquareKernels &&
                  geometry::kHostDirect3D.first >= 2 && geometry::kHostDirect3D.last < kSquareKernels,
              "every specialised host size has a square kernel");

class DirectSolver final : public Solver {
public:
    // n = 0: generic.
    DirectSolver(int dim, int n) : dim_(dim), n_(n)
    {
        name_ = "host.direct" + std::to_string(dim) + "." + (n ? "k" + std::to_string(n) : "generic");
    }

    const char* name() const override { return name_.c_str(); }
    flcc_platform platform() const override { return FLCC_HOST; }

    std::unique_ptr<Candidate> plan(const Problem& p) const override
    {
        if (p.dim != dim_ || (n_ != 0 && !p.template_is_cube(n_))) return nullptr;
        const KernelSet& ks = select_kernel_set();
        return std::make_unique<DirectCandidate>(p, ks, n_ ? ks.square[n_] : ks.generic, n_ != 0);
    }

private:
    int dim_, n_;
    std::string name_;
};

}  // namespace

}  // namespace flcc::host

namespace flcc {

void register_host_direct(SolverList& list)
{
    static std::vector<std::unique_ptr<host::DirectSolver>> solvers = [] {
        std::vector<std::unique_ptr<host::DirectSolver>> s;
        for (int n = geometry::kHostDirect2D.first; n <= geometry::kHostDirect2D.last; ++n)
            s.push_back(std::make_unique<host::DirectSolver>(2, n));
        s.push_back(std::make_unique<host::DirectSolver>(2, 0));
        for (int n = geometry::kHostDirect3D.first; n <= geometry::kHostDirect3D.last; ++n)
            s.push_back(std::make_unique<host::DirectSolver>(3, n));
        s.push_back(std::make_unique<host::DirectSolver>(3, 0));
        return s;
    }();
    for (const auto& s : solvers) list.push_back(s.get());
}

}  // namespace flcc
