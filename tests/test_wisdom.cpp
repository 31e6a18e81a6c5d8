// Wisdom: decisions reused without timing, WISDOM_ONLY, export/import as text and files,
// corrupt or foreign wisdom ignored, and FLCC_WISDOM_FILE shared between processes.
#include "flcc.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <unistd.h>

namespace {

flcc_options measure(flcc_rigor rigor = FLCC_MEASURE)
{
    flcc_options o;
    flcc_options_init(&o);
    o.platform = FLCC_HOST;
    o.region = FLCC_VALID;
    o.rigor = rigor;
    return o;
}

flcc_result plan(flcc_plan* p, const flcc_options& o, int n = 300, int k = 9)
{
    return flcc_plan_create(p, FLCC_LCORR, 2, flcc_size{n, n + 7, 1}, flcc_size{k, k, 1}, &o);
}

std::string exported()
{
    char* text = nullptr;
    REQUIRE(flcc_wisdom_export(&text) == FLCC_SUCCESS);
    std::string s(text);
    flcc_free(text);
    return s;
}

}  // namespace

TEST_CASE("a decision in wisdom is reused without timing", "[wisdom]")
{
    flcc_wisdom_forget();
    flcc_plan a = nullptr, b = nullptr;
    REQUIRE(plan(&a, measure()) == FLCC_SUCCESS);
    CHECK(flcc_plan_candidate_count(a) >= 2);
    const auto t0 = std::chrono::steady_clock::now();
    REQUIRE(plan(&b, measure()) == FLCC_SUCCESS);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    CHECK(std::string(flcc_plan_method(a)) == flcc_plan_method(b));
    CHECK(flcc_plan_candidate_count(b) == 1);   // nothing timed
    WARN("plan from wisdom took " << ms << " ms");
    CHECK(ms < 50);   // generous: creating the executor (threads, buffers) is all it does
    flcc_destroy(a);
    flcc_destroy(b);

    // WISDOM_ONLY: a hit plans, a miss fails cleanly.
    REQUIRE(plan(&b, measure(FLCC_WISDOM_ONLY)) == FLCC_SUCCESS);
    flcc_destroy(b);
    CHECK(plan(&b, measure(FLCC_WISDOM_ONLY), 301) == FLCC_WISDOM_MISS);
    CHECK(b == nullptr);
}

TEST_CASE("wisdom survives export and import, and bad wisdom is refused", "[wisdom]")
{
    flcc_wisdom_forget();
    flcc_plan p = nullptr;
    REQUIRE(plan(&p, measure(), 200, 5) == FLCC_SUCCESS);
    const std::string method = flcc_plan_method(p);
    flcc_destroy(p);
    const std::string text = exported();
    CHECK(text.find("flcc-wisdom 1") == 0);
    CHECK(text.find(method) != std::string::npos);

    flcc_wisdom_forget();
    CHECK(plan(&p, measure(FLCC_WISDOM_ONLY), 200, 5) == FLCC_WISDOM_MISS);
    REQUIRE(flcc_wisdom_import(text.c_str()) == FLCC_SUCCESS);
    REQUIRE(plan(&p, measure(FLCC_WISDOM_ONLY), 200, 5) == FLCC_SUCCESS);
    CHECK(method == flcc_plan_method(p));
    flcc_destroy(p);

    // Corrupt, foreign (another signature) and unknown-solver wisdom: refused, store unchanged,
    // planning goes on.
    const std::string before = exported();
    std::string foreign = text;
    foreign.replace(foreign.find("signature ") + 10, 4, "dead");
    std::string unknown = text + "lcorr 2d 9x9 t3x3 full single th1 host => host.nonexistent\n";
    for (const std::string& bad : {std::string("garbage"), std::string(""), foreign, unknown,
                                   text.substr(0, text.size() / 2) + " =>\n"})
        CHECK(flcc_wisdom_import(bad.c_str()) == FLCC_INVALID_WISDOM);
    CHECK(exported() == before);
    CHECK(flcc_wisdom_import(nullptr) == FLCC_NULL_POINTER);
    CHECK(flcc_wisdom_export(nullptr) == FLCC_NULL_POINTER);
    REQUIRE(plan(&p, measure(), 123, 4) == FLCC_SUCCESS);
    flcc_destroy(p);

    // Files.
    char path[] = "/tmp/flcc-wisdom-XXXXXX";
    const int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    close(fd);
    REQUIRE(flcc_wisdom_export_file(path) == FLCC_SUCCESS);
    flcc_wisdom_forget();
    REQUIRE(flcc_wisdom_import_file(path) == FLCC_SUCCESS);
    // The same decisions; FFTW's part (builds with FFTW) holds the same entries, in the order
    // of its hash table.
    const std::string from_file = [&] {
        std::ifstream in(path);
        return std::string(std::istreambuf_iterator<char>(in), {});
    }();
    const std::string again = exported();
    auto decisions = [](const std::string& t) { return t.substr(0, t.find("fftw-wisdom\n")); };
    CHECK(decisions(again) == decisions(from_file));
    auto entries = [](const std::string& t) {
        std::istringstream in(t);
        std::multiset<std::string> lines;
        for (std::string line; std::getline(in, line);) lines.insert(line);
        return lines;
    };
    CHECK(entries(again) == entries(from_file));
    CHECK(flcc_wisdom_import_file("/nonexistent/dir/wisdom") == FLCC_IO_ERROR);
    CHECK(flcc_wisdom_export_file("/nonexistent/dir/wisdom") == FLCC_IO_ERROR);
    std::remove(path);
}

#ifdef FLCC_WISDOM_CHILD
// Run as a child process (see the next test): plans with FLCC_WISDOM_FILE set.
TEST_CASE("child: plan with the wisdom file", "[.child]")
{
    flcc_plan p = nullptr;
    const char* only = std::getenv("FLCC_TEST_WISDOM_ONLY");
    REQUIRE(plan(&p, measure(only ? FLCC_WISDOM_ONLY : FLCC_MEASURE), 250, 6) == FLCC_SUCCESS);
    std::printf("method=%s candidates=%d\n", flcc_plan_method(p), flcc_plan_candidate_count(p));
    flcc_destroy(p);
}
#endif
