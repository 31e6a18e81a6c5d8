// Thread safety (docs/semantics.md, "Thread safety"): plans are created, executed and destroyed
// from 16 threads at once, over the host solver families forced by name and over the planner's
// own choices (ESTIMATE and MEASURE, some of them on problems no plan has seen, so that MEASURE
// times its candidates and records its decision while the others run), with the wisdom exported
// and imported meanwhile; every output is bitwise the output of the same solver run alone. Threads sharing one plan get, each,
// the output of their own image and template. A plan destroyed while another thread executes it
// finishes that exec. options.threads above FLCC_MAX_THREADS is refused.
//
// The threads share only read-only inputs and atomics; checks run on the main thread after the
// workers joined (Catch2's assertions are not thread-safe), so the test itself is free of data
// races for ThreadSanitizer. FLCC_TEST_THREAD_CYCLES sets the cycles per thread (slow tools).
#include "flcc.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kThreads = 16;

int cycles_per_thread()
{
    const char* e = std::getenv("FLCC_TEST_THREAD_CYCLES");
    const int n = e != nullptr ? std::atoi(e) : 0;
    return n > 0 ? n : 120;
}

struct Job {
    flcc_op op;
    int dim;
    flcc_size image, templ;
    const char* method;   // nullptr: the planner decides
    flcc_rigor rigor;
    flcc_type type;
    int threads;          // options.threads
    // Filled by prepare(): inputs (count frames) and the output size.
    int count = 1;
    std::vector<float> input, templ_data;
    size_t out_elems = 0;
};

bool have_solver(const char* name)
{
    for (int i = 0; i < flcc_solver_count(); ++i)
        if (std::strcmp(flcc_solver_name(i), name) == 0) return true;
    return false;
}

std::vector<float> data(size_t n, unsigned seed)
{
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) {
        seed = seed * 1664525u + 1013904223u;
        v[i] = float(seed >> 8) / float(1 << 24) - 0.25f;
    }
    return v;
}

size_t elems(const flcc_size& s, int dim)
{
    return size_t(s.h) * size_t(s.w) * (dim == 3 ? size_t(s.d) : 1);
}

void prepare(Job& j, unsigned seed)
{
    j.count = j.type == FLCC_STREAM ? 2 : 1;
    j.input = data(elems(j.image, j.dim) * size_t(j.count), seed);
    j.templ_data = data(elems(j.templ, j.dim), seed + 1);
    const flcc_size out{j.image.h + j.templ.h - 1, j.image.w + j.templ.w - 1,
                        j.dim == 3 ? j.image.d + j.templ.d - 1 : 1};
    j.out_elems = elems(out, j.dim) * size_t(j.count);
}

std::vector<Job> jobs()
{
    const flcc_size i2a{40, 33, 1}, t2a{5, 5, 1}, i2b{37, 41, 1}, t2b{4, 6, 1}, i2c{64, 64, 1},
        t2c{8, 8, 1};
    const flcc_size i3a{9, 10, 11}, t3a{3, 3, 3}, i3b{8, 9, 7}, t3b{2, 3, 2};
    std::vector<Job> v = {
        {FLCC_CONV, 2, i2a, t2a, "host.direct2.k5", FLCC_MEASURE, FLCC_SINGLE, 2},
        {FLCC_CONV, 2, i2a, t2a, "host.direct2.generic", FLCC_MEASURE, FLCC_STREAM, 1},
        {FLCC_CONV, 2, i2a, t2a, "host.fourier2.t64", FLCC_MEASURE, FLCC_SINGLE, 2},
        {FLCC_CONV, 2, i2a, t2a, "host.fourier2.whole", FLCC_ESTIMATE, FLCC_STREAM, 2},
        {FLCC_LCORR, 2, i2b, t2b, "host.direct2.generic", FLCC_ESTIMATE, FLCC_SINGLE, 2},
        {FLCC_LCORR, 2, i2b, t2b, "host.fourier2.t64", FLCC_ESTIMATE, FLCC_STREAM, 1},
        {FLCC_LCORR, 2, i2b, t2b, "host.fourier2.whole", FLCC_MEASURE, FLCC_SINGLE, 2},
        {FLCC_LCORR, 3, i3a, t3a, "host.direct3.k3", FLCC_MEASURE, FLCC_STREAM, 2},
        {FLCC_LCORR, 3, i3a, t3a, "host.direct3.generic", FLCC_ESTIMATE, FLCC_SINGLE, 1},
        {FLCC_LCORR, 3, i3a, t3a, "host.fourier3.t16", FLCC_MEASURE, FLCC_SINGLE, 2},
        {FLCC_LCORR, 3, i3a, t3a, "host.fourier3.whole", FLCC_ESTIMATE, FLCC_STREAM, 2},
        {FLCC_CONV, 3, i3b, t3b, "host.direct3.generic", FLCC_MEASURE, FLCC_SINGLE, 2},
        {FLCC_CONV, 3, i3b, t3b, "host.fourier3.whole", FLCC_MEASURE, FLCC_SINGLE, 1},
        // The planner's own choices.
        {FLCC_CONV, 2, i2a, t2a, nullptr, FLCC_ESTIMATE, FLCC_SINGLE, 2},
        {FLCC_LCORR, 2, i2b, t2b, nullptr, FLCC_MEASURE, FLCC_STREAM, 2},
        {FLCC_LCORR, 2, i2c, t2c, nullptr, FLCC_MEASURE, FLCC_SINGLE, 1},
        {FLCC_LCORR, 3, i3a, t3a, nullptr, FLCC_ESTIMATE, FLCC_SINGLE, 2},
        {FLCC_CONV, 3, i3b, t3b, nullptr, FLCC_MEASURE, FLCC_STREAM, 2},
    };
    std::vector<Job> out;
    unsigned seed = 1;
    for (Job& j : v) {
        if (j.method != nullptr && !have_solver(j.method)) continue;
        prepare(j, seed += 17);
        out.push_back(std::move(j));
    }
    return out;
}

flcc_options options_of(const Job& j)
{
    flcc_options o;
    flcc_options_init(&o);
    o.platform = FLCC_HOST;
    o.method = j.method;
    o.rigor = j.rigor;
    o.type = j.type;
    o.threads = j.threads;
    return o;
}

flcc_result exec(flcc_plan plan, const Job& j, const float* image, const float* templ, float* out)
{
    return j.op == FLCC_CONV ? flcc_conv_exec(plan, image, templ, out, j.count)
                             : flcc_lcorr_exec(plan, image, templ, out, j.count);
}

// One cycle: plan, execute twice (the second with the template unchanged), destroy. Returns
// the first failure's code, the method and the output.
flcc_result cycle(const Job& j, std::string& method, std::vector<float>& out)
{
    const flcc_options o = options_of(j);
    flcc_plan plan = nullptr;
    flcc_result r = flcc_plan_create(&plan, j.op, j.dim, j.image, j.templ, &o);
    if (r != FLCC_SUCCESS) return r;
    method = flcc_plan_method(plan);
    out.assign(j.out_elems, -1.0f);
    r = exec(plan, j, j.input.data(), j.templ_data.data(), out.data());
    if (r == FLCC_SUCCESS) r = exec(plan, j, j.input.data(), j.templ_data.data(), out.data());
    const flcc_result d = flcc_destroy(plan);
    return r != FLCC_SUCCESS ? r : d;
}

// The output of job j run alone with solver `method` forced.
std::vector<float> alone(const Job& j, const std::string& method)
{
    Job forced = j;
    forced.method = method.c_str();
    std::string m;
    std::vector<float> out;
    REQUIRE(cycle(forced, m, out) == FLCC_SUCCESS);
    return out;
}

}  // namespace

TEST_CASE("16 threads create, execute and destroy plans at once", "[threads]")
{
    const std::vector<Job> js = jobs();
    REQUIRE(!js.empty());

    // Alone first: each job's output (and, for the planner's choices, its method; MEASURE
    // decisions are wisdom from then on, so the threads find them).
    std::vector<std::string> methods(js.size());
    std::vector<std::vector<float>> expected(js.size());
    for (size_t i = 0; i < js.size(); ++i) REQUIRE(cycle(js[i], methods[i], expected[i]) == FLCC_SUCCESS);

    // Problems of their own per thread, MEASURE-planned for the first time at two points of
    // the thread's run.
    std::vector<Job> fresh;
    for (int t = 0; t < kThreads; ++t)
        for (int k = 0; k < 2; ++k) {
            Job j{k == 0 ? FLCC_LCORR : FLCC_CONV, 2, {20 + t, 26 + 3 * k, 1}, {3, 4, 1}, nullptr,
                  FLCC_MEASURE, k == 0 ? FLCC_SINGLE : FLCC_STREAM, 2};
            prepare(j, 1000u + unsigned(t * 2 + k));
            fresh.push_back(std::move(j));
        }

    const int cycles = cycles_per_thread();
    std::atomic<long> done{0}, failures{0}, mismatches{0};
    std::mutex other_mutex;
    // Outputs checked afterwards: (job, method) of another choice than alone, and the fresh
    // problems' (their index with the high bit set).
    std::vector<std::pair<size_t, std::string>> other_method;
    std::vector<std::vector<float>> other_out;
    constexpr size_t kFresh = size_t(1) << 31;
    std::atomic<bool> stop_wisdom{false};
    std::atomic<long> wisdom_rounds{0}, wisdom_failures{0};

    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
            std::string method;
            std::vector<float> out;
            for (int c = 0; c < cycles; ++c) {
                if (c == 0 || c == cycles / 2) {
                    const size_t f = size_t(t * 2 + (c == 0 ? 0 : 1));
                    if (cycle(fresh[f], method, out) != FLCC_SUCCESS) {
                        failures.fetch_add(1);
                        continue;
                    }
                    done.fetch_add(1);
                    std::lock_guard<std::mutex> lock(other_mutex);
                    other_method.emplace_back(kFresh | f, method);
                    other_out.push_back(out);
                    continue;
                }
                const size_t i = size_t(t * 7 + c * 5) % js.size();
                if (cycle(js[i], method, out) != FLCC_SUCCESS) {
                    failures.fetch_add(1);
                    continue;
                }
                done.fetch_add(1);
                if (method != methods[i]) {   // the planner chose otherwise: checked afterwards
                    std::lock_guard<std::mutex> lock(other_mutex);
                    other_method.emplace_back(i, method);
                    other_out.push_back(out);
                } else if (out.size() != expected[i].size() ||
                           std::memcmp(out.data(), expected[i].data(), out.size() * sizeof(float)) != 0) {
                    mismatches.fetch_add(1);
                }
            }
        });
    // Meanwhile: the wisdom exported and imported back, again and again.
    std::thread wisdom([&] {
        while (!stop_wisdom.load()) {
            char* text = nullptr;
            if (flcc_wisdom_export(&text) != FLCC_SUCCESS || flcc_wisdom_import(text) != FLCC_SUCCESS)
                wisdom_failures.fetch_add(1);
            flcc_free(text);
            wisdom_rounds.fetch_add(1);
        }
    });
    for (std::thread& th : threads) th.join();
    stop_wisdom.store(true);
    wisdom.join();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    CHECK(failures.load() == 0);
    CHECK(mismatches.load() == 0);
    CHECK(done.load() == long(kThreads) * cycles);
    CHECK(wisdom_failures.load() == 0);
    size_t others = 0;
    for (size_t k = 0; k < other_method.size(); ++k) {
        const size_t i = other_method[k].first;
        const bool is_fresh = (i & kFresh) != 0;
        const Job& j = is_fresh ? fresh[i & ~kFresh] : js[i];
        INFO((is_fresh ? "fresh job " : "job ") << (i & ~kFresh) << ": "
                                                << other_method[k].second);
        CHECK(other_out[k] == alone(j, other_method[k].second));
        others += is_fresh ? 0 : 1;
    }
    std::printf("threads: %d threads x %d cycles over %zu jobs and %zu fresh MEASURE problems "
                "(%ld plans, %zu by another choice than alone), %ld wisdom rounds, %.1f s\n",
                kThreads, cycles, js.size(), fresh.size(), done.load(), others,
                wisdom_rounds.load(), seconds);
}

TEST_CASE("threads sharing one plan each get their own output", "[threads]")
{
    // Executions of one plan are serialised: each thread's call sees its own template and
    // image (the plan re-prepares the template whenever it differs from the last call's).
    for (const char* method : {"host.fourier2.t64", "host.direct2.generic", "host.fourier2.whole"}) {
        if (!have_solver(method)) continue;
        INFO(method);
        Job j{FLCC_LCORR, 2, {33, 29, 1}, {5, 4, 1}, method, FLCC_ESTIMATE, FLCC_SINGLE, 2};
        constexpr int kSharing = 8, kInputs = 4, kRounds = 12;
        std::vector<Job> inputs;
        std::vector<std::vector<float>> expected;
        for (int k = 0; k < kInputs; ++k) {
            Job in = j;
            prepare(in, 100u + unsigned(k) * 31u);
            std::string m;
            expected.emplace_back();
            REQUIRE(cycle(in, m, expected.back()) == FLCC_SUCCESS);
            inputs.push_back(std::move(in));
        }
        const flcc_options o = options_of(j);
        flcc_plan plan = nullptr;
        REQUIRE(flcc_plan_create(&plan, j.op, j.dim, j.image, j.templ, &o) == FLCC_SUCCESS);
        std::atomic<long> failures{0}, mismatches{0};
        std::vector<std::thread> threads;
        for (int t = 0; t < kSharing; ++t)
            threads.emplace_back([&, t] {
                std::vector<float> out(inputs[0].out_elems);
                for (int r = 0; r < kRounds; ++r) {
                    const Job& in = inputs[size_t(t + r) % kInputs];
                    if (exec(plan, in, in.input.data(), in.templ_data.data(), out.data()) !=
                        FLCC_SUCCESS) {
                        failures.fetch_add(1);
                        continue;
                    }
                    if (out != expected[size_t(t + r) % kInputs]) mismatches.fetch_add(1);
                }
            });
        for (std::thread& th : threads) th.join();
        CHECK(flcc_destroy(plan) == FLCC_SUCCESS);
        CHECK(failures.load() == 0);
        CHECK(mismatches.load() == 0);
    }
}

TEST_CASE("a plan destroyed while another thread executes it finishes that exec", "[threads]")
{
    Job j{FLCC_LCORR, 2, {300, 280, 1}, {9, 9, 1}, "host.direct2.k9", FLCC_ESTIMATE, FLCC_SINGLE, 1};
    prepare(j, 7);
    const flcc_options o = options_of(j);
    flcc_plan plan = nullptr;
    REQUIRE(flcc_plan_create(&plan, j.op, j.dim, j.image, j.templ, &o) == FLCC_SUCCESS);
    std::vector<float> expected(j.out_elems);
    REQUIRE(exec(plan, j, j.input.data(), j.templ_data.data(), expected.data()) == FLCC_SUCCESS);

    std::atomic<long> succeeded{0}, invalid{0}, other{0}, wrong{0};
    std::atomic<bool> started{false};
    std::thread executor([&] {
        std::vector<float> out(j.out_elems);
        for (;;) {
            const flcc_result r = exec(plan, j, j.input.data(), j.templ_data.data(), out.data());
            started.store(true);
            if (r == FLCC_INVALID_PLAN) {
                invalid.fetch_add(1);
                return;
            }
            if (r != FLCC_SUCCESS) {
                other.fetch_add(1);
                return;
            }
            succeeded.fetch_add(1);
            if (out != expected) wrong.fetch_add(1);
        }
    });
    while (!started.load()) std::this_thread::yield();
    CHECK(flcc_destroy(plan) == FLCC_SUCCESS);
    executor.join();
    CHECK(succeeded.load() >= 1);
    CHECK(invalid.load() == 1);
    CHECK(other.load() == 0);
    CHECK(wrong.load() == 0);
    CHECK(flcc_destroy(plan) == FLCC_INVALID_PLAN);
}

TEST_CASE("options.threads is at most FLCC_MAX_THREADS", "[threads][api]")
{
    flcc_options o;
    flcc_options_init(&o);
    o.platform = FLCC_HOST;
    o.rigor = FLCC_ESTIMATE;
    for (int bad : {FLCC_MAX_THREADS + 1, 1 << 20, INT_MAX}) {
        o.threads = bad;
        flcc_plan plan = reinterpret_cast<flcc_plan>(&o);
        CHECK(flcc_plan_create(&plan, FLCC_CONV, 2, {16, 16, 1}, {3, 3, 1}, &o) == FLCC_INVALID_VALUE);
        CHECK(plan == nullptr);
        CHECK_THAT(std::string(flcc_last_error_detail()),
                   Catch::Contains("options.threads = " + std::to_string(bad)) &&
                       Catch::Contains("FLCC_MAX_THREADS"));
    }
    o.threads = 0;   // all hardware threads
    flcc_plan plan = nullptr;
    REQUIRE(flcc_plan_create(&plan, FLCC_CONV, 2, {16, 16, 1}, {3, 3, 1}, &o) == FLCC_SUCCESS);
    CHECK(flcc_destroy(plan) == FLCC_SUCCESS);
}
