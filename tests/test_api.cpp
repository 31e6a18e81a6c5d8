// The C API contract: every entry point with bad arguments returns its documented code without
// crashing, and invalid sizes are rejected before any allocation.
#include "enum_from_c.h"
#include "flcc.h"
#include "helpers.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <random>
#include <string>
#include <thread>
#include <vector>

// Counting replacements of the global allocation functions: the library's C++ allocations go
// through them (static link), so a test can assert that nothing was allocated. Every form is
// replaced (plain, array, nothrow, aligned, sized delete): a form left to the runtime would
// pair its allocation with a replaced deallocation (or the reverse), which AddressSanitizer
// reports as an alloc-dealloc mismatch. All of them allocate with malloc or aligned_alloc and
// free with free.
static std::atomic<long> g_allocations{0};

static void* counted_alloc(size_t n, size_t align) noexcept
{
    ++g_allocations;
    if (n == 0) n = 1;
    // No object is larger than PTRDIFF_MAX: refused here, not handed to malloc (which
    // AddressSanitizer would report as a bug rather than return NULL).
    if (n > size_t(PTRDIFF_MAX) - align) return nullptr;
    if (align <= alignof(std::max_align_t)) return std::malloc(n);
    return std::aligned_alloc(align, (n + align - 1) / align * align);   // a multiple of align
}

void* operator new(size_t n)
{
    if (void* p = counted_alloc(n, 0)) return p;
    throw std::bad_alloc();
}
void* operator new[](size_t n) { return operator new(n); }
void* operator new(size_t n, const std::nothrow_t&) noexcept { return counted_alloc(n, 0); }
void* operator new[](size_t n, const std::nothrow_t&) noexcept { return counted_alloc(n, 0); }
void* operator new(size_t n, std::align_val_t a)
{
    if (void* p = counted_alloc(n, size_t(a))) return p;
    throw std::bad_alloc();
}
void* operator new[](size_t n, std::align_val_t a) { return operator new(n, a); }
void* operator new(size_t n, std::align_val_t a, const std::nothrow_t&) noexcept
{
    return counted_alloc(n, size_t(a));
}
void* operator new[](size_t n, std::align_val_t a, const std::nothrow_t&) noexcept
{
    return counted_alloc(n, size_t(a));
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }

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

// Stores an int in an enum field as a C program may (any int); C++ code never reads it back.
template <class E>
void set_int(E& field, int value)
{
    static_assert(sizeof(E) == sizeof(int), "the public enums have the size of int");
    std::memcpy(&field, &value, sizeof value);
}

std::string detail() { return flcc_last_error_detail(); }

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
    CHECK(std::string(c_result_string(999)) == "unknown result code");
    CHECK(std::string(c_result_string(-1)) == "unknown result code");
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
    CHECK(c_plan_create(&p, 7, 2, im, t, &o) == FLCC_INVALID_VALUE);
    CHECK(plan2d(&p, FLCC_LCORR, {0, 64, 1}, t, o) == FLCC_INVALID_SIZE);
    CHECK(plan2d(&p, FLCC_LCORR, {64, -3, 1}, t, o) == FLCC_INVALID_SIZE);
    CHECK(plan2d(&p, FLCC_LCORR, im, {5, 0, 1}, o) == FLCC_INVALID_SIZE);
    CHECK(flcc_plan_create(&p, FLCC_LCORR, 3, {8, 8, 0}, {2, 2, 2}, &o) == FLCC_INVALID_SIZE);
    CHECK(flcc_plan_create(&p, FLCC_LCORR, 3, {8, 8, 8}, {2, 2, -1}, &o) == FLCC_INVALID_SIZE);

    flcc_options bad = o;
    set_int(bad.type, 5);
    CHECK(plan2d(&p, FLCC_LCORR, im, t, bad) == FLCC_INVALID_TYPE);
    bad = o;
    set_int(bad.platform, 9);
    CHECK(plan2d(&p, FLCC_LCORR, im, t, bad) == FLCC_INVALID_PLATFORM);
    bad = o;
    set_int(bad.region, 3);
    CHECK(plan2d(&p, FLCC_LCORR, im, t, bad) == FLCC_INVALID_VALUE);
    bad = o;
    set_int(bad.rigor, -1);
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

TEST_CASE("frames larger than a process can map are refused at plan time", "[api]")
{
    // Counts that fit int64 (and size_t) but whose arrays exceed 2^47 bytes: such a plan could
    // never execute. Refused by every planner, at every rigour, before anything is allocated.
    flcc_options o = host_options();
    flcc_plan p = nullptr;
    const long before = g_allocations.load();
    const flcc_size huge3{1 << 20, 1 << 20, 1 << 12};   // 2^52 elements
    for (flcc_rigor rigor : {FLCC_MEASURE, FLCC_ESTIMATE, FLCC_WISDOM_ONLY}) {
        o.rigor = rigor;
        CHECK(flcc_plan_create(&p, FLCC_CONV, 3, huge3, {1, 1, 1}, &o) == FLCC_INVALID_SIZE);
        CHECK(flcc_plan_create(&p, FLCC_LCORR, 3, huge3, {3, 3, 3}, &o) == FLCC_INVALID_SIZE);
    }
    CHECK(flcc_conv_plan(&p, 3, huge3, {2, 2, 2}, FLCC_SINGLE, FLCC_HOST) == FLCC_INVALID_SIZE);
    CHECK(flcc_lcorr_plan(&p, 3, huge3, {2, 2, 2}, FLCC_STREAM, FLCC_ANY) == FLCC_INVALID_SIZE);
    o = host_options();
    CHECK(plan2d(&p, FLCC_CONV, {1 << 30, 1 << 30, 1}, {1, 1, 1}, o) == FLCC_INVALID_SIZE);   // 2^62 bytes
    // 2^47 bytes exactly is the limit: image 2^44 + output 2^44 + template elements over it.
    o.region = FLCC_VALID;
    CHECK(plan2d(&p, FLCC_CONV, {1 << 22, 1 << 22, 1}, {1, 1, 1}, o) == FLCC_INVALID_SIZE);
    CHECK(p == nullptr);
    CHECK(g_allocations.load() == before);
    CHECK(detail().find("more than a process can map") != std::string::npos);
    // Below the limit, the same shapes plan (ESTIMATE: nothing is timed or touched).
    o = host_options();
    REQUIRE(flcc_plan_create(&p, FLCC_CONV, 3, {1 << 10, 1 << 10, 1 << 10}, {1, 1, 1}, &o) == FLCC_SUCCESS);
    flcc_destroy(p);
}

TEST_CASE("enum values out of range, as C may pass them, are refused as integers", "[api]")
{
    const flcc_options o = host_options();
    const flcc_size im{16, 16, 1}, t{3, 3, 1};
    flcc_plan p = reinterpret_cast<flcc_plan>(0x1);
    for (int v : {-1, 2, 3, 7, 22, 255, 256, INT_MAX, INT_MIN}) {
        INFO("value " << v);
        const bool op_ok = v == FLCC_CONV || v == FLCC_LCORR || v == FLCC_XCORR;
        if (!op_ok) CHECK(c_plan_create(&p, v, 2, im, t, &o) == FLCC_INVALID_VALUE);
        const bool type_ok = v == FLCC_SINGLE || v == FLCC_STREAM;
        const bool platform_ok = v >= FLCC_HOST && v <= FLCC_ANY;
        if (!type_ok) {
            CHECK(c_conv_plan(&p, 2, im, t, v, FLCC_HOST) == FLCC_INVALID_TYPE);
            CHECK(c_lcorr_plan(&p, 2, im, t, v, FLCC_HOST) == FLCC_INVALID_TYPE);
            flcc_options bad = o;
            set_int(bad.type, v);
            CHECK(plan2d(&p, FLCC_LCORR, im, t, bad) == FLCC_INVALID_TYPE);
        }
        if (!platform_ok) {
            CHECK(c_conv_plan(&p, 2, im, t, FLCC_SINGLE, v) == FLCC_INVALID_PLATFORM);
            CHECK(c_lcorr_plan(&p, 2, im, t, FLCC_STREAM, v) == FLCC_INVALID_PLATFORM);
            flcc_options bad = o;
            set_int(bad.platform, v);
            CHECK(plan2d(&p, FLCC_CONV, im, t, bad) == FLCC_INVALID_PLATFORM);
        }
        if (v < FLCC_FULL || v > FLCC_VALID) {
            flcc_options bad = o;
            set_int(bad.region, v);
            CHECK(plan2d(&p, FLCC_LCORR, im, t, bad) == FLCC_INVALID_VALUE);
        }
        if (v < FLCC_MEASURE || v > FLCC_WISDOM_ONLY) {
            flcc_options bad = o;
            set_int(bad.rigor, v);
            CHECK(plan2d(&p, FLCC_CONV, im, t, bad) == FLCC_INVALID_VALUE);
        }
        CHECK(p == nullptr);
        p = reinterpret_cast<flcc_plan>(0x1);
    }
    // The first bad argument is reported: op before type, type before platform.
    flcc_options bad = o;
    set_int(bad.type, 9);
    set_int(bad.platform, 9);
    CHECK(c_plan_create(&p, 9, 2, im, t, &bad) == FLCC_INVALID_VALUE);
    CHECK(plan2d(&p, FLCC_CONV, im, t, bad) == FLCC_INVALID_TYPE);
    CHECK(c_conv_plan(&p, 2, im, t, 2, 3) == FLCC_INVALID_TYPE);
    // In range, through C too.
    REQUIRE(c_lcorr_plan(&p, 2, im, t, FLCC_STREAM, FLCC_HOST) == FLCC_SUCCESS);
    flcc_type type = FLCC_SINGLE;
    CHECK(flcc_plan_type(p, &type) == FLCC_SUCCESS);
    CHECK(type == FLCC_STREAM);
    flcc_destroy(p);
}

TEST_CASE("flcc_plan_type reports the plan's type", "[api]")
{
    flcc_options o = host_options();
    for (flcc_type want : {FLCC_SINGLE, FLCC_STREAM}) {
        o.type = want;
        flcc_plan p = nullptr;
        REQUIRE(plan2d(&p, FLCC_CONV, {20, 20, 1}, {3, 3, 1}, o) == FLCC_SUCCESS);
        flcc_type got = want == FLCC_SINGLE ? FLCC_STREAM : FLCC_SINGLE;
        CHECK(flcc_plan_type(p, &got) == FLCC_SUCCESS);
        CHECK(got == want);
        CHECK(flcc_plan_type(p, nullptr) == FLCC_NULL_POINTER);
        flcc_destroy(p);
        CHECK(flcc_plan_type(p, &got) == FLCC_INVALID_PLAN);
    }
    flcc_type got;
    CHECK(flcc_plan_type(nullptr, &got) == FLCC_INVALID_PLAN);
}

TEST_CASE("flcc_last_error_detail names the argument and the rule it broke", "[api]")
{
    const flcc_options o = host_options();
    flcc_plan p = nullptr;
    const auto refused = [&](flcc_result code, flcc_result want, const std::string& text) {
        INFO("detail: \"" << detail() << "\", expected to contain \"" << text << "\"");
        CHECK(code == want);
        CHECK(detail().find(text) != std::string::npos);
    };
    CHECK(flcc_last_error_detail() != nullptr);

    // Plan creation: every validation rule.
    refused(plan2d(&p, FLCC_LCORR, {64, 0, 1}, {3, 3, 1}, o), FLCC_INVALID_SIZE,
            "image.w = 0: sizes must be >= 1");
    refused(plan2d(&p, FLCC_LCORR, {-2, 5, 1}, {3, 3, 1}, o), FLCC_INVALID_SIZE,
            "image.h = -2: sizes must be >= 1");
    refused(flcc_plan_create(&p, FLCC_CONV, 3, {8, 8, 8}, {2, 2, 0}, &o), FLCC_INVALID_SIZE,
            "templ.d = 0: sizes must be >= 1");
    flcc_options valid = o;
    valid.region = FLCC_VALID;
    refused(plan2d(&p, FLCC_LCORR, {10, 10, 1}, {20, 20, 1}, valid), FLCC_INVALID_SIZE,
            "template 20x20 larger than image 10x10 for the VALID region (axis h)");
    refused(flcc_plan_create(&p, FLCC_LCORR, 3, {9, 9, 9}, {3, 3, 10}, &valid), FLCC_INVALID_SIZE,
            "template 3x3x10 larger than image 9x9x9 for the VALID region (axis d)");
    refused(plan2d(&p, FLCC_LCORR, {INT_MAX, 16, 1}, {2, 2, 1}, o), FLCC_INVALID_SIZE,
            "output h = 2147483648");
    refused(flcc_plan_create(&p, FLCC_LCORR, 5, {8, 8, 8}, {2, 2, 2}, &o),
            FLCC_INVALID_DIMENSION, "dim = 5: must be 2 or 3");
    refused(c_plan_create(&p, 22, 2, {8, 8, 1}, {2, 2, 1}, &o), FLCC_INVALID_VALUE,
            "op = 22: not a flcc_op");
    flcc_options bad = o;
    set_int(bad.region, 7);
    refused(plan2d(&p, FLCC_LCORR, {8, 8, 1}, {2, 2, 1}, bad), FLCC_INVALID_VALUE,
            "options.region = 7: not a flcc_region");
    bad = o;
    set_int(bad.type, -1);
    refused(plan2d(&p, FLCC_LCORR, {8, 8, 1}, {2, 2, 1}, bad), FLCC_INVALID_TYPE,
            "options.type = -1: not a flcc_type");
    bad = o;
    set_int(bad.platform, 3);
    refused(plan2d(&p, FLCC_LCORR, {8, 8, 1}, {2, 2, 1}, bad), FLCC_INVALID_PLATFORM,
            "options.platform = 3: not a flcc_platform");
    bad = o;
    set_int(bad.rigor, 3);
    refused(plan2d(&p, FLCC_LCORR, {8, 8, 1}, {2, 2, 1}, bad), FLCC_INVALID_VALUE,
            "options.rigor = 3: not a flcc_rigor");
    refused(c_conv_plan(&p, 2, {8, 8, 1}, {2, 2, 1}, 4, FLCC_HOST), FLCC_INVALID_TYPE,
            "type = 4: not a flcc_type");
    CHECK(detail().find("options.") == std::string::npos);   // an argument, not an option
    refused(c_lcorr_plan(&p, 2, {8, 8, 1}, {2, 2, 1}, FLCC_SINGLE, 8), FLCC_INVALID_PLATFORM,
            "platform = 8: not a flcc_platform");
    bad = o;
    bad.threads = -3;
    refused(plan2d(&p, FLCC_LCORR, {8, 8, 1}, {2, 2, 1}, bad), FLCC_INVALID_VALUE,
            "options.threads = -3");
    bad = o;
    bad.device = -5;
    refused(plan2d(&p, FLCC_LCORR, {8, 8, 1}, {2, 2, 1}, bad), FLCC_INVALID_VALUE,
            "options.device = -5");
    bad = o;
    bad.check_finite = 3;
    refused(plan2d(&p, FLCC_LCORR, {8, 8, 1}, {2, 2, 1}, bad), FLCC_INVALID_VALUE,
            "options.check_finite = 3: must be 0 or 1");
    bad = o;
    bad.device_resident = -1;
    refused(plan2d(&p, FLCC_LCORR, {8, 8, 1}, {2, 2, 1}, bad), FLCC_INVALID_VALUE,
            "options.device_resident = -1: must be 0 or 1");
    bad = o;
    bad.method = "no.such.solver";
    refused(plan2d(&p, FLCC_LCORR, {8, 8, 1}, {2, 2, 1}, bad), FLCC_UNKNOWN_METHOD,
            "options.method = \"no.such.solver\"");
    bad.method = "host.direct2.k7";
    refused(plan2d(&p, FLCC_LCORR, {8, 8, 1}, {2, 2, 1}, bad), FLCC_METHOD_NOT_APPLICABLE,
            "options.method = \"host.direct2.k7\": cannot solve");
    bad = o;
    bad.rigor = FLCC_WISDOM_ONLY;
    refused(plan2d(&p, FLCC_LCORR, {8, 9, 1}, {2, 2, 1}, bad), FLCC_WISDOM_MISS,
            "no wisdom for");
    refused(flcc_plan_create(nullptr, FLCC_LCORR, 2, {8, 8, 1}, {2, 2, 1}, &o), FLCC_NULL_POINTER,
            "plan = NULL");

    // A success clears it (to "", never NULL).
    REQUIRE(plan2d(&p, FLCC_LCORR, {16, 16, 1}, {3, 3, 1}, o) == FLCC_SUCCESS);
    REQUIRE(flcc_last_error_detail() != nullptr);
    CHECK(detail().empty());

    // Exec argument checks.
    std::vector<float> img(16 * 16 * 2, 1.0f), t(9, 2.0f), out(18 * 18 * 2);
    t[4] = 3.0f;
    refused(flcc_lcorr_exec(p, nullptr, t.data(), out.data(), 1), FLCC_NULL_POINTER, "image = NULL");
    refused(flcc_lcorr_exec(p, img.data(), nullptr, out.data(), 1), FLCC_NULL_POINTER, "templ = NULL");
    refused(flcc_lcorr_exec(p, img.data(), t.data(), nullptr, 1), FLCC_NULL_POINTER, "out = NULL");
    refused(flcc_lcorr_exec(p, img.data(), t.data(), out.data(), 0), FLCC_INVALID_VALUE,
            "count = 0: must be >= 1");
    refused(flcc_conv_exec(p, img.data(), t.data(), out.data(), 1), FLCC_OPERATION_MISMATCH,
            "execute it with flcc_lcorr_exec");
    refused(flcc_lcorr_exec(nullptr, img.data(), t.data(), out.data(), 1), FLCC_INVALID_PLAN,
            "plan = NULL");
    t[0] = std::numeric_limits<float>::quiet_NaN();
    refused(flcc_lcorr_exec(p, img.data(), t.data(), out.data(), 1), FLCC_NONFINITE_INPUT, "templ");
    t[0] = 2.0f;
    CHECK(flcc_lcorr_exec(p, img.data(), t.data(), out.data(), 2) == FLCC_SUCCESS);
    CHECK(detail().empty());
    flcc_size os;
    refused(flcc_plan_output_size(p, nullptr), FLCC_NULL_POINTER, "out = NULL");
    const char* name;
    double secs;
    refused(flcc_plan_candidate(p, 99, &name, &secs), FLCC_INVALID_VALUE, "index = 99");
    CHECK(flcc_destroy(p) == FLCC_SUCCESS);
    CHECK(detail().empty());
    refused(flcc_plan_output_size(p, &os), FLCC_INVALID_PLAN, "not a live plan");
    refused(flcc_destroy(p), FLCC_INVALID_PLAN, "not a live plan");

    // Wisdom import errors name the line at fault.
    refused(flcc_wisdom_import("garbage\n"), FLCC_INVALID_WISDOM, "line 1: not \"flcc-wisdom 1\"");
    refused(flcc_wisdom_import("flcc-wisdom 1\nsignature 0000000000000000\n"), FLCC_INVALID_WISDOM,
            "wisdom of another configuration");
    refused(flcc_wisdom_import(nullptr), FLCC_NULL_POINTER, "text = NULL");
    refused(flcc_wisdom_import_file(nullptr), FLCC_NULL_POINTER, "path = NULL");
    refused(flcc_wisdom_import_file("/nonexistent/dir/wisdom"), FLCC_IO_ERROR,
            "wisdom file \"/nonexistent/dir/wisdom\": No such file or directory");
    CHECK(flcc_destroy(nullptr) == FLCC_SUCCESS);
    CHECK(detail().empty());

    // Functions that return no flcc_result leave it as it is.
    refused(flcc_lcorr_exec(nullptr, img.data(), t.data(), out.data(), 1), FLCC_INVALID_PLAN,
            "plan = NULL");
    CHECK(flcc_plan_method(nullptr) == nullptr);
    CHECK(flcc_solver_count() > 0);
    CHECK(detail() == "plan = NULL");
}

TEST_CASE("the error detail is per thread", "[api][threads]")
{
    const flcc_options o = host_options();
    flcc_plan p = nullptr;
    CHECK(plan2d(&p, FLCC_LCORR, {8, 0, 1}, {2, 2, 1}, o) == FLCC_INVALID_SIZE);
    const std::string mine = detail();
    REQUIRE(!mine.empty());
    std::string other_before, other_after;
    std::thread other([&] {
        other_before = flcc_last_error_detail();
        flcc_plan q = nullptr;
        plan2d(&q, FLCC_LCORR, {8, 8, 1}, {2, 2, 1}, o);   // success: clears this thread's
        flcc_destroy(q);
        flcc_plan r = nullptr;
        plan2d(&r, FLCC_LCORR, {8, 8, 1}, {0, 2, 1}, o);
        other_after = flcc_last_error_detail();
    });
    other.join();
    CHECK(other_before.empty());
    CHECK(other_after.find("templ.h = 0") != std::string::npos);
    CHECK(detail() == mine);
}

TEST_CASE("the test's allocation functions count every form and pair with their own delete", "[api]")
{
    struct alignas(256) Wide {
        char c[300];
    };
    const long before = g_allocations.load();
    char* a = new (std::nothrow) char[100];
    int* b = new (std::nothrow) int(7);
    Wide* w = new Wide;
    Wide* wa = new Wide[3];
    Wide* wn = new (std::nothrow) Wide;
    Wide* wan = new (std::nothrow) Wide[2];
    static void* volatile escaped[6];   // seen outside: the allocations cannot be elided
    escaped[0] = a, escaped[1] = b, escaped[2] = w, escaped[3] = wa, escaped[4] = wn, escaped[5] = wan;
    CHECK(g_allocations.load() == before + 6);
    REQUIRE((a && b && w && wa && wn && wan));
    for (const void* q : {static_cast<const void*>(w), static_cast<const void*>(wa),
                          static_cast<const void*>(wn), static_cast<const void*>(wan)})
        CHECK(reinterpret_cast<uintptr_t>(q) % 256 == 0);
    a[99] = 1;
    w->c[299] = wa[2].c[299] = wn->c[0] = wan[1].c[299] = 2;
    CHECK(*b == 7);
    delete[] a;
    delete b;
    delete w;
    delete[] wa;
    delete wn;
    delete[] wan;
    // nothrow forms report failure as NULL instead of throwing (sizes no allocator can meet,
    // through a volatile so that the compiler does not see them).
    volatile size_t huge = SIZE_MAX - 64;
    CHECK(::operator new(huge, std::nothrow) == nullptr);
    CHECK(::operator new(huge, std::align_val_t(256), std::nothrow) == nullptr);
    static void* volatile sink;   // a result that is used: the calls cannot be elided
    CHECK_THROWS_AS(sink = ::operator new(huge), std::bad_alloc);
    CHECK_THROWS_AS(sink = ::operator new(huge, std::align_val_t(256)), std::bad_alloc);
    CHECK(sink == nullptr);
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

TEST_CASE("cross-correlation plans: scipy.signal.correlate, their own exec, template caching",
          "[api][xcorr]")
{
    // 2D and 3D, odd and even templates, every region; the template changed between execs by
    // value in the same buffer (A, A, B, A) so a stale prepared (reversed) template shows.
    std::mt19937 rng(11);
    for (const ref::Shape& s : {ref::Shape{2, {23, 30, 1}, {4, 5, 1}, FLCC_FULL},
                                ref::Shape{2, {23, 30, 1}, {4, 5, 1}, FLCC_SAME},
                                ref::Shape{2, {17, 9, 1}, {3, 6, 1}, FLCC_VALID},
                                ref::Shape{3, {9, 8, 7}, {2, 3, 4}, FLCC_SAME}}) {
        INFO(th::describe(s));
        const auto img = ref::make_data(ref::Data::uniform, s, true, rng);
        const auto a = ref::make_data(ref::Data::uniform, s, false, rng);
        const auto b = ref::make_data(ref::Data::uniform, s, false, rng);
        flcc_options o;
        flcc_options_init(&o);
        o.region = s.region;
        o.rigor = FLCC_ESTIMATE;
        o.platform = FLCC_HOST;
        flcc_plan p = nullptr;
        REQUIRE(flcc_plan_create(&p, FLCC_XCORR, s.dim, s.image, s.templ, &o) == FLCC_SUCCESS);
        std::vector<float> t = a, out(size_t(ref::out_elems(s)));
        for (int step = 0; step < 4; ++step) {
            t = step == 2 ? b : a;
            INFO("step " << step);
            REQUIRE(flcc_xcorr_exec(p, img.data(), t.data(), out.data(), 1) == FLCC_SUCCESS);
            CHECK(th::error(FLCC_XCORR, ref::xcorr(s, img.data(), t.data()), out.data()) <= 1e-5);
        }
        // The convolution of the same template differs (not symmetric), so the reversal matters.
        CHECK(th::error(FLCC_XCORR, ref::conv(s, img.data(), t.data()), out.data()) > 1e-3);
        CHECK(flcc_conv_exec(p, img.data(), t.data(), out.data(), 1) == FLCC_OPERATION_MISMATCH);
        CHECK(std::string(flcc_last_error_detail()).find("flcc_xcorr_exec") != std::string::npos);
        CHECK(flcc_lcorr_exec(p, img.data(), t.data(), out.data(), 1) == FLCC_OPERATION_MISMATCH);
        t[0] = std::numeric_limits<float>::quiet_NaN();
        CHECK(flcc_xcorr_exec(p, img.data(), t.data(), out.data(), 1) == FLCC_NONFINITE_INPUT);
        flcc_destroy(p);
    }
    flcc_plan p = nullptr;
    REQUIRE(flcc_conv_plan(&p, 2, {8, 8, 1}, {3, 3, 1}, FLCC_SINGLE, FLCC_HOST) == FLCC_SUCCESS);
    std::vector<float> img(64, 1.f), t(9, 1.f), out(100);
    CHECK(flcc_xcorr_exec(p, img.data(), t.data(), out.data(), 1) == FLCC_OPERATION_MISMATCH);
    CHECK(std::string(flcc_last_error_detail()).find("flcc_conv_exec") != std::string::npos);
    flcc_destroy(p);
    flcc_options o;
    flcc_options_init(&o);
    CHECK(flcc_plan_create(&p, static_cast<flcc_op>(3), 2, {8, 8, 1}, {3, 3, 1}, &o) == FLCC_INVALID_VALUE);
}
