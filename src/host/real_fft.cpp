#include "host/real_fft.h"

#include "host/thread_pool.h"
#include "plan/error.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

#include <malloc.h>

namespace flcc::host {

// Memory FFTW is served from when the system refuses it: one block, handed out in 64-byte
// granules (first fit from a roving start, one header granule per allocation). Only failures
// reach it, so it favours simplicity over speed. Thread-safe.
class FftReserve {
public:
    explicit FftReserve(int64_t bytes)
        : granules_(size_t(std::max<int64_t>(bytes, kGranule)) / kGranule),
          used_((granules_ + 63) / 64, 0)
    {
        void* p = nullptr;
        if (posix_memalign(&p, kGranule, granules_ * kGranule) != 0) throw std::bad_alloc();
        base_ = static_cast<char*>(p);
    }
    ~FftReserve() { std::free(base_); }
    FftReserve(const FftReserve&) = delete;
    FftReserve& operator=(const FftReserve&) = delete;

    int64_t bytes() const { return int64_t(granules_ * kGranule); }

    bool owns(const void* p) const
    {
        const char* c = static_cast<const char*>(p);
        return c >= base_ && c < base_ + granules_ * kGranule;
    }

    // n bytes, 64-byte aligned, or nullptr when no run of granules is free.
    void* take(size_t n)
    {
        const size_t need = 1 + (n + kGranule - 1) / kGranule;
        std::lock_guard<std::mutex> lock(mutex_);
        if (need > granules_) return nullptr;
        // From the rover to the end, then the whole block (a free run may span the rover).
        for (size_t pass = 0; pass < 2; ++pass) {
            const size_t begin = pass == 0 ? rover_ : 0, end = granules_;
            size_t run = 0;
            for (size_t g = begin; g < end; ++g) {
                if (run == 0 && g % 64 == 0 && used_[g / 64] == ~uint64_t(0)) {
                    g += 63;   // a full word: no run starts in it
                    continue;
                }
                run = is_used(g) ? 0 : run + 1;
                if (run == need) {
                    const size_t first = g + 1 - need;
                    for (size_t i = first; i <= g; ++i) set_used(i, true);
                    rover_ = (g + 1) % granules_;
                    ++live_;
                    Header* h = reinterpret_cast<Header*>(base_ + first * kGranule);
                    h->granules = need;
                    h->magic = kMagic;
                    return base_ + (first + 1) * kGranule;
                }
            }
        }
        return nullptr;
    }

    // Returns a block from take; its size in bytes (usable part).
    size_t give(void* p)
    {
        Header* h = reinterpret_cast<Header*>(static_cast<char*>(p) - kGranule);
        std::lock_guard<std::mutex> lock(mutex_);
        if (h->magic != kMagic) return 0;   // not a live block of ours: leave it alone
        h->magic = 0;
        const size_t first = size_t(reinterpret_cast<char*>(h) - base_) / kGranule;
        for (size_t i = first; i < first + h->granules; ++i) set_used(i, false);
        --live_;
        return (h->granules - 1) * kGranule;
    }

    static size_t usable(const void* p)
    {
        const Header* h = reinterpret_cast<const Header*>(static_cast<const char*>(p) - kGranule);
        return (h->granules - 1) * kGranule;
    }

    size_t live() const
    {
        std::lock_guard<std::mutex> lock(mutex_);
        return live_;
    }

    // The registry of reserves (FftMemory): an intrusive list, and whether the reserve's owner
    // let go of it while FFTW still held blocks of it (it is then freed with its last block).
    FftReserve* next = nullptr;
    bool orphaned = false;

private:
    static constexpr size_t kGranule = 64;
    static constexpr uint64_t kMagic = 0x464c43435245534bull;
    struct Header {
        uint64_t granules;
        uint64_t magic;
    };

    bool is_used(size_t g) const { return (used_[g / 64] >> (g % 64)) & 1; }
    void set_used(size_t g, bool u)
    {
        const uint64_t bit = uint64_t(1) << (g % 64);
        used_[g / 64] = u ? used_[g / 64] | bit : used_[g / 64] & ~bit;
    }

    mutable std::mutex mutex_;
    char* base_ = nullptr;
    size_t granules_;
    std::vector<uint64_t> used_;
    size_t rover_ = 0;
    size_t live_ = 0;
};

namespace {

// FFTW's planner holds far less than this at once for the transforms FLCC plans (the FFTW
// planner's buffers are bounded whatever the transform's size); the margin covers FFTW's
// threads and versions.
constexpr int64_t kPlannerReserveBytes = int64_t(16) << 20;

// A guard's reserve is a multiple of what was measured, plus a floor, so that the reserve holds
// even when FFTW's blocks land in it scattered (one header granule each).
constexpr int64_t kExecReserveFactor = 2;
constexpr int64_t kExecReserveFloor = int64_t(64) << 10;

// This thread's FFTW context: a plain struct, so that the allocator reads it without a TLS
// wrapper call. probe/probe_seen detect whether FFTW calls FLCC's allocator at all.
struct Context {
    FftGuard* guard;
    const ThreadPool* pool;
    int64_t live, peak;   // bytes FFTW holds on this thread within the scope
    bool probe, probe_seen;
};
thread_local Context t_ctx = {nullptr, nullptr, 0, 0, false, false};

// Guards every call into FFTW's planner (plan, destroy, thread set-up, time limit, wisdom).
std::mutex& planner_mutex()
{
    static std::mutex m;
    return m;
}

}  // namespace

// The allocator's state: every reserve (so a freed block finds its own), the process's planner
// reserve, and how many reserve blocks FFTW holds (zero almost always: frees skip the search).
struct FftMemory {
    static std::mutex& registry_mutex()
    {
        static std::mutex m;
        return m;
    }
    static FftReserve*& registry()
    {
        static FftReserve* head = nullptr;
        return head;
    }
    static std::atomic<int64_t>& blocks_live()
    {
        static std::atomic<int64_t> n{0};
        return n;
    }
    static std::atomic<FftReserve*>& process_reserve()
    {
        static std::atomic<FftReserve*> r{nullptr};
        return r;
    }

    static void add(FftReserve* r)
    {
        std::lock_guard<std::mutex> lock(registry_mutex());
        r->next = registry();
        registry() = r;
    }

    // Drops a reserve: freed now, or with its last block when FFTW still holds some.
    static void drop(FftReserve* r)
    {
        if (r == nullptr) return;
        std::lock_guard<std::mutex> lock(registry_mutex());
        if (r->live() != 0) {
            r->orphaned = true;
            return;
        }
        unlink(r);
        delete r;
    }

    static void unlink(FftReserve* r)
    {
        for (FftReserve** p = &registry(); *p != nullptr; p = &(*p)->next)
            if (*p == r) {
                *p = r->next;
                return;
            }
    }

    // The process's planner reserve, made on first use (caller holds the planner mutex).
    static void ensure_process_reserve()
    {
        if (process_reserve().load(std::memory_order_acquire) != nullptr) return;
        auto r = std::make_unique<FftReserve>(kPlannerReserveBytes);
        add(r.get());
        process_reserve().store(r.release(), std::memory_order_release);
    }

    static void* rescue(FftGuard& g, size_t n)
    {
        void* p = g.reserve_ != nullptr ? g.reserve_->take(n) : nullptr;
        if (p == nullptr)
            if (FftReserve* r = process_reserve().load(std::memory_order_acquire)) p = r->take(n);
        if (p != nullptr) blocks_live().fetch_add(1, std::memory_order_relaxed);
        g.failed_.store(true, std::memory_order_release);   // even when no reserve could serve
        return p;
    }

    // Returns a reserve block; false when p is not one.
    static bool give_back(void* p, size_t& bytes)
    {
        std::lock_guard<std::mutex> lock(registry_mutex());
        for (FftReserve* r = registry(); r != nullptr; r = r->next)
            if (r->owns(p)) {
                bytes = r->give(p);
                blocks_live().fetch_sub(1, std::memory_order_relaxed);
                if (r->orphaned && r->live() == 0) {
                    unlink(r);
                    delete r;
                }
                return true;
            }
        return false;
    }
};

FftGuard::~FftGuard() { FftMemory::drop(reserve_); }

void FftGuard::reserve_for(int threads)
{
    FftMemory::drop(reserve_);
    reserve_ = nullptr;
    const int64_t peak = thread_peak();
    if (peak <= 0) return;
    const int64_t bytes = kExecReserveFactor * int64_t(std::max(threads, 1)) * peak + kExecReserveFloor;
    auto r = std::make_unique<FftReserve>(bytes);
    FftMemory::add(r.get());
    reserve_ = r.release();
}

int64_t FftGuard::reserve_bytes() const { return reserve_ != nullptr ? reserve_->bytes() : 0; }

FftScope::FftScope(FftGuard& guard, const ThreadPool* pool)
    : guard_(t_ctx.guard), pool_(t_ctx.pool), live_(t_ctx.live), peak_(t_ctx.peak)
{
    // Nested in a scope of the same guard (a parallel loop run on the calling thread), the
    // thread's count goes on; otherwise it starts afresh.
    if (t_ctx.guard != &guard) t_ctx.live = t_ctx.peak = 0;
    t_ctx.guard = &guard;
    t_ctx.pool = pool;
}

FftScope::~FftScope()
{
    FftGuard* g = t_ctx.guard;
    if (g != guard_) {
        int64_t seen = g->thread_peak_.load(std::memory_order_relaxed);
        while (t_ctx.peak > seen &&
               !g->thread_peak_.compare_exchange_weak(seen, t_ctx.peak, std::memory_order_relaxed)) {
        }
        t_ctx.live = live_;
        t_ctx.peak = peak_;
    }
    t_ctx.guard = guard_;
    t_ctx.pool = pool_;
}

}  // namespace flcc::host

using flcc::host::FftMemory;
using flcc::host::t_ctx;

// FFTW's kernel allocator (see real_fft.h). FFTW's own aligns to its SIMD width; 64 bytes covers
// every width FFTW builds with.
extern "C" __attribute__((visibility("default"))) void* fftwf_kernel_malloc(size_t n)
{
    void* p = nullptr;
    if (posix_memalign(&p, 64, n == 0 ? 1 : n) != 0) p = nullptr;
    flcc::host::Context& c = t_ctx;
    if (c.probe) c.probe_seen = true;
    if (c.guard == nullptr) return p;
    size_t bytes = 0;
    if (p != nullptr) {
        bytes = malloc_usable_size(p);
    } else {
        p = FftMemory::rescue(*c.guard, n);
        if (p != nullptr) bytes = flcc::host::FftReserve::usable(p);
    }
    c.live += int64_t(bytes);
    c.peak = std::max(c.peak, c.live);
    return p;
}

extern "C" __attribute__((visibility("default"))) void fftwf_kernel_free(void* p)
{
    if (p == nullptr) return;
    size_t bytes = 0;
    const bool reserve_block = FftMemory::blocks_live().load(std::memory_order_acquire) != 0 &&
                               FftMemory::give_back(p, bytes);
    if (!reserve_block) {
        if (t_ctx.guard != nullptr) bytes = malloc_usable_size(p);
        std::free(p);
    }
    if (t_ctx.guard != nullptr) t_ctx.live -= int64_t(bytes);
}

namespace flcc::host {

namespace {

// FFTW's parallel loops (fftwf_threads_set_callback): on the scope's pool, each job in a scope
// of the caller's guard; outside FLCC, on FLCC's workers; on the calling thread when no other
// thread can take them.
void parallel_loop(void* (*work)(char*), char* jobdata, size_t elsize, int njobs, void*)
{
    const Context c = t_ctx;
    const auto job = [&](int64_t i, int) {
        if (c.guard != nullptr) {
            FftScope scope(*c.guard, c.pool);
            work(jobdata + size_t(i) * elsize);
        } else {
            work(jobdata + size_t(i) * elsize);
        }
    };
    if (njobs > 1 && c.pool != nullptr && c.pool->size() > 1) {
        c.pool->parallel_for(njobs, job);
        return;
    }
    if (njobs > 1 && c.guard == nullptr) {
        try {
            const ThreadPool pool(njobs);
            pool.parallel_for(njobs, job);
            return;
        } catch (...) {   // no worker could start: the loop runs here
        }
    }
    for (int i = 0; i < njobs; ++i) job(i, 0);
}

// FFTW's threads, set up once (caller holds the planner mutex). Wisdom naming FFTW's threaded
// solvers imports only once they are registered, and the wisdom header differs with and
// without them, so imports and exports call this too.
bool threads_ready()
{
    static const bool ready = [] {
        if (fftwf_init_threads() == 0) return false;
        fftwf_threads_set_callback(&parallel_loop, nullptr);
        return true;
    }();
    return ready;
}

// Before a planner call (caller holds the planner mutex): the planner reserve exists, or, when
// FFTW does not allocate through FLCC, could be allocated now. Throws std::bad_alloc.
void prepare_planner_call()
{
    try {
        if (fft_allocator_in_effect()) {
            FftMemory::ensure_process_reserve();
            return;
        }
        void* probe = std::malloc(size_t(kPlannerReserveBytes));
        if (probe == nullptr) throw std::bad_alloc();
        std::free(probe);
    } catch (const std::bad_alloc&) {
        set_detail("out of memory for FFTW's planner reserve (%lld MiB)",
                   (long long)(kPlannerReserveBytes >> 20));
        throw;
    }
}

// Wisdom text waiting for the next plan (defer_fft_wisdom); caller holds the planner mutex.
std::string& deferred_wisdom()
{
    static std::string text;
    return text;
}

void import_deferred()
{
    std::string& text = deferred_wisdom();
    if (text.empty()) return;
    threads_ready();
    fftwf_import_wisdom_from_string(text.c_str());   // refused text: FFTW plans by measuring
    text.clear();
}

// FFTW's dimensions of n: the axes longer than 1 (at least one axis).
std::vector<int> fft_dims(const Extent& n)
{
    std::vector<int> d;
    for (int64_t v : n)
        if (v > 1) d.push_back(int(v));
    if (d.empty()) d.push_back(1);
    return d;
}

// Planning with FFTW_MEASURE times candidate algorithms (seconds for the largest boxes; FFTW
// remembers them for the process). The limit caps one plan's search; past it FFTW falls back to
// its estimates, which pick slower plans.
constexpr double kPlanSecondsLimit = 5.0;

std::string extent_text(const std::vector<int>& d)
{
    std::string s;
    for (size_t i = 0; i < d.size(); ++i) s += (i ? "x" : "") + std::to_string(d[i]);
    return s;
}

}  // namespace

bool fft_allocator_in_effect()
{
    static const bool in_effect = [] {
        t_ctx.probe = true;
        t_ctx.probe_seen = false;
        void* p = fftwf_malloc(1);   // FFTW's public allocator calls its kernel allocator
        const bool seen = t_ctx.probe_seen;
        t_ctx.probe = false;
        fftwf_free(p);
        return seen;
    }();
    return in_effect;
}

int64_t fft_reserve_blocks_live() { return FftMemory::blocks_live().load(); }

int64_t RealFft::complex_elems(const Extent& n)
{
    const std::vector<int> d = fft_dims(n);
    int64_t c = d.back() / 2 + 1;
    for (size_t i = 0; i + 1 < d.size(); ++i) c *= d[i];
    return c;
}

RealFft::RealFft(const Extent& n, float* real, fftwf_complex* spectrum, const ThreadPool& pool,
                 bool measure)
{
    const std::vector<int> d = fft_dims(n);
    const unsigned flags = measure ? FFTW_MEASURE : FFTW_ESTIMATE;
    std::lock_guard<std::mutex> lock(planner_mutex());
    prepare_planner_call();
    FftGuard guard;
    bool failed;
    {
        FftScope scope(guard, &pool);
        import_deferred();
        fftwf_plan_with_nthreads(threads_ready() ? pool.size() : 1);
        fftwf_set_timelimit(kPlanSecondsLimit);
        // The forward transform may destroy its input: the caller's box buffer is scratch.
        forward_ = fftwf_plan_dft_r2c(int(d.size()), d.data(), real, spectrum,
                                      flags | FFTW_DESTROY_INPUT);
        inverse_ = fftwf_plan_dft_c2r(int(d.size()), d.data(), spectrum, real, flags);
        failed = guard.take_failure();
        if (!failed && forward_ != nullptr && inverse_ != nullptr) return;
        // Plans made with reserve memory go at once, so the reserve is free again.
        if (forward_ != nullptr) fftwf_destroy_plan(forward_);
        if (inverse_ != nullptr) fftwf_destroy_plan(inverse_);
        guard.take_failure();
    }
    if (failed)
        set_detail("out of memory in FFTW's planner (%s real transform, %d threads)",
                   extent_text(d).c_str(), pool.size());
    else
        set_detail("FFTW made no plan for a %s real transform", extent_text(d).c_str());
    throw std::bad_alloc();
}

RealFft::~RealFft()
{
    std::lock_guard<std::mutex> lock(planner_mutex());
    FftGuard guard;   // destroying allocates nothing that outlives the call
    FftScope scope(guard, nullptr);
    fftwf_destroy_plan(forward_);
    fftwf_destroy_plan(inverse_);
}

std::string export_fft_wisdom()
{
    std::lock_guard<std::mutex> lock(planner_mutex());
    prepare_planner_call();
    FftGuard guard;
    FftScope scope(guard, nullptr);
    // FFTW's wisdom header hashes the set of its registered solvers, which its threads extend:
    // the export is made with them, as every import and plan is, so that any export imports back.
    threads_ready();
    import_deferred();   // what was read but not used yet is still wisdom to pass on
    // The text comes from malloc (NULL when refused), to be freed with fftwf_free.
    const std::unique_ptr<char, void (*)(void*)> text(fftwf_export_wisdom_to_string(), fftwf_free);
    if (text == nullptr || guard.take_failure()) {
        set_detail("out of memory exporting FFTW's wisdom");
        throw std::bad_alloc();
    }
    return std::string(text.get());
}

bool import_fft_wisdom(const std::string& text)
{
    std::lock_guard<std::mutex> lock(planner_mutex());
    prepare_planner_call();
    FftGuard guard;
    FftScope scope(guard, nullptr);
    threads_ready();
    const bool ok = fftwf_import_wisdom_from_string(text.c_str()) != 0;
    if (guard.take_failure()) {
        set_detail("out of memory importing FFTW's wisdom");
        throw std::bad_alloc();
    }
    return ok;
}

void defer_fft_wisdom(const std::string& text)
{
    std::lock_guard<std::mutex> lock(planner_mutex());
    deferred_wisdom() = text;
}

void forget_fft_wisdom()
{
    std::lock_guard<std::mutex> lock(planner_mutex());
    deferred_wisdom().clear();
    FftGuard guard;   // forgetting frees FFTW's tables; what it allocates anew is kept
    FftScope scope(guard, nullptr);
    fftwf_forget_wisdom();
}

std::unique_ptr<RealFft> reserved_fft(const Extent& n, float* real, fftwf_complex* spectrum,
                                      FftGuard& guard, int threads, const char* what)
{
    const ThreadPool pool(1);
    auto fft = std::make_unique<RealFft>(n, real, spectrum, pool, false);
    if (fft_allocator_in_effect()) {
        {
            FftScope scope(guard, nullptr);
            fft->forward(real, spectrum);
            fft->inverse(spectrum, real);
        }
        if (guard.take_failure()) {
            set_detail("out of memory in FFTW executing %s at plan creation", what);
            throw std::bad_alloc();
        }
        guard.reserve_for(std::max(threads, 1));
    }
    return fft;
}

}  // namespace flcc::host
