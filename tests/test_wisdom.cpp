// Wisdom: decisions reused without timing, WISDOM_ONLY, export/import as text and files,
// corrupt or foreign wisdom ignored, files read and written safely, and FLCC_WISDOM_FILE shared
// between processes.
#include "flcc.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <sys/stat.h>
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

std::string read_all(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_all(const std::string& path, const std::string& text)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
}

// The names in a directory (without . and ..).
std::set<std::string> entries_of(const std::string& dir)
{
    std::set<std::string> names;
    if (DIR* d = opendir(dir.c_str())) {
        while (const dirent* e = readdir(d))
            if (std::string(e->d_name) != "." && std::string(e->d_name) != "..")
                names.insert(e->d_name);
        closedir(d);
    }
    return names;
}

// A scratch directory, removed with its files (one level) at the end of the scope.
struct ScratchDir {
    std::string path;
    ScratchDir()
    {
        char name[] = "/tmp/flcc-wisdom-dir-XXXXXX";
        REQUIRE(mkdtemp(name) != nullptr);
        path = name;
    }
    ~ScratchDir()
    {
        for (const std::string& e : entries_of(path)) {
            const std::string f = path + "/" + e;
            if (rmdir(f.c_str()) != 0) std::remove(f.c_str());
        }
        rmdir(path.c_str());
    }
};

std::string detail() { return flcc_last_error_detail(); }

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

TEST_CASE("wisdom files: only regular files of bounded size are read, only wisdom is replaced",
          "[wisdom]")
{
    flcc_wisdom_forget();
    flcc_plan p = nullptr;
    REQUIRE(plan(&p, measure(), 120, 5) == FLCC_SUCCESS);
    flcc_destroy(p);
    const std::string text = exported();
    ScratchDir dir;
    const std::string wisdom = dir.path + "/wisdom";

    // Written atomically beside the target: the file holds the export, nothing else remains.
    REQUIRE(flcc_wisdom_export_file(wisdom.c_str()) == FLCC_SUCCESS);
    CHECK(detail().empty());
    CHECK(read_all(wisdom) == text);
    CHECK(entries_of(dir.path) == std::set<std::string>{"wisdom"});
    // Replaced when it is wisdom (any text that begins as wisdom does), keeping its permissions.
    write_all(wisdom, "flcc-wisdom 0\nsomething older\n");
    REQUIRE(chmod(wisdom.c_str(), 0640) == 0);
    REQUIRE(flcc_wisdom_export_file(wisdom.c_str()) == FLCC_SUCCESS);
    CHECK(read_all(wisdom) == text);
    struct stat st;
    REQUIRE(stat(wisdom.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0640);
    // An empty file is replaced too (a file made for the purpose, as mkstemp makes one).
    const std::string empty = dir.path + "/empty";
    write_all(empty, "");
    CHECK(flcc_wisdom_export_file(empty.c_str()) == FLCC_SUCCESS);
    CHECK(read_all(empty) == text);
    std::remove(empty.c_str());

    // A symbolic link: the file it names is replaced, the link stays.
    const std::string link = dir.path + "/link";
    REQUIRE(symlink(wisdom.c_str(), link.c_str()) == 0);
    write_all(wisdom, "flcc-wisdom 1\n");
    REQUIRE(flcc_wisdom_export_file(link.c_str()) == FLCC_SUCCESS);
    struct stat lst;
    REQUIRE(lstat(link.c_str(), &lst) == 0);
    CHECK(S_ISLNK(lst.st_mode));
    CHECK(read_all(wisdom) == text);
    std::remove(link.c_str());

    // A file that is not wisdom (a mistyped path) is left untouched.
    const std::string notes = dir.path + "/notes.txt";
    write_all(notes, "precious data\n");
    CHECK(flcc_wisdom_export_file(notes.c_str()) == FLCC_IO_ERROR);
    CHECK(detail().find("is not FLCC wisdom: left unchanged") != std::string::npos);
    CHECK(read_all(notes) == "precious data\n");
    write_all(notes, "flcc");   // shorter than the magic word: not wisdom either
    CHECK(flcc_wisdom_export_file(notes.c_str()) == FLCC_IO_ERROR);
    CHECK(read_all(notes) == "flcc");
    CHECK(flcc_wisdom_import_file(notes.c_str()) == FLCC_INVALID_WISDOM);

    // A directory is neither read nor replaced, and no temporary file is left beside it.
    const std::string sub = dir.path + "/sub";
    REQUIRE(mkdir(sub.c_str(), 0755) == 0);
    CHECK(flcc_wisdom_import_file(sub.c_str()) == FLCC_IO_ERROR);
    CHECK(detail().find("not a regular file") != std::string::npos);
    CHECK(flcc_wisdom_export_file(sub.c_str()) == FLCC_IO_ERROR);
    CHECK(flcc_wisdom_export_file((sub + "/").c_str()) == FLCC_IO_ERROR);
    struct stat sst;
    REQUIRE(stat(sub.c_str(), &sst) == 0);
    CHECK(S_ISDIR(sst.st_mode));
    CHECK(entries_of(sub).empty());

    // A FIFO opens without blocking and is refused; a device is not read.
    const std::string fifo = dir.path + "/fifo";
    REQUIRE(mkfifo(fifo.c_str(), 0644) == 0);
    CHECK(flcc_wisdom_import_file(fifo.c_str()) == FLCC_IO_ERROR);
    CHECK(flcc_wisdom_export_file(fifo.c_str()) == FLCC_IO_ERROR);
    REQUIRE(lstat(fifo.c_str(), &lst) == 0);
    CHECK(S_ISFIFO(lst.st_mode));
    const auto t0 = std::chrono::steady_clock::now();
    CHECK(flcc_wisdom_import_file("/dev/zero") == FLCC_IO_ERROR);
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2));

    // A file larger than wisdom ever is (sparse: no disk used) is refused unread.
    const std::string huge = dir.path + "/huge";
    write_all(huge, "flcc-wisdom 1\n");
    REQUIRE(truncate(huge.c_str(), off_t(1) << 30) == 0);
    const auto t1 = std::chrono::steady_clock::now();
    CHECK(flcc_wisdom_import_file(huge.c_str()) == FLCC_INVALID_WISDOM);
    CHECK(detail().find("larger than") != std::string::npos);
    CHECK(std::chrono::steady_clock::now() - t1 < std::chrono::seconds(2));
    // Just over the limit (4 MiB), and just under it: the limit is the file's size.
    REQUIRE(truncate(huge.c_str(), (off_t(4) << 20) + 1) == 0);
    CHECK(flcc_wisdom_import_file(huge.c_str()) == FLCC_INVALID_WISDOM);
    CHECK(detail().find("larger than") != std::string::npos);
    write_all(huge, text + std::string((size_t(4) << 20) - text.size(), '\n'));
    CHECK(flcc_wisdom_import_file(huge.c_str()) == FLCC_SUCCESS);

    // Wisdom too large for a file is not written (a file that could not be read back).
    std::string big = text.substr(0, text.find("fftw-wisdom\n"));
    for (int i = 0; big.size() <= (size_t(4) << 20); ++i)
        big += "lcorr 2d " + std::to_string(i) + "x9 t3x3 full single th1 host => " +
               flcc_solver_name(0) + "\n";
    REQUIRE(flcc_wisdom_import(big.c_str()) == FLCC_SUCCESS);
    const std::string fresh = dir.path + "/fresh";
    CHECK(flcc_wisdom_export_file(fresh.c_str()) == FLCC_IO_ERROR);
    CHECK(detail().find("exceeds") != std::string::npos);
    flcc_wisdom_forget();

    // Unwritable places: nothing is created.
    CHECK(flcc_wisdom_export_file((dir.path + "/no/such/dir/wisdom").c_str()) == FLCC_IO_ERROR);
    CHECK(flcc_wisdom_export_file("") == FLCC_IO_ERROR);
    CHECK(entries_of(dir.path) ==
          std::set<std::string>{"wisdom", "notes.txt", "sub", "fifo", "huge"});
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

// Run as a child process: wisdom exported in a fresh process (before any transform is planned)
// imports back, in the same process and (FLCC_TEST_IMPORT set) in another fresh one.
TEST_CASE("child: wisdom exported before any plan imports back", "[.fresh]")
{
    const char* path = std::getenv("FLCC_TEST_WISDOM_PATH");
    REQUIRE(path != nullptr);
    if (std::getenv("FLCC_TEST_IMPORT") != nullptr) {
        CHECK(flcc_wisdom_import_file(path) == FLCC_SUCCESS);
        INFO(flcc_last_error_detail());
        flcc_plan p = nullptr;
        REQUIRE(plan(&p, measure(), 100, 17) == FLCC_SUCCESS);   // plans on after the import
        flcc_destroy(p);
        CHECK(flcc_wisdom_import(exported().c_str()) == FLCC_SUCCESS);
        std::printf("fresh import OK\n");
        return;
    }
    const std::string text = exported();
    CHECK(flcc_wisdom_import(text.c_str()) == FLCC_SUCCESS);
    INFO(flcc_last_error_detail());
    REQUIRE(flcc_wisdom_export_file(path) == FLCC_SUCCESS);
    CHECK(flcc_wisdom_import_file(path) == FLCC_SUCCESS);
    std::printf("fresh export OK\n");
}
#endif
