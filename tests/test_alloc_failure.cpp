// Allocation-failure injection: every allocation the process makes is counted (operator new in
// all its forms, and the malloc family, which FFTW reaches through FLCC's FFTW allocator), and
// the k-th one made inside a library call fails. For every k reached by plan creation,
// execution and destruction of each host solver family (2D and 3D, convolution and LCC, SINGLE
// and STREAM, forced by name), and by the wisdom calls, the call must return FLCC_ALLOC_FAILED
// (or succeed where the library has a documented way around the failure), hold no allocation
// it did not hold before, and the next call without injection must succeed with bitwise the
// output of an undisturbed plan. Then: memory limits (RLIMIT_AS) in child processes, which must
// survive every limit with FLCC_SUCCESS or FLCC_ALLOC_FAILED.
//
// FLCC_TEST_BACKTRACE=1 prints the stack of every injected failure (to find an allocation).
//
// Sanitizer builds own the malloc family: there only operator new is replaced, so FFTW's
// allocations are not injected and the memory-limit tests are skipped.
#include "flcc.h"
#include "host/real_fft.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include <execinfo.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define FLCC_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define FLCC_TEST_SANITIZED 1
#endif
#endif

namespace {

// The counters. Armed, every allocation counts and the fail_at-th one fails; live counts the
// blocks the replaced functions handed out and have not had back (armed or not).
std::atomic<bool> g_armed{false};
std::atomic<long> g_count{0};
std::atomic<long> g_fail_at{0};
std::atomic<bool> g_injected{false};
std::atomic<long> g_live{0};

// False when this allocation is the one to fail.
bool allow() noexcept
{
    if (!g_armed.load(std::memory_order_relaxed)) return true;
    const long k = g_count.fetch_add(1, std::memory_order_relaxed) + 1;
    if (k != g_fail_at.load(std::memory_order_relaxed)) return true;
    g_injected.store(true, std::memory_order_relaxed);
    if (std::getenv("FLCC_TEST_BACKTRACE") != nullptr) {   // where each injected failure is
        void* frames[40];
        backtrace_symbols_fd(frames, backtrace(frames, 40), 2);
    }
    return false;
}

}  // namespace

#ifndef FLCC_TEST_SANITIZED

// The malloc family, on glibc's own functions. Every other allocator (operator new, std::thread,
// FFTW through FLCC) ends here.
extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
void __libc_free(void*);

void* malloc(size_t n)
{
    if (!allow()) return nullptr;
    void* p = __libc_malloc(n);
    if (p != nullptr) g_live.fetch_add(1, std::memory_order_relaxed);
    return p;
}
void* calloc(size_t n, size_t m)
{
    if (!allow()) return nullptr;
    void* p = __libc_calloc(n, m);
    if (p != nullptr) g_live.fetch_add(1, std::memory_order_relaxed);
    return p;
}
void* realloc(void* p, size_t n)
{
    if (p == nullptr) return malloc(n);
    if (n == 0) {
        free(p);
        return nullptr;
    }
    if (!allow()) return nullptr;
    return __libc_realloc(p, n);   // the block stays one live block
}
void free(void* p)
{
    if (p == nullptr) return;
    g_live.fetch_sub(1, std::memory_order_relaxed);
    __libc_free(p);
}
void* memalign(size_t align, size_t n)
{
    if (!allow()) return nullptr;
    void* p = __libc_memalign(align, n);
    if (p != nullptr) g_live.fetch_add(1, std::memory_order_relaxed);
    return p;
}
void* aligned_alloc(size_t align, size_t n) { return memalign(align, n); }
int posix_memalign(void** out, size_t align, size_t n)
{
    void* p = memalign(align, n);
    if (p == nullptr) return ENOMEM;
    *out = p;
    return 0;
}
void* valloc(size_t n) { return memalign(size_t(sysconf(_SC_PAGESIZE)), n); }
}  // extern "C"

static void* counted_new(size_t n, size_t align) noexcept
{
    if (n == 0) n = 1;
    return align <= alignof(std::max_align_t) ? malloc(n) : memalign(align, n);
}
static void counted_delete(void* p) noexcept { free(p); }

#else

static void* counted_new(size_t n, size_t align) noexcept
{
    if (!allow()) return nullptr;
    if (n == 0) n = 1;
    void* p = align <= alignof(std::max_align_t)
                  ? std::malloc(n)
                  : std::aligned_alloc(align, (n + align - 1) / align * align);
    if (p != nullptr) g_live.fetch_add(1, std::memory_order_relaxed);
    return p;
}
static void counted_delete(void* p) noexcept
{
    if (p == nullptr) return;
    g_live.fetch_sub(1, std::memory_order_relaxed);
    std::free(p);
}

#endif

// Every form of operator new and delete (a form left to the runtime would pair its allocation
// with a replaced deallocation, or the reverse).
void* operator new(size_t n)
{
    if (void* p = counted_new(n, 0)) return p;
    throw std::bad_alloc();
}
void* operator new[](size_t n) { return operator new(n); }
void* operator new(size_t n, const std::nothrow_t&) noexcept { return counted_new(n, 0); }
void* operator new[](size_t n, const std::nothrow_t&) noexcept { return counted_new(n, 0); }
void* operator new(size_t n, std::align_val_t a)
{
    if (void* p = counted_new(n, size_t(a))) return p;
    throw std::bad_alloc();
}
void* operator new[](size_t n, std::align_val_t a) { return operator new(n, a); }
void* operator new(size_t n, std::align_val_t a, const std::nothrow_t&) noexcept
{
    return counted_new(n, size_t(a));
}
void* operator new[](size_t n, std::align_val_t a, const std::nothrow_t&) noexcept
{
    return counted_new(n, size_t(a));
}
void operator delete(void* p) noexcept { counted_delete(p); }
void operator delete[](void* p) noexcept { counted_delete(p); }
void operator delete(void* p, size_t) noexcept { counted_delete(p); }
void operator delete[](void* p, size_t) noexcept { counted_delete(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { counted_delete(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { counted_delete(p); }
void operator delete(void* p, std::align_val_t) noexcept { counted_delete(p); }
void operator delete[](void* p, std::align_val_t) noexcept { counted_delete(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { counted_delete(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { counted_delete(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept
{
    counted_delete(p);
}
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept
{
    counted_delete(p);
}

namespace {

// Runs f with the k-th allocation failing (k = 0: none fails, allocations counted); returns
// f's result. injected() then says whether the k-th allocation was reached.
template <class F>
flcc_result with_failure(long k, F&& f)
{
    g_count.store(0);
    g_fail_at.store(k);
    g_injected.store(false);
    g_armed.store(true);
    const flcc_result r = f();
    g_armed.store(false);
    return r;
}
bool injected() { return g_injected.load(); }

// Totals over the whole test program, reported at the end.
long g_survived = 0;   // injected failures the library returned from
long g_calls = 0;      // calls run with an injection armed

struct Case {
    const char* method;   // nullptr: the planner picks (ESTIMATE)
    flcc_op op;
    int dim;
    flcc_type type;
};

struct Problem {
    flcc_size image, templ;
    int count;   // frames per exec
    size_t image_elems, templ_elems, out_elems;
};

Problem problem_of(const Case& c)
{
    Problem p;
    p.count = c.type == FLCC_STREAM ? 2 : 1;
    if (c.dim == 2) {
        p.image = {19, 22, 1};
        p.templ = {3, 3, 1};
    } else {
        p.image = {4, 5, 6};
        p.templ = {2, 2, 2};
    }
    p.image_elems = size_t(p.image.h) * size_t(p.image.w) * size_t(p.image.d);
    p.templ_elems = size_t(p.templ.h) * size_t(p.templ.w) * size_t(p.templ.d);
    const size_t oh = size_t(p.image.h + p.templ.h - 1), ow = size_t(p.image.w + p.templ.w - 1),
                 od = c.dim == 2 ? 1 : size_t(p.image.d + p.templ.d - 1);
    p.out_elems = oh * ow * od;
    return p;
}

flcc_options options_of(const Case& c)
{
    flcc_options o;
    flcc_options_init(&o);
    o.type = c.type;
    o.platform = FLCC_HOST;
    o.rigor = FLCC_ESTIMATE;
    // 2D: the worker pool, and FFTW's parallel loops in the whole variant. 3D plans on one
    // thread: FFTW's threaded 3D planning adds thousands of allocations and nothing new.
    o.threads = c.dim == 2 ? 2 : 1;
    o.method = c.method;
    return o;
}

flcc_result create(flcc_plan* plan, const Case& c)
{
    const Problem p = problem_of(c);
    const flcc_options o = options_of(c);
    return flcc_plan_create(plan, c.op, c.dim, p.image, p.templ, &o);
}

flcc_result execute(flcc_plan plan, const Case& c, const std::vector<float>& image,
                    const std::vector<float>& templ, std::vector<float>& out)
{
    const int count = problem_of(c).count;
    return c.op == FLCC_CONV ? flcc_conv_exec(plan, image.data(), templ.data(), out.data(), count)
                             : flcc_lcorr_exec(plan, image.data(), templ.data(), out.data(), count);
}

std::vector<float> data(size_t n, unsigned seed)
{
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) {
        seed = seed * 1664525u + 1013904223u;
        v[i] = float(seed >> 8) / float(1 << 24);
    }
    return v;
}

std::string name_of(const Case& c)
{
    return std::string(c.method ? c.method : "(ESTIMATE)") + (c.op == FLCC_CONV ? " conv" : " lcorr") +
           (c.type == FLCC_STREAM ? " stream" : " single");
}

// What a failed call may hold afterwards: nothing beyond what it held before (live blocks of
// the replaced allocators, and FFTW blocks served from FLCC's reserves).
struct Held {
    long live = g_live.load();
    int64_t reserve = flcc::host::fft_reserve_blocks_live();
};

void check_nothing_held(const Held& before, const Held& after)
{
    CHECK(after.live == before.live);
    CHECK(after.reserve == before.reserve);
}

// Right after a failed plan creation: as many blocks held as before. FFTW's planner replaces its
// table of unfinished solutions at the end of every planning (the new one is FFTW's state until
// the next planning frees it); when a reserve served that table, a system block became a
// reserve block. The next planning frees it: then nothing may be held (check_nothing_held).
void check_no_more_held(const Held& before, const Held& after)
{
    CHECK(after.live + after.reserve == before.live + before.reserve);
}

struct Counts {
    long create = 0, exec_new_template = 0, exec_same_template = 0, destroy = 0;
};

// Every k of plan creation; returns how many allocations an undisturbed creation makes.
long inject_create(const Case& c)
{
    for (long k = 1;; ++k) {
        const Held before;
        flcc_plan plan = reinterpret_cast<flcc_plan>(&plan);   // not NULL: a failure must clear it
        const flcc_result r = with_failure(k, [&] { return create(&plan, c); });
        const Held after;
        if (!injected()) {
            REQUIRE(r == FLCC_SUCCESS);
            REQUIRE(flcc_destroy(plan) == FLCC_SUCCESS);
            return k - 1;
        }
        ++g_calls;
        char detail[512];   // not a std::string: nothing may be allocated before the checks
        std::snprintf(detail, sizeof detail, "%s", flcc_last_error_detail());
        // A plan made anyway (the planner passed over a candidate) goes first; then the next
        // call, undisturbed, before the checks (whose messages allocate).
        const flcc_result destroyed = r == FLCC_SUCCESS ? flcc_destroy(plan) : FLCC_SUCCESS;
        const flcc_plan failed_plan = r == FLCC_SUCCESS ? nullptr : plan;
        flcc_plan again = nullptr;
        const flcc_result next = create(&again, c);
        const flcc_result next_destroyed = next == FLCC_SUCCESS ? flcc_destroy(again) : next;
        const Held after_next;

        INFO(name_of(c) << ": create, allocation " << k << " failed: " << flcc_result_string(r)
                        << " (" << detail << ")");
        if (r == FLCC_SUCCESS) {
            REQUIRE(c.method == nullptr);   // only the planner's own choice has a way around
            REQUIRE(destroyed == FLCC_SUCCESS);
        } else {
            REQUIRE(r == FLCC_ALLOC_FAILED);
            REQUIRE(failed_plan == nullptr);
            ++g_survived;
            check_no_more_held(before, after);
        }
        REQUIRE(next == FLCC_SUCCESS);
        REQUIRE(next_destroyed == FLCC_SUCCESS);
        check_nothing_held(before, after_next);
    }
}

// Every k of an exec, the template changed before each (new_template) or not; the plan stays
// usable and gives the undisturbed output. Returns the allocations of an undisturbed exec.
long inject_exec(const Case& c, bool new_template)
{
    const Problem p = problem_of(c);
    const std::vector<float> image = data(p.image_elems * size_t(p.count), 7);
    const std::vector<float> templs[2] = {data(p.templ_elems, 11), data(p.templ_elems, 13)};
    std::vector<float> expect[2], out(p.out_elems * size_t(p.count));
    for (int t = 0; t < 2; ++t) {
        flcc_plan plan = nullptr;
        REQUIRE(create(&plan, c) == FLCC_SUCCESS);
        expect[t].resize(out.size());
        REQUIRE(execute(plan, c, image, templs[t], expect[t]) == FLCC_SUCCESS);
        REQUIRE(flcc_destroy(plan) == FLCC_SUCCESS);
    }
    flcc_plan plan = nullptr;
    REQUIRE(create(&plan, c) == FLCC_SUCCESS);
    int last = 0;   // the template of the last successful exec
    REQUIRE(execute(plan, c, image, templs[last], out) == FLCC_SUCCESS);
    for (long k = 1;; ++k) {
        const int t = new_template ? 1 - last : last;
        const Held before;
        const flcc_result r = with_failure(k, [&] { return execute(plan, c, image, templs[t], out); });
        const Held after;
        if (!injected()) {
            REQUIRE(r == FLCC_SUCCESS);
            REQUIRE(out == expect[t]);
            REQUIRE(flcc_destroy(plan) == FLCC_SUCCESS);
            return k - 1;
        }
        ++g_calls;
        char detail[512];   // not a std::string: nothing may be allocated before the checks
        std::snprintf(detail, sizeof detail, "%s", flcc_last_error_detail());
        const flcc_result next = execute(plan, c, image, templs[t], out);
        const Held after_next;
        INFO(name_of(c) << (new_template ? ": exec, new template" : ": exec") << ", allocation "
                        << k << " failed: " << flcc_result_string(r) << " (" << detail << ")");
        REQUIRE(r == FLCC_ALLOC_FAILED);
        ++g_survived;
        check_nothing_held(before, after);
        REQUIRE(next == FLCC_SUCCESS);
        REQUIRE(out == expect[t]);
        check_nothing_held(before, after_next);
        last = t;
    }
}

// Every k of a destroy (a destroy cannot fail: it must not allocate at all).
long inject_destroy(const Case& c)
{
    flcc_plan plan = nullptr;
    REQUIRE(create(&plan, c) == FLCC_SUCCESS);
    const Problem p = problem_of(c);
    std::vector<float> out(p.out_elems * size_t(p.count));
    REQUIRE(execute(plan, c, data(p.image_elems * size_t(p.count), 3), data(p.templ_elems, 5), out) ==
            FLCC_SUCCESS);
    const flcc_result r = with_failure(0, [&] { return flcc_destroy(plan); });
    REQUIRE(r == FLCC_SUCCESS);
    return g_count.load();
}

std::vector<Case> cases()
{
    std::vector<Case> v;
    const char* methods2[] = {"host.direct2.k3", "host.direct2.generic", "host.fourier2.t64",
                              "host.fourier2.whole"};
    const char* methods3[] = {"host.direct3.k2", "host.direct3.generic", "host.fourier3.t16",
                              "host.fourier3.whole"};
    for (flcc_op op : {FLCC_CONV, FLCC_LCORR})
        for (flcc_type type : {FLCC_SINGLE, FLCC_STREAM}) {
            for (const char* m : methods2) v.push_back({m, op, 2, type});
            for (const char* m : methods3) v.push_back({m, op, 3, type});
        }
    v.push_back({nullptr, FLCC_LCORR, 2, FLCC_SINGLE});
    v.push_back({nullptr, FLCC_CONV, 3, FLCC_STREAM});
    return v;
}

bool fourier_built()
{
    for (int i = 0; i < flcc_solver_count(); ++i)
        if (std::strcmp(flcc_solver_name(i), "host.fourier2.whole") == 0) return true;
    return false;
}

}  // namespace

TEST_CASE("every failed allocation of plan creation, execution and destruction is survived",
          "[alloc][plans]")
{
#ifndef FLCC_TEST_SANITIZED
    if (fourier_built()) REQUIRE(flcc::host::fft_allocator_in_effect());
#endif
    const auto start = std::chrono::steady_clock::now();
    long total = 0;
    for (const Case& c : cases()) {
        if (c.method != nullptr && !fourier_built() && std::strstr(c.method, "fourier")) continue;
        INFO(name_of(c) << (c.dim == 2 ? " 2D" : " 3D"));
        // Warm: worker threads, FFTW's wisdom for these transforms and FFTW's planner reserve
        // exist before anything is counted (they are made once per process).
        // The first exception thrown also makes the unwinder's caches.
        flcc_plan warm = nullptr;
        REQUIRE(create(&warm, c) == FLCC_SUCCESS);
        REQUIRE(flcc_destroy(warm) == FLCC_SUCCESS);
        REQUIRE(with_failure(1, [&] { return create(&warm, c); }) == FLCC_ALLOC_FAILED);
        const auto case_start = std::chrono::steady_clock::now();
        Counts n;
        n.create = inject_create(c);
        n.exec_new_template = inject_exec(c, true);
        n.exec_same_template = inject_exec(c, false);
        n.destroy = inject_destroy(c);
        CHECK(n.destroy == 0);
        total += n.create + n.exec_new_template + n.exec_same_template + n.destroy;
        std::printf("alloc injection: %-22s %s %-6s %-6s allocations: create %ld, exec %ld (new "
                    "template) / %ld, destroy %ld; %.2f s\n",
                    c.method ? c.method : "(ESTIMATE)", c.dim == 2 ? "2D" : "3D",
                    c.op == FLCC_CONV ? "conv" : "lcorr",
                    c.type == FLCC_STREAM ? "stream" : "single", n.create, n.exec_new_template,
                    n.exec_same_template, n.destroy,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - case_start)
                        .count());
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("alloc injection: %ld injected failures in %ld calls returned FLCC_ALLOC_FAILED "
                "(%ld allocations reached), %.1f s\n",
                g_survived, g_calls, total, seconds);
    CHECK(g_survived > 0);
}

TEST_CASE("every failed allocation of the wisdom calls is survived", "[alloc][wisdom]")
{
    // FFTW's part of the wisdom is made by planning a Fourier transform first.
    flcc_plan plan = nullptr;
    const Case c{nullptr, FLCC_LCORR, 2, FLCC_SINGLE};
    REQUIRE(create(&plan, c) == FLCC_SUCCESS);
    REQUIRE(flcc_destroy(plan) == FLCC_SUCCESS);
    char* text = nullptr;
    REQUIRE(flcc_wisdom_export(&text) == FLCC_SUCCESS);
    const std::string wisdom(text);
    flcc_free(text);

    long exported = 0, imported = 0;
    for (long k = 1;; ++k) {
        const Held before;
        char* t = nullptr;
        const flcc_result r = with_failure(k, [&] { return flcc_wisdom_export(&t); });
        const Held after;
        if (!injected()) {
            REQUIRE(r == FLCC_SUCCESS);
            CHECK(std::string(t) == wisdom);
            flcc_free(t);
            exported = k - 1;
            break;
        }
        INFO("wisdom export, allocation " << k << " failed: " << flcc_last_error_detail());
        REQUIRE(r == FLCC_ALLOC_FAILED);
        REQUIRE(t == nullptr);
        ++g_survived;
        check_nothing_held(before, after);
    }
    for (long k = 1;; ++k) {
        const flcc_result r = with_failure(k, [&] { return flcc_wisdom_import(wisdom.c_str()); });
        if (!injected()) {
            REQUIRE(r == FLCC_SUCCESS);
            imported = k - 1;
            break;
        }
        INFO("wisdom import, allocation " << k << " failed: " << flcc_last_error_detail());
        REQUIRE(r == FLCC_ALLOC_FAILED);
        ++g_survived;
        // Import merges: what a failed import merged stays (it is wisdom either way), so only
        // the next import is checked.
        REQUIRE(flcc_wisdom_import(wisdom.c_str()) == FLCC_SUCCESS);
    }
    std::printf("alloc injection: wisdom export %ld, import %ld allocations; %ld injected failures "
                "survived in all\n",
                exported, imported, g_survived);
}

#ifndef FLCC_TEST_SANITIZED

namespace {

// Runs a memory-limit child (alloc_limit_child.cpp) in a fresh process; its exit code, or
// -signal when it died.
int run_child(const char* mode, long mib, const char* child = FLCC_ALLOC_LIMIT_CHILD)
{
    std::fflush(stdout);
    const std::string headroom = std::to_string(mib);
    char* const argv[] = {const_cast<char*>(child), const_cast<char*>(mode),
                          const_cast<char*>(headroom.c_str()), nullptr};
    pid_t pid = 0;
    if (posix_spawn(&pid, child, nullptr, nullptr, argv, environ) != 0) return -1000;
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

}  // namespace

TEST_CASE("a worker thread the system refuses is FLCC_ALLOC_FAILED", "[alloc][threads]")
{
    CHECK(run_child("threads", 4) == 0);
}

TEST_CASE("no room for FFTW's planner reserve is FLCC_ALLOC_FAILED", "[alloc][rlimit]")
{
    // With FLCC's FFTW allocator the reserve is allocated; with FFTW's own, FLCC only probes
    // for it. Either way the plan is refused before FFTW is called.
    CHECK(run_child("reserve", 8) == 0);
    const int code = run_child("reserve", 8, FLCC_ALLOC_LIMIT_CHILD_FFTW_FIRST);
    if (code == 77)
        WARN("the linker did not put libfftw3f ahead of libflcc: the probe is not tested");
    else
        CHECK(code == 0);
}

TEST_CASE("plans and execs survive any address-space limit", "[alloc][rlimit]")
{
    // Each child plans and executes under its own limit and must exit with a code, never a
    // signal: 0 planned and executed, 10 refused with FLCC_ALLOC_FAILED.
    int outcomes[2] = {0, 0};
    for (long mib = 2; mib <= 62; mib += 4) {
        const int code = run_child("plan", mib);
        INFO("headroom " << mib << " MiB: child exit " << code);
        REQUIRE((code == 0 || code == 10));
        ++outcomes[code == 0 ? 0 : 1];
    }
    std::printf("address-space limits: %d children planned and executed, %d refused with "
                "FLCC_ALLOC_FAILED, none died\n",
                outcomes[0], outcomes[1]);
    CHECK(outcomes[0] > 0);
    CHECK(outcomes[1] > 0);
}

#endif
