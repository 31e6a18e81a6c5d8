// flcc-register end to end, on the CPU: offsets against synthetic truth in the three modes, the
// output formats, the maps, every bad-input case, an interrupted run and --keep-going.
//
// The EBSD-like set: 20 frames of 256 x 256 16-bit, 9 subregions of 80 x 80 (step 80, margin 8),
// displacements up to 3 px, features of 3 px, Poisson noise at 2000 photons. Searching a 64 x 64
// template in each subregion, the 5 x 5 quadratic fit is expected within 0.03 px RMS (noise-free
// simulations of this geometry give 0.022; the remainder is the noise).
#include "synthetic.h"
#include "test_support.h"
#include "tiff_io.h"
#include "truth_compare.h"

#include <catch2/catch.hpp>
#include <tiffio.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <thread>

using namespace registration;
using registration_test::TemporaryFolder;
using registration_test::ToolRun;
using registration_test::lines_of;
using registration_test::read_text;
using registration_test::run_tool;
using registration_test::write_text;

namespace {

constexpr int frames = 20;
constexpr int rois = 9;

// The generated sets, made once for the whole run.
struct Sets {
    TemporaryFolder folder;
    std::string ebsd, piv;
    Sets()
    {
        SyntheticSpec spec;
        spec.frames = frames;
        spec.height = spec.width = 256;
        spec.roi_size = spec.roi_step = 80;
        spec.roi_margin = 8;
        spec.max_displacement = 3;
        spec.feature_size = 3;
        spec.photons = 2000;
        spec.folder = ebsd = folder / "ebsd";
        write_synthetic_set(spec);
        spec.kind = SyntheticKind::piv;
        spec.feature_size = 3;   // particle diameter
        spec.seed = 2;
        spec.folder = piv = folder / "piv";
        write_synthetic_set(spec);
    }
};

const Sets& sets()
{
    static const Sets instance;
    return instance;
}

// The grid and search geometry of the sets, and a quick planner.
std::vector<std::string> search_options()
{
    return {"--roi-size", "80", "--roi-step", "80", "--roi-margin", "8", "--template-size", "64",
            "--rigor", "estimate", "--quiet"};
}

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b)
{
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

std::vector<std::string> ebsd_command()
{
    return {"ebsd", sets().ebsd + "/reference.tif", "@" + sets().ebsd + "/frames.txt"};
}

std::string frame_path(const std::string& set, int index)
{
    char name[64];
    std::snprintf(name, sizeof name, "/frames/frame_%05d.tif", index);
    return set + name;
}

OffsetComparison compare(const std::string& truth_csv, const std::string& result_csv)
{
    TemporaryFolder folder;
    write_text(folder / "result.csv", result_csv);
    return compare_offsets(read_truth_csv(truth_csv), read_result_csv(folder / "result.csv"));
}

// Rows per frame of a CSV output; every row must have 8 fields.
std::map<long, int> rows_per_frame(const std::string& csv)
{
    std::map<long, int> rows;
    const auto lines = lines_of(csv);
    REQUIRE(!lines.empty());
    CHECK(lines[0] == "frame,roi,y,x,dy,dx,peak,quality");
    for (size_t i = 1; i < lines.size(); ++i) {
        REQUIRE(std::count(lines[i].begin(), lines[i].end(), ',') == 7);
        rows[std::stol(lines[i])] += 1;
    }
    return rows;
}

// The run failed with one error line naming `file`, and wrote no row.
void check_refused(const ToolRun& run, const std::string& file)
{
    CHECK(run.exit_status == 1);
    const auto err = lines_of(run.err);
    REQUIRE(err.size() == 1);
    CHECK_THAT(err[0], Catch::StartsWith("flcc-register: error: ") && Catch::Contains(file));
    const auto out = lines_of(run.out);
    CHECK(out.size() <= 1);   // at most the header
}

}  // namespace

TEST_CASE("ebsd: offsets within 0.03 px RMS of the truth (5 x 5 quadratic)", "[register][accuracy]")
{
    const ToolRun run = run_tool(with(ebsd_command(), with(search_options(), {"--refine", "quadratic"})));
    INFO(run.err);
    REQUIRE(run.exit_status == 0);
    const auto rows = rows_per_frame(run.out);
    CHECK(rows.size() == size_t(frames));
    const OffsetComparison c = compare(sets().ebsd + "/truth.csv", run.out);
    INFO("RMS " << c.rms << " mean dy " << c.mean_dy << " dx " << c.mean_dx << " max " << c.max_error);
    CHECK(c.compared == frames * rois);
    CHECK(c.rms <= 0.03);
}

TEST_CASE("ebsd: every refinement and both operations find the offsets", "[register][accuracy]")
{
    const std::vector<std::vector<std::string>> variants{
        {"--refine", "parabolic"}, {"--refine", "gaussian"}, {"--refine", "upsampled", "--upsample", "20"},
        {"--refine", "quadratic", "--fit-size", "3"}, {"--op", "xcorr", "--zero-mean", "on"}};
    for (const auto& variant : variants) {
        const ToolRun run = run_tool(with(ebsd_command(), with(search_options(), variant)));
        INFO(variant[0] << " " << variant[1] << ": " << run.err);
        REQUIRE(run.exit_status == 0);
        const OffsetComparison c = compare(sets().ebsd + "/truth.csv", run.out);
        INFO("RMS " << c.rms);
        CHECK(c.compared == frames * rois);
        CHECK(c.rms <= 0.1);
    }
}

TEST_CASE("ebsd: whole subregions (FULL region, zero-mean) find the offsets", "[register][accuracy]")
{
    // The overlap of whole subregions shrinks as they move apart, which pulls the estimate towards
    // zero: a looser bound than the search form's (docs/register.md).
    const ToolRun run = run_tool(with(ebsd_command(), {"--roi-size", "80", "--roi-step", "80", "--roi-margin", "8",
                                                       "--rigor", "estimate", "--quiet"}));
    INFO(run.err);
    REQUIRE(run.exit_status == 0);
    const OffsetComparison c = compare(sets().ebsd + "/truth.csv", run.out);
    INFO("RMS " << c.rms << " mean dy " << c.mean_dy << " dx " << c.mean_dx);
    CHECK(c.compared == frames * rois);
    CHECK(c.rms <= 0.15);
}

TEST_CASE("sequence and pairs modes", "[register][accuracy]")
{
    SECTION("sequence: each frame against the previous one")
    {
        const ToolRun run = run_tool(with({"sequence", "@" + sets().ebsd + "/frames.txt"}, search_options()));
        INFO(run.err);
        REQUIRE(run.exit_status == 0);
        const OffsetComparison c = compare(sets().ebsd + "/truth_sequence.csv", run.out);
        INFO("RMS " << c.rms);
        CHECK(c.compared == (frames - 1) * rois);
        CHECK(rows_per_frame(run.out).count(0) == 0);   // frame 0 is only a reference
        CHECK(c.rms <= 0.05);
    }
    SECTION("pairs: PIV-like particle images")
    {
        const ToolRun run = run_tool(with({"pairs", "@" + sets().piv + "/frames.txt"},
                                          with(search_options(), {"--refine", "gaussian"})));
        INFO(run.err);
        REQUIRE(run.exit_status == 0);
        const OffsetComparison c = compare(sets().piv + "/truth.csv", run.out);
        INFO("RMS " << c.rms << " mean dy " << c.mean_dy << " dx " << c.mean_dx);
        CHECK(c.compared == frames / 2 * rois);
        CHECK(c.rms <= 0.1);
    }
    SECTION("pairs need an even number of frames")
    {
        const ToolRun run = run_tool(with({"pairs", frame_path(sets().piv, 0), frame_path(sets().piv, 1),
                                           frame_path(sets().piv, 2)}, search_options()));
        CHECK(run.exit_status == 1);
        CHECK_THAT(run.err, Catch::Contains("even number"));
    }
}

// Whether two outputs hold the same rows, numbers equal to within one unit of their last printed
// digit: separate runs may plan FFTW differently (FFTW_MEASURE times its candidates), which moves
// the last bits of a result.
bool same_rows(const std::string& a, const std::string& b)
{
    const auto la = lines_of(a), lb = lines_of(b);
    if (la.size() != lb.size()) return false;
    const auto split = [](const std::string& line) {
        std::vector<std::string> v(1);
        for (char ch : line) {
            if (ch == ',' || ch == ':' || ch == '{' || ch == '}') v.emplace_back();
            else v.back() += ch;
        }
        return v;
    };
    for (size_t i = 0; i < la.size(); ++i) {
        const auto fa = split(la[i]), fb = split(lb[i]);
        if (fa.size() != fb.size()) return false;
        for (size_t j = 0; j < fa.size(); ++j) {
            if (fa[j] == fb[j]) continue;
            char* end_a = nullptr;
            char* end_b = nullptr;
            const double x = std::strtod(fa[j].c_str(), &end_a), y = std::strtod(fb[j].c_str(), &end_b);
            if (*end_a != 0 || *end_b != 0 || std::fabs(x - y) > 1.5e-4 * std::max(1.0, std::fabs(x)))
                return false;
        }
    }
    return true;
}

TEST_CASE("Output: CSV and JSON lines agree; -o, stacks and batch sizes change nothing", "[register][output]")
{
    const ToolRun csv = run_tool(with(ebsd_command(), search_options()));
    REQUIRE(csv.exit_status == 0);
    const auto csv_lines = lines_of(csv.out);
    REQUIRE(csv_lines.size() == size_t(1 + frames * rois));
    // Row order: frames in order, subregions in grid order.
    CHECK_THAT(csv_lines[1], Catch::StartsWith("0,0,47.5,47.5,"));
    CHECK_THAT(csv_lines[rois + 1], Catch::StartsWith("1,0,"));
    CHECK_THAT(csv_lines[3], Catch::StartsWith("0,2,47.5,207.5,"));

    SECTION("JSON lines carry the same numbers, and the file of each frame")
    {
        const ToolRun jsonl = run_tool(with(ebsd_command(), with(search_options(), {"--format", "jsonl"})));
        REQUIRE(jsonl.exit_status == 0);
        const auto lines = lines_of(jsonl.out);
        REQUIRE(lines.size() == size_t(frames * rois));
        for (size_t i = 0; i < lines.size(); ++i) {
            const std::string& line = lines[i];
            CHECK_THAT(line, Catch::StartsWith("{\"frame\":") && Catch::EndsWith("}") && Catch::Contains("\"psr\":") &&
                                 Catch::Contains("\"file\":\"" + frame_path(sets().ebsd, int(i) / rois) + "\""));
            // The CSV row's dy and dx (this run's JSON line against the CSV run's row).
            std::vector<std::string> fields;
            std::string field;
            for (char ch : csv_lines[i + 1] + ",") {
                if (ch == ',') {
                    fields.push_back(field);
                    field.clear();
                } else {
                    field += ch;
                }
            }
            const size_t at = line.find("\"dy\":");
            REQUIRE(at != std::string::npos);
            const std::string json_pair = line.substr(at + 5, line.find(",\"peak\"") - at - 5);
            CHECK(same_rows(json_pair, fields[4] + ",\"dx\":" + fields[5]));
        }
    }
    SECTION("-o FILE holds what standard output held")
    {
        TemporaryFolder folder;
        const ToolRun to_file = run_tool(with(ebsd_command(), with(search_options(), {"-o", folder / "out.csv"})));
        REQUIRE(to_file.exit_status == 0);
        CHECK(to_file.out.empty());
        CHECK(same_rows(read_text(folder / "out.csv"), csv.out));
    }
    SECTION("a multi-page stack and other batch sizes and thread counts give the same rows")
    {
        TemporaryFolder folder;
        {
            TiffWriter stack(folder / "stack.tif");
            std::vector<uint16_t> pixels(256 * 256);
            for (int f = 0; f < frames; ++f) {
                const std::string path = frame_path(sets().ebsd, f);
                TiffReader(path).read_page(inspect_tiff(path)[0], pixels.data());
                stack.write_uint16(pixels.data(), 256, 256);
            }
            stack.close();
        }
        const ToolRun stacked = run_tool(with({"ebsd", sets().ebsd + "/reference.tif", folder / "stack.tif"},
                                              with(search_options(), {"--frames-per-batch", "3", "--readers", "2",
                                                                      "--threads", "1"})));
        REQUIRE(stacked.exit_status == 0);
        CHECK(same_rows(stacked.out, csv.out));
    }
}

TEST_CASE("--maps writes the chosen frames' correlation maps as float32 TIFF", "[register][output]")
{
    TemporaryFolder folder;
    const ToolRun run = run_tool(with(ebsd_command(), with(search_options(), {"--maps", folder.path(), "--map-frames", "0,5"})));
    INFO(run.err);
    REQUIRE(run.exit_status == 0);
    CHECK(std::filesystem::exists(folder / "frame_000000.tif"));
    CHECK(std::filesystem::exists(folder / "frame_000005.tif"));
    CHECK_FALSE(std::filesystem::exists(folder / "frame_000001.tif"));
    TIFF* tif = TIFFOpen((folder / "frame_000005.tif").c_str(), "r");
    REQUIRE(tif);
    CHECK(TIFFNumberOfDirectories(tif) == rois);
    uint32_t h = 0, w = 0;
    uint16_t format = 0;
    TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &h);
    TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &w);
    TIFFGetField(tif, TIFFTAG_SAMPLEFORMAT, &format);
    CHECK(h == 80 - 64 + 1);
    CHECK(w == 80 - 64 + 1);
    CHECK(format == SAMPLEFORMAT_IEEEFP);
    // The map's maximum lies where the CSV's integer displacement says.
    std::vector<float> map(size_t(h) * w), row(w);
    for (uint32_t y = 0; y < h; ++y) {
        REQUIRE(TIFFReadScanline(tif, row.data(), y, 0) == 1);
        std::copy(row.begin(), row.end(), map.begin() + size_t(y) * w);
    }
    TIFFClose(tif);
    const size_t best = size_t(std::max_element(map.begin(), map.end()) - map.begin());
    const auto lines = lines_of(run.out);
    const std::string& first_roi_of_frame_5 = lines[size_t(1 + 5 * rois)];
    std::vector<double> values;
    std::string field;
    for (char ch : first_roi_of_frame_5 + ",") {
        if (ch == ',') {
            values.push_back(std::stod(field));
            field.clear();
        } else {
            field += ch;
        }
    }
    CHECK(std::abs(double(best / w) - (values[4] + 8)) < 0.5 + 1e-9);
    CHECK(std::abs(double(best % w) - (values[5] + 8)) < 0.5 + 1e-9);
}

TEST_CASE("Bad input: one error line naming the file, nonzero exit, no rows", "[register][errors]")
{
    TemporaryFolder folder;
    const std::string reference = sets().ebsd + "/reference.tif";
    const std::string good = frame_path(sets().ebsd, 0);
    auto ebsd = [&](const std::vector<std::string>& frame_args, const std::vector<std::string>& extra = {}) {
        return run_tool(with(with({"ebsd", reference}, frame_args), with(search_options(), extra)));
    };
    SECTION("a missing frame file")
    {
        check_refused(ebsd({good, folder / "missing.tif"}), folder / "missing.tif");
    }
    SECTION("a missing reference")
    {
        check_refused(run_tool(with({"ebsd", folder / "missing.tif", good}, search_options())), folder / "missing.tif");
    }
    SECTION("a missing frame list")
    {
        check_refused(ebsd({"@" + (folder / "list.txt")}), folder / "list.txt");
    }
    SECTION("a truncated TIFF")
    {
        std::filesystem::copy_file(good, folder / "cut.tif");
        std::filesystem::resize_file(folder / "cut.tif", std::filesystem::file_size(good) / 2);
        check_refused(ebsd({good, folder / "cut.tif"}), folder / "cut.tif");
    }
    SECTION("a file that is not a TIFF")
    {
        write_text(folder / "junk.tif", std::string(5000, 'x'));
        check_refused(ebsd({good, folder / "junk.tif"}), folder / "junk.tif");
    }
    SECTION("a frame of other dimensions")
    {
        std::vector<uint16_t> pixels(256 * 250, 1000);
        TiffWriter writer(folder / "narrow.tif");
        writer.write_uint16(pixels.data(), 256, 250);
        writer.close();
        check_refused(ebsd({good, folder / "narrow.tif"}), folder / "narrow.tif");
    }
    SECTION("a page of other bit depth inside a stack")
    {
        std::vector<uint16_t> pixels(256 * 256, 1000);
        std::vector<uint8_t> narrow(256 * 256, 100);
        TiffWriter writer(folder / "mixed.tif");
        writer.write_uint16(pixels.data(), 256, 256);
        writer.write_uint8(narrow.data(), 256, 256);
        writer.close();
        const ToolRun run = ebsd({folder / "mixed.tif"});
        check_refused(run, folder / "mixed.tif (page 2)");
        CHECK_THAT(run.err, Catch::Contains("8-bit"));
    }
    SECTION("subregions outside the frame: an origins file")
    {
        write_text(folder / "rois.txt", "0 0\n200 10\n");
        const ToolRun run = ebsd({good}, {"--rois", folder / "rois.txt"});
        check_refused(run, folder / "rois.txt");
        CHECK_THAT(run.err, Catch::Contains("subregion 1 at (200, 10)"));
    }
    SECTION("subregions outside the frame: a grid that does not fit")
    {
        const ToolRun run = run_tool({"ebsd", reference, good, "--roi-size", "300", "--quiet"});
        check_refused(run, reference);
    }
    SECTION("an unwritable output")
    {
        check_refused(ebsd({good}, {"-o", folder / "no-folder/out.csv"}), folder / "no-folder/out.csv");
    }
    SECTION("usage errors exit with CLI11's status")
    {
        CHECK(run_tool({"ebsd", reference, good, "--refine", "cubic"}).exit_status != 0);
        CHECK(run_tool({"ebsd", reference, good, "--template-size", "200", "--roi-size", "100"}).exit_status == 2);
        CHECK(run_tool({}).exit_status != 0);
    }
}

TEST_CASE("A frame that fails mid-run: earlier frames' rows are complete, then the error", "[register][errors]")
{
    TemporaryFolder folder;
    // Frame 7 (of 10) has corrupt compressed data: its directory reads, its pixels do not.
    std::vector<std::string> list;
    for (int f = 0; f < 10; ++f) list.push_back(frame_path(sets().ebsd, f));
    const std::string corrupt = folder / "corrupt.tif";
    {
        std::vector<uint16_t> pixels(256 * 256);
        TiffReader(list[7]).read_page(inspect_tiff(list[7])[0], pixels.data());
        TiffWriter writer(corrupt);
        writer.write_uint16(pixels.data(), 256, 256, TiffCompression::deflate);
        writer.close();
        uint64_t* offsets = nullptr;
        TIFF* tif = TIFFOpen(corrupt.c_str(), "r");
        REQUIRE(tif);
        REQUIRE(TIFFGetField(tif, TIFFTAG_STRIPOFFSETS, &offsets));
        const uint64_t offset = offsets[0];
        TIFFClose(tif);
        std::string bytes = read_text(corrupt);
        for (size_t i = 0; i < 16; ++i) bytes[offset + i] = char(0xff);
        write_text(corrupt, bytes);
    }
    list[7] = corrupt;
    const std::vector<std::string> run_args = with(with({"ebsd", sets().ebsd + "/reference.tif"}, list),
                                                   with(search_options(), {"--frames-per-batch", "3"}));
    SECTION("without --keep-going")
    {
        const ToolRun run = run_tool(run_args);
        CHECK(run.exit_status == 1);
        const auto err = lines_of(run.err);
        REQUIRE(err.size() == 1);
        CHECK_THAT(err[0], Catch::Contains(corrupt) && Catch::Contains("cannot decode"));
        const auto rows = rows_per_frame(run.out);
        // Frames 0-6 (batches 0-1 and frame 6 of batch 2), each complete; none of 7 or later.
        REQUIRE(rows.size() == 7);
        for (const auto& [frame, count] : rows) {
            CHECK(frame < 7);
            CHECK(count == rois);
        }
    }
    SECTION("with --keep-going: a warning, NaN rows for the skipped frame, the rest registered")
    {
        std::vector<std::string> args = run_args;
        args.erase(std::find(args.begin(), args.end(), "--quiet"));
        args.push_back("--keep-going");
        const ToolRun run = run_tool(args);
        CHECK(run.exit_status == 0);
        CHECK_THAT(run.err, Catch::Contains("warning: frame 7 skipped: " + corrupt));
        CHECK_THAT(run.err, Catch::Contains("(1 skipped)"));
        const auto rows = rows_per_frame(run.out);
        CHECK(rows.size() == 10);
        for (const std::string& line : lines_of(run.out)) {
            if (line.rfind("7,", 0) == 0) {
                CHECK_THAT(line, Catch::EndsWith(",nan,nan,nan,nan"));
            } else if (line.rfind("frame", 0) != 0) {
                CHECK_THAT(line, !Catch::Contains("nan"));
            }
        }
        // The frames around the skipped one keep their accuracy.
        const OffsetComparison c = compare(sets().ebsd + "/truth.csv", run.out);
        CHECK(c.compared == 9 * rois);
        CHECK(c.not_measured == rois);
        CHECK(c.rms <= 0.05);
    }
    SECTION("with --keep-going, a missing file is recorded too")
    {
        std::vector<std::string> args = run_args;
        args[2 + 3] = folder / "gone.tif";
        args.push_back("--keep-going");
        const ToolRun run = run_tool(args);
        CHECK(run.exit_status == 0);
        const auto rows = rows_per_frame(run.out);
        CHECK(rows.size() == 10);
        CHECK(compare(sets().ebsd + "/truth.csv", run.out).not_measured == 2 * rois);
    }
}

TEST_CASE("An interrupted run leaves whole rows of whole frames", "[register][interrupt]")
{
    TemporaryFolder folder;
    // Many frames (the set's list, repeated), one per batch, so that the run is still going when
    // it is stopped.
    std::string list;
    for (int repeat = 0; repeat < 50; ++repeat) list += read_text(sets().ebsd + "/frames.txt");
    std::filesystem::copy(sets().ebsd + "/frames", folder / "frames");
    write_text(folder / "frames.txt", list);
    const std::vector<std::string> args = with({"ebsd", sets().ebsd + "/reference.tif", "@" + (folder / "frames.txt")},
                                               with(search_options(), {"--frames-per-batch", "1", "--threads", "1",
                                                                       "-o", folder / "out.csv"}));
    for (const int signal_number : {SIGTERM, SIGKILL}) {
        INFO("signal " << signal_number);
        const int pid = registration_test::start_tool(args, folder / "stdout", folder / "stderr");
        // Wait for the first rows, then stop it.
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (lines_of(read_text(folder / "out.csv")).size() < size_t(1 + 2 * rois) &&
               std::chrono::steady_clock::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        ::kill(pid, signal_number);
        const int status = registration_test::wait_tool(pid);
        CHECK(status == 128 + signal_number);
        const std::string out = read_text(folder / "out.csv");
        CHECK_THAT(out, Catch::EndsWith("\n"));
        const auto rows = rows_per_frame(out);
        CHECK(rows.size() >= 2);
        CHECK(rows.size() < size_t(50 * frames));
        long expected_frame = 0;
        for (const auto& [frame, count] : rows) {
            CHECK(frame == expected_frame++);   // the finished frames, in order, none missing
            CHECK(count == rois);
        }
        if (signal_number == SIGTERM) {
            CHECK_THAT(read_text(folder / "stderr"), Catch::Contains("stopped by signal"));
        }
    }
}

TEST_CASE("A blank frame gives flat maps: quality 0, no displacement", "[register][output]")
{
    TemporaryFolder folder;
    std::vector<uint16_t> blank(256 * 256, 1234);
    TiffWriter writer(folder / "blank.tif");
    writer.write_uint16(blank.data(), 256, 256);
    writer.close();
    const ToolRun run = run_tool(with({"ebsd", sets().ebsd + "/reference.tif", frame_path(sets().ebsd, 0), folder / "blank.tif"},
                                      search_options()));
    INFO(run.err);
    REQUIRE(run.exit_status == 0);
    const auto lines = lines_of(run.out);
    REQUIRE(lines.size() == size_t(1 + 2 * rois));
    for (int roi = 0; roi < rois; ++roi) {
        CHECK_THAT(lines[size_t(1 + roi)], !Catch::Contains("nan"));
        CHECK_THAT(lines[size_t(1 + rois + roi)], Catch::StartsWith("1,") && Catch::EndsWith(",nan,nan,0.000000,0.0000"));
    }
}
