// FFTW3 single-precision real transforms for the host Fourier solvers, and the rules FLCC keeps
// when it calls FFTW.
//
// Planner: FFTW's planner is not thread-safe and its thread count (fftwf_plan_with_nthreads) is
// global state, so every planner call (plan, destroy, wisdom import, export and forget, thread
// set-up) is made here, behind one process-wide mutex. Executing a plan on new arrays
// (fftwf_execute_dft_r2c/c2r) is thread-safe, so one plan serves every worker thread.
//
// Memory: FFTW cannot fail an allocation (its internal allocator aborts the process when malloc
// returns NULL, and allocates at execution as well as at planning). FLCC therefore provides
// FFTW's kernel allocator (fftwf_kernel_malloc / fftwf_kernel_free, the one place FFTW gets
// memory; the definitions here take precedence over libfftw3f's own when libflcc comes first in
// the symbol lookup order, or when FFTW is linked statically). Every FLCC call into FFTW runs in
// an FftScope naming an FftGuard. When the system refuses FFTW memory inside a scope, the
// allocation is served from a reserve (the guard's own, then the process's planner reserve,
// both allocated before FFTW was called), FFTW finishes its work normally, and the guard
// reports the failure: the FLCC call then undoes what it made and returns FLCC_ALLOC_FAILED.
// Outside any scope (FFTW called by another part of the program) the allocator behaves as
// FFTW's own. Reserves are sized to the most FFTW holds at once: the planner reserve covers
// FFTW's planner for the transforms FLCC plans, and each Fourier executor reserves what its
// transforms were measured to hold when it ran them once at creation.
//
// Threads: FFTW's parallel loops run on FLCC's worker threads (fftwf_threads_set_callback), not
// on threads FFTW starts itself (FFTW ignores a failure to start one and then waits for it
// forever), so that FFTW's threaded plans never start a thread at execution and their
// allocations stay inside the caller's scope. A loop runs on the pool named by the scope, on
// FLCC's workers when FFTW is called outside FLCC, and on the calling thread when the workers
// are busy or cannot start.
#pragma once

#include "plan/problem.h"

#include <fftw3.h>

#include <atomic>
#include <memory>
#include <cstdint>
#include <string>

namespace flcc::host {

class ThreadPool;
class FftReserve;

// Collects what FFTW did with memory while scopes naming it were active: whether a reserve had
// to serve it (a failure), and the most bytes FFTW held at once on one thread.
class FftGuard {
public:
    FftGuard() = default;
    ~FftGuard();
    FftGuard(const FftGuard&) = delete;
    FftGuard& operator=(const FftGuard&) = delete;

    // Gives the guard a reserve of its own (replacing any), tried before the process's: room for
    // `threads` threads each holding thread_peak() bytes, with a margin; none when FFTW held
    // nothing. Throws std::bad_alloc when it cannot be allocated.
    void reserve_for(int threads);
    int64_t reserve_bytes() const;

    // True when a reserve served FFTW since the last call; clears the flag.
    bool take_failure() { return failed_.exchange(false, std::memory_order_acq_rel); }

    // The most bytes FFTW held at once on any one thread within one scope of this guard.
    int64_t thread_peak() const { return thread_peak_.load(std::memory_order_relaxed); }

private:
    friend struct FftMemory;
    friend class FftScope;
    FftReserve* reserve_ = nullptr;
    std::atomic<bool> failed_{false};
    std::atomic<int64_t> thread_peak_{0};
};

// While alive, FFTW called on this thread allocates under `guard` and runs its parallel loops on
// `pool` (null: on the calling thread). Scopes nest; the innermost one rules.
class FftScope {
public:
    FftScope(FftGuard& guard, const ThreadPool* pool);
    ~FftScope();
    FftScope(const FftScope&) = delete;
    FftScope& operator=(const FftScope&) = delete;

private:
    FftGuard* guard_;
    const ThreadPool* pool_;
    int64_t live_, peak_;
};

// Forward (real to complex) and inverse (complex to real, unnormalised) transforms of one real
// extent n (planes, rows, cols), out of place, real data packed (cols fastest). Axes of size 1
// are dropped from the transform; the spectrum holds complex_elems(n) values in FFTW's
// half-spectrum layout. Arrays handed to forward/inverse must be 64-byte aligned, like the
// planning arrays; both transforms may destroy their input. forward/inverse run inside an
// FftScope of the caller's (whose pool has the plan's thread count).
class RealFft {
public:
    // Plans with FFTW_MEASURE (which overwrites real and spectrum) or FFTW_ESTIMATE, on as
    // many threads as `pool` has (FFTW's parallel loops then run on it). Throws std::bad_alloc,
    // with the error detail set, when memory runs out in FFTW or FFTW makes no plan.
    RealFft(const Extent& n, float* real, fftwf_complex* spectrum, const ThreadPool& pool,
            bool measure);
    ~RealFft();
    RealFft(const RealFft&) = delete;
    RealFft& operator=(const RealFft&) = delete;

    void forward(float* real, fftwf_complex* spectrum) const
    {
        fftwf_execute_dft_r2c(forward_, real, spectrum);
    }
    void inverse(fftwf_complex* spectrum, float* real) const
    {
        fftwf_execute_dft_c2r(inverse_, spectrum, real);
    }

    static int64_t complex_elems(const Extent& n);

private:
    fftwf_plan forward_ = nullptr, inverse_ = nullptr;
};

// A one-threaded FFTW_ESTIMATE transform pair for extent n, run once on the planning arrays so
// that `guard` reserves what FFTW holds while it executes, for `threads` threads at once (when
// FLCC's allocator is in effect): the set-up of the small per-plan transforms (batch
// preprocessing, peak refinement). Throws std::bad_alloc, with the detail naming `what`, when
// FFTW runs out of memory.
std::unique_ptr<RealFft> reserved_fft(const Extent& n, float* real, fftwf_complex* spectrum,
                                      FftGuard& guard, int threads, const char* what);

// True when FFTW allocates through FLCC's allocator in this process (see the header comment).
// When it does not (libfftw3f ahead of libflcc in the lookup order), FLCC only checks before
// each planner call that the planner reserve could be allocated, and an allocation that fails
// inside FFTW still aborts the process.
bool fft_allocator_in_effect();

// Blocks of any reserve that FFTW holds now (tests check that failed calls return them).
int64_t fft_reserve_blocks_live();

// FFTW's own wisdom (the algorithms its FFTW_MEASURE planning chose), as text and back, and
// forgotten. FLCC's wisdom carries it, so that a plan found there also makes its transforms
// without FFTW timing them again. import returns false for text FFTW does not accept; export and
// import throw std::bad_alloc when memory runs out.
// defer keeps the text and imports it when the next transform is planned (ignoring text FFTW
// refuses): a plan whose solver needs no FFT then pays nothing for it (FFTW's import of a
// typical file costs more than a wisdom hit may).
std::string export_fft_wisdom();
bool import_fft_wisdom(const std::string& text);
void defer_fft_wisdom(const std::string& text);
void forget_fft_wisdom();

}  // namespace flcc::host
