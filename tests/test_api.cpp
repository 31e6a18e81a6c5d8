// The C API contract: every entry point with bad arguments returns its documented code without
// crashing, and invalid sizes are rejected before any allocation.
#include "flcc.h"
#include "helpers.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <random>
#include <string>
#include <thread>
#include <vector>

// Counting replacements of the global allocation functions: the library's C++ allocations go
// through them (static link), so a test can assert that nothing was allocated.
static std::atomic<long> g_allocations{0};

void* operator new(size_t n)
{
    ++g_allocations;
    if (void* p = std::malloc(n ? n : 1)) return p;
    throw std::bad_alloc();
}
void* operator new[](size_t n) { return operator new(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }

namespace {

flcc_options host_options()
{
    flcc_options o;
    flcc_options_init(&o);
    o.platform = FLCC_HOST;
    o.rigor = FLCC_ESTIMATE;
    return o;
}

flcc_result plan2d(flcc_plan* p, flcc_op op, flcc_size im, flcc_size t, const flcc_options& o)
{
    return flcc_plan_create(p, op, 2, im, t, &o);
}

}  // namespace

TEST_CASE("options defaults", "[api]")
{
    flcc_options o;
    std::memset(&o, 0x5a, sizeof o);
    flcc_options_init(&o);
    CHECK(o.type == FLCC_SINGLE);
    CHECK(o.platform == FLCC_ANY);
    CHECK(o.region == FLCC_FULL);
    CHECK(o.rigor == FLCC_MEASURE);
    CHECK(o.threads == 0);
    CHECK(o.method == nullptr);
    CHECK(o.device == -1);
    CHECK(o.check_finite == 1);
    flcc_options_init(nullptr);   // ignored
}

TEST_CASE("result codes keep FLCC 1.3's order and have strings", "[api]")
{
    CHECK(FLCC_SUCCESS == 0);
    CHECK(FLCC_INVALID_PLAN == 1);
    CHECK(FLCC_INVALID_DIMENSION == 2);
    CHECK(FLCC_INVALID_SIZE == 3);
    CHECK(FLCC_INVALID_TYPE == 4);
    CHECK(FLCC_INVALID_PLATFORM == 5);
    CHECK(FLCC_INVALID_VALUE == 6);
    CHECK(FLCC_ALLOC_FAILED == 7);
    CHECK(FLCC_EXEC_FAILED == 8);
    for (int r = FLCC_SUCCESS; r <= FLCC_INTERNAL_ERROR; ++r)
        CHECK(std::string(flcc_result_string(flcc_result(r))) != "unknown result code");
    CHECK(std::string(flcc_result_string(flcc_result(999))) == "unknown result code");
    CHECK(flcc_version() == FLCC_VERSION);
}

TEST_CASE("solver names", "[api]")
{
    const int n = flcc_solver_count();
    REQUIRE(n > 0);
    for (int i = 0; i < n; ++i) REQUIRE(flcc_solver_name(i) != nullptr);
    CHECK(flcc_solver_name(-1) == nullptr);
    CHECK(flcc_solver_name(n) == nullptr);
}

TEST_CASE("plan creation rejects bad arguments with specific codes", "[api]")
{
    const flcc_options o = host_options();
    flcc_plan p = reinterpret_cast<flcc_plan>(0x1);
    const flcc_size im{64, 64, 1}, t{5, 5, 1};

    CHECK(flcc_plan_create(nullptr, FLCC_LCORR, 2, im, t, &o) == FLCC_NULL_POINTER);
    CHECK(flcc_plan_create(&p, FLCC_LCORR, 1, im, t, &o) == FLCC_INVALID_DIMENSION);
    CHECK(p == nullptr);   // cleared on failure
    CHECK(flcc_plan_create(&p, FLCC_LCORR, 4, im, t, &o) == FLCC_INVALID_DIMENSION);
    CHECK(flcc_plan_create(&p, flcc_op(7), 2, im, t, &o) == FLCC_INVALID_VALUE);
    CHECK(plan2d(&p, FLCC_LCORR, {0, 64, 1}, t, o) == FLCC_INVALID_SIZE);
    CHECK(plan2d(&p, FLCC_LCORR, {64, -3, 1}, t, o) == FLCC_INVALID_SIZE);
    CHECK(plan2d(&p, FLCC_LCORR, im, {5, 0, 1}, o) == FLCC_INVALID_SIZE);
    CHECK(flcc_plan_create(&p, FLCC_LCORR, 3, {8, 8, 0}, {2, 2, 2}, &o) == FLCC_INVALID_SIZE);
    CHECK(flcc_plan_create(&p, FLCC_LCORR, 3, {8, 8, 8}, {2, 2, -1}, &o) == FLCC_INVALID_SIZE);

    flcc_options bad = o;
    bad.type = flcc_type(5);
    CHECK(plan2d(&p, FLCC_LCORR, im, t, bad) == FLCC_INVALID_TYPE);
    bad = o;
    bad.platform = flcc_platform(9);
    CHECK(plan2d(&p, FLCC_LCORR, im, t, bad) == FLCC_INVALID_PLATFORM);
    bad = o;
    bad.region = flcc_region(3);
    CHECK(plan2d(&p, FLCC_LCORR, im, t, bad) == FLCC_INVALID_VALUE);
    bad = o;
    bad.rigor = flcc_rigor(-1);
    CHECK(plan2d(&p, FLCC_LCORR, im, t, bad) == FLCC_INVALID_VALUE);
    bad = o;
    bad.threads = -1;
    CHECK(plan2d(&p, FLCC_LCORR, im, t, bad) == FLCC_INVALID_VALUE);
    bad = o;
    bad.device = -2;
    CHECK(plan2d(&p, FLCC_LCORR, im, t, bad) == FLCC_INVALID_VALUE);
    bad = o;
    bad.check_finite = 2;
    CHECK(plan2d(&p, FLCC_LCORR, im, t, bad) == FLCC_INVALID_VALUE);
    bad = o;
    bad.method = "no.such.solver";
    CHECK(plan2d(&p, FLCC_LCORR, im, t, bad) == FLCC_UNKNOWN_METHOD);
    bad = o;
    bad.method = "host.direct2.k7";   // 7x7 only
    CHECK(plan2d(&p, FLCC_LCORR, im, t, bad) == FLCC_METHOD_NOT_APPLICABLE);
    bad.method = "host.direct3.generic";   // a 3D solver for a 2D problem
    CHECK(plan2d(&p, FLCC_LCORR, im, t, bad) == FLCC_METHOD_NOT_APPLICABLE);

    // Valid region needs T <= S on every axis; full and same do not.
    flcc_options valid = o;
    valid.region = FLCC_VALID;
    CHECK(plan2d(&p, FLCC_LCORR, {10, 10, 1}, {11, 3, 1}, valid) == FLCC_INVALID_SIZE);
    CHECK(flcc_plan_create(&p, FLCC_LCORR, 3, {9, 9, 9}, {3, 3, 10}, &valid) == FLCC_INVALID_SIZE);
    CHECK(plan2d(&p, FLCC_LCORR, {10, 10, 1}, {11, 3, 1}, o) == FLCC_SUCCESS);
    CHECK(flcc_destroy(p) == FLCC_SUCCESS);

    // 2D ignores d.
    CHECK(plan2d(&p, FLCC_CONV, {10, 12, -5}, {3, 3, 0}, o) == FLCC_SUCCESS);
    CHECK(flcc_destroy(p) == FLCC_SUCCESS);
}

TEST_CASE("overflowing sizes are rejected before any allocation", "[api]")
{
    const flcc_options o = host_options();
    flcc_plan p = nullptr;
    const long before = g_allocations.load();
    // Element counts past int64, byte counts past int64, outputs past INT_MAX per axis.
    CHECK(flcc_plan_create(&p, FLCC_LCORR, 3, {INT_MAX, INT_MAX, INT_MAX}, {2, 2, 2}, &o) == FLCC_INVALID_SIZE);
    CHECK(flcc_plan_create(&p, FLCC_CONV, 3, {1 << 21, 1 << 21, 1 << 21}, {1, 1, 1}, &o) == FLCC_INVALID_SIZE);
    CHECK(plan2d(&p, FLCC_LCORR, {INT_MAX, 16, 1}, {2, 2, 1}, o) == FLCC_INVALID_SIZE);   // full: S+T-1 > INT_MAX
    CHECK(flcc_plan_create(&p, FLCC_LCORR, 3, {INT_MAX, INT_MAX, 4}, {3, 3, 3}, &o) == FLCC_INVALID_SIZE);
    CHECK(plan2d(&p, FLCC_LCORR, {-1, -1, 1}, {2, 2, 1}, o) == FLCC_INVALID_SIZE);
    CHECK(p == nullptr);
    CHECK(g_allocations.load() == before);
}

TEST_CASE("exec and introspection reject bad handles and arguments", "[api]")
{
    const flcc_options o = host_options();
    flcc_plan p = nullptr;
    REQUIRE(plan2d(&p, FLCC_LCORR, {16, 16, 1}, {3, 3, 1}, o) == FLCC_SUCCESS);
    std::vector<float> img(16 * 16 * 4, 1.0f), t(9, 2.0f), out(18 * 18 * 4);
    t[4] = 3.0f;

    CHECK(flcc_lcorr_exec(p, nullptr, t.data(), out.data(), 1) == FLCC_NULL_POINTER);
    CHECK(flcc_lcorr_exec(p, img.data(), nullptr, out.data(), 1) == FLCC_NULL_POINTER);
    CHECK(flcc_lcorr_exec(p, img.data(), t.data(), nullptr, 1) == FLCC_NULL_POINTER);
    CHECK(flcc_lcorr_exec(p, img.data(), t.data(), out.data(), 0) == FLCC_INVALID_VALUE);
    CHECK(flcc_lcorr_exec(p, img.data(), t.data(), out.data(), -4) == FLCC_INVALID_VALUE);
    CHECK(flcc_conv_exec(p, img.data(), t.data(), out.data(), 1) == FLCC_OPERATION_MISMATCH);
    CHECK(flcc_lcorr_exec(p, img.data(), t.data(), out.data(), 4) == FLCC_SUCCESS);

    CHECK(flcc_lcorr_exec(nullptr, img.data(), t.data(), out.data(), 1) == FLCC_INVALID_PLAN);
    CHECK(flcc_plan_output_size(p, nullptr) == FLCC_NULL_POINTER);
    flcc_size os;
    CHECK(flcc_plan_output_size(nullptr, &os) == FLCC_INVALID_PLAN);
    CHECK(flcc_plan_output_size(p, &os) == FLCC_SUCCESS);
    CHECK((os.h == 18 && os.w == 18 && os.d == 1));
    CHECK(flcc_plan_method(nullptr) == nullptr);
    CHECK(flcc_plan_candidate_count(nullptr) == 0);
    const char* name;
    double secs;
    CHECK(flcc_plan_candidate(p, 0, nullptr, &secs) == FLCC_NULL_POINTER);
    CHECK(flcc_plan_candidate(p, -1, &name, &secs) == FLCC_INVALID_VALUE);
    CHECK(flcc_plan_candidate(p, flcc_plan_candidate_count(p), &name, &secs) == FLCC_INVALID_VALUE);

    // A foreign pointer is never dereferenced.
    int not_a_plan = 42;
    flcc_plan fake = reinterpret_cast<flcc_plan>(&not_a_plan);
    CHECK(flcc_lcorr_exec(fake, img.data(), t.data(), out.data(), 1) == FLCC_INVALID_PLAN);
    CHECK(flcc_destroy(fake) == FLCC_INVALID_PLAN);

    // A destroyed plan.
    CHECK(flcc_destroy(p) == FLCC_SUCCESS);
    CHECK(flcc_lcorr_exec(p, img.data(), t.data(), out.data(), 1) == FLCC_INVALID_PLAN);
    CHECK(flcc_plan_output_size(p, &os) == FLCC_INVALID_PLAN);
    CHECK(flcc_plan_method(p) == nullptr);
    CHECK(flcc_destroy(p) == FLCC_INVALID_PLAN);
    CHECK(flcc_destroy(nullptr) == FLCC_SUCCESS);
}

TEST_CASE("non-finite input is reported, or skipped when the check is off", "[api][numerics]")
{
    flcc_options o = host_options();
    for (flcc_op op : {FLCC_LCORR, FLCC_CONV}) {
        flcc_plan p = nullptr;
        REQUIRE(plan2d(&p, op, {40, 50, 1}, {4, 4, 1}, o) == FLCC_SUCCESS);
        std::vector<float> img(40 * 50, 0.5f), t(16, 1.0f), out(43 * 53);
        t[3] = 2;
        const auto exec = [&] {
            return op == FLCC_LCORR ? flcc_lcorr_exec(p, img.data(), t.data(), out.data(), 1)
                                    : flcc_conv_exec(p, img.data(), t.data(), out.data(), 1);
        };
        CHECK(exec() == FLCC_SUCCESS);
        img[1234] = std::numeric_limits<float>::quiet_NaN();
        CHECK(exec() == FLCC_NONFINITE_INPUT);
        img[1234] = std::numeric_limits<float>::infinity();
        CHECK(exec() == FLCC_NONFINITE_INPUT);
        img[1234] = 0.5f;
        t[0] = -std::numeric_limits<float>::infinity();
        CHECK(exec() == FLCC_NONFINITE_INPUT);
        t[0] = 1.0f;
        CHECK(exec() == FLCC_SUCCESS);
        flcc_destroy(p);
    }
    o.check_finite = 0;
    flcc_plan p = nullptr;
    REQUIRE(plan2d(&p, FLCC_LCORR, {40, 50, 1}, {4, 4, 1}, o) == FLCC_SUCCESS);
    std::vector<float> img(40 * 50, 0.5f), t(16, 1.0f), out(43 * 53);
    t[0] = 3;
    img[7] = std::numeric_limits<float>::quiet_NaN();
    CHECK(flcc_lcorr_exec(p, img.data(), t.data(), out.data(), 1) == FLCC_SUCCESS);   // no crash
    flcc_destroy(p);
}

TEST_CASE("flcc_malloc gives aligned memory and flcc_free takes NULL", "[api]")
{
    CHECK(flcc_malloc(0) == nullptr);
    CHECK(flcc_malloc(SIZE_MAX) == nullptr);
    void* a = flcc_malloc(1000);
    REQUIRE(a != nullptr);
    CHECK(reinterpret_cast<uintptr_t>(a) % 64 == 0);
    std::memset(a, 1, 1000);
    flcc_free(a);
    flcc_free(nullptr);
}

TEST_CASE("plans are usable from several threads", "[api][threads]")
{
    // Concurrent create/exec/destroy of distinct plans, and concurrent exec of one plan (the
    // plan serialises them): all results equal the serial ones. Plans of one thread, and plans
    // of three, which compete for the process's workers (one caller at a time gets them; the
    // others run on their own thread).
    const ref::Shape s{2, {40, 37, 1}, {5, 4, 1}, FLCC_SAME};
    std::mt19937 rng(9);
    const auto img = ref::make_data(ref::Data::uniform, s, true, rng);
    const auto t = ref::make_data(ref::Data::uniform, s, false, rng);
    th::RunOptions ro;
    ro.method = "host.direct2.generic";
    ro.threads = 1;
    const th::Run serial = th::run(FLCC_LCORR, s, img, t, ro);
    REQUIRE(serial.result == FLCC_SUCCESS);

    for (int threads : {1, 3}) {
        INFO(threads << " threads per plan");
        flcc_options o = host_options();
        o.region = FLCC_SAME;
        o.method = "host.direct2.generic";
        o.threads = threads;
        flcc_plan shared = nullptr;
        REQUIRE(plan2d(&shared, FLCC_LCORR, s.image, s.templ, o) == FLCC_SUCCESS);
        std::atomic<int> mismatches{0};
        std::vector<std::thread> pool;
        for (int k = 0; k < 4; ++k)
            pool.emplace_back([&] {
                std::vector<float> out(serial.out.size());
                for (int i = 0; i < 20; ++i) {
                    flcc_plan own = nullptr;
                    if (plan2d(&own, FLCC_LCORR, s.image, s.templ, o) != FLCC_SUCCESS) ++mismatches;
                    if (flcc_lcorr_exec(own, img.data(), t.data(), out.data(), 1) != FLCC_SUCCESS ||
                        out != serial.out)
                        ++mismatches;
                    flcc_destroy(own);
                    if (flcc_lcorr_exec(shared, img.data(), t.data(), out.data(), 1) !=
                            FLCC_SUCCESS ||
                        out != serial.out)
                        ++mismatches;
                }
            });
        for (auto& th : pool) th.join();
        CHECK(mismatches.load() == 0);
        flcc_destroy(shared);
    }
}
