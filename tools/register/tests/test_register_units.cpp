// Unit tests of flcc-register's parts that need no correlation: TIFF input and output, frame
// lists, subregion layouts, output formats, jobs of each mode, progress text, truth comparison.
#include "frame_source.h"
#include "output_writer.h"
#include "pipeline.h"
#include "progress.h"
#include "roi_grid.h"
#include "synthetic.h"
#include "test_support.h"
#include "tiff_io.h"
#include "truth_compare.h"

#include <catch2/catch.hpp>
#include <tiffio.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <numeric>

using namespace registration;
using registration_test::TemporaryFolder;
using registration_test::read_text;
using registration_test::write_text;

namespace {

std::vector<uint16_t> ramp16(int h, int w, int seed)
{
    std::vector<uint16_t> v(size_t(h) * w);
    for (size_t i = 0; i < v.size(); ++i) v[i] = uint16_t((i * 7919u + unsigned(seed) * 104729u) % 65536u);
    return v;
}

void write_page16(const std::string& path, int h, int w, int seed = 0)
{
    TiffWriter writer(path);
    const auto pixels = ramp16(h, w, seed);
    writer.write_uint16(pixels.data(), h, w);
    writer.close();
}

// A page written with libtiff directly, for kinds the tool's writer does not make.
void write_raw_page(const std::string& path, int h, int w, int bits, int samples, int format, bool tiled)
{
    TIFF* tif = TIFFOpen(path.c_str(), "w");
    REQUIRE(tif);
    TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, uint32_t(w));
    TIFFSetField(tif, TIFFTAG_IMAGELENGTH, uint32_t(h));
    TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, uint16_t(bits));
    TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, uint16_t(samples));
    TIFFSetField(tif, TIFFTAG_SAMPLEFORMAT, uint16_t(format));
    TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, uint16_t(samples == 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK));
    TIFFSetField(tif, TIFFTAG_PLANARCONFIG, uint16_t(PLANARCONFIG_CONTIG));
    const size_t pixel_bytes = size_t(bits / 8) * samples;
    if (tiled) {
        TIFFSetField(tif, TIFFTAG_TILEWIDTH, uint32_t(16));
        TIFFSetField(tif, TIFFTAG_TILELENGTH, uint32_t(16));
        std::vector<unsigned char> tile(16 * 16 * pixel_bytes);
        for (int ty = 0; ty < h; ty += 16) {
            for (int tx = 0; tx < w; tx += 16) {
                // Every pixel holds (row * w + column) as 16-bit, row-major in the tile.
                for (int y = 0; y < 16; ++y) {
                    for (int x = 0; x < 16; ++x) {
                        const uint16_t v = uint16_t((ty + y) * w + tx + x);
                        std::memcpy(&tile[(size_t(y) * 16 + x) * pixel_bytes], &v, 2);
                    }
                }
                REQUIRE(TIFFWriteTile(tif, tile.data(), uint32_t(tx), uint32_t(ty), 0, 0) >= 0);
            }
        }
    } else {
        TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, uint32_t(h));
        std::vector<unsigned char> data(size_t(h) * w * pixel_bytes, 7);
        REQUIRE(TIFFWriteEncodedStrip(tif, 0, data.data(), tmsize_t(data.size())) >= 0);
    }
    TIFFClose(tif);
}

void truncate_file(const std::string& path, double fraction)
{
    const auto size = std::filesystem::file_size(path);
    std::filesystem::resize_file(path, std::uintmax_t(double(size) * fraction));
}

}  // namespace

TEST_CASE("TIFF pages round-trip through the writer and reader", "[tiff]")
{
    TemporaryFolder folder;
    SECTION("16-bit, 8-bit and deflate pages of one stack, in order")
    {
        const std::string path = folder / "stack.tif";
        const auto a = ramp16(37, 53, 1), b = ramp16(37, 53, 2);
        std::vector<uint8_t> c(37 * 20);
        std::iota(c.begin(), c.end(), uint8_t(0));
        {
            TiffWriter writer(path);
            writer.write_uint16(a.data(), 37, 53);
            writer.write_uint16(b.data(), 37, 53, TiffCompression::deflate);
            writer.write_uint8(c.data(), 37, 20);
            writer.close();
        }
        const std::vector<PageInfo> pages = inspect_tiff(path);
        REQUIRE(pages.size() == 3);
        CHECK(pages[0].height == 37);
        CHECK(pages[0].width == 53);
        CHECK(pages[0].bits == 16);
        CHECK(pages[2].bits == 8);
        CHECK(pages[2].width == 20);
        CHECK(pages[1].index == 1);
        TiffReader reader(path);
        std::vector<uint16_t> got(a.size());
        // Out of order: pages are found by their directory offsets.
        reader.read_page(pages[1], got.data());
        CHECK(got == b);
        reader.read_page(pages[0], got.data());
        CHECK(got == a);
        std::vector<uint8_t> got8(c.size());
        reader.read_page(pages[2], got8.data());
        CHECK(got8 == c);
    }
    SECTION("BigTIFF")
    {
        const std::string path = folder / "big.tif";
        const auto a = ramp16(20, 30, 3);
        TiffWriter writer(path, true);
        writer.write_uint16(a.data(), 20, 30);
        writer.close();
        const auto pages = inspect_tiff(path);
        REQUIRE(pages.size() == 1);
        std::vector<uint16_t> got(a.size());
        TiffReader(path).read_page(pages[0], got.data());
        CHECK(got == a);
    }
    SECTION("tiled pages, edges included")
    {
        const std::string path = folder / "tiled.tif";
        write_raw_page(path, 40, 35, 16, 1, SAMPLEFORMAT_UINT, true);
        const auto pages = inspect_tiff(path);
        REQUIRE(pages.size() == 1);
        std::vector<uint16_t> got(40 * 35);
        TiffReader(path).read_page(pages[0], got.data());
        for (size_t i = 0; i < got.size(); ++i) REQUIRE(got[i] == uint16_t(i));
    }
    SECTION("float32 maps")
    {
        const std::string path = folder / "maps.tif";
        std::vector<float> map(9 * 11, 0.25f);
        TiffWriter writer(path);
        writer.write_float32(map.data(), 9, 11);
        writer.write_float32(map.data(), 9, 11);
        writer.close();
        TIFF* tif = TIFFOpen(path.c_str(), "r");
        REQUIRE(tif);
        CHECK(TIFFNumberOfDirectories(tif) == 2);
        uint16_t format = 0, bits = 0;
        TIFFGetField(tif, TIFFTAG_SAMPLEFORMAT, &format);
        TIFFGetField(tif, TIFFTAG_BITSPERSAMPLE, &bits);
        CHECK(format == SAMPLEFORMAT_IEEEFP);
        CHECK(bits == 32);
        std::vector<float> row(11);
        REQUIRE(TIFFReadScanline(tif, row.data(), 4, 0) == 1);
        CHECK(row[3] == 0.25f);
        TIFFClose(tif);
    }
}

TEST_CASE("Bad TIFF input is refused with a message naming the file", "[tiff]")
{
    TemporaryFolder folder;
    auto message_of = [](const std::string& path) -> std::string {
        try {
            inspect_tiff(path);
        } catch (const TiffError& e) {
            return e.what();
        }
        return "";
    };
    SECTION("missing file")
    {
        const std::string m = message_of(folder / "absent.tif");
        CHECK_THAT(m, Catch::StartsWith(folder / "absent.tif"));
        CHECK_THAT(m, Catch::Contains("No such file"));
    }
    SECTION("not a TIFF")
    {
        write_text(folder / "text.tif", "this is not an image\n");
        CHECK_THAT(message_of(folder / "text.tif"), Catch::StartsWith(folder / "text.tif") && Catch::Contains("not a readable TIFF"));
    }
    SECTION("truncated: the directory is gone")
    {
        write_page16(folder / "cut.tif", 64, 64);
        truncate_file(folder / "cut.tif", 0.5);
        CHECK_THAT(message_of(folder / "cut.tif"), Catch::StartsWith(folder / "cut.tif"));
    }
    SECTION("truncated stack: a page's directory is gone")
    {
        const std::string path = folder / "cut-stack.tif";
        {
            TiffWriter writer(path);
            const auto a = ramp16(32, 32, 1);
            for (int p = 0; p < 3; ++p) writer.write_uint16(a.data(), 32, 32);
            writer.close();
        }
        truncate_file(path, 0.9);
        CHECK_THAT(message_of(path), Catch::StartsWith(path) && Catch::Contains("corrupt or truncated"));
    }
    SECTION("kinds the tool does not read")
    {
        write_raw_page(folder / "rgb.tif", 8, 8, 8, 3, SAMPLEFORMAT_UINT, false);
        CHECK_THAT(message_of(folder / "rgb.tif"), Catch::Contains("3 samples per pixel"));
        write_raw_page(folder / "float.tif", 8, 8, 32, 1, SAMPLEFORMAT_IEEEFP, false);
        CHECK_THAT(message_of(folder / "float.tif"), Catch::Contains("floating-point"));
        write_raw_page(folder / "signed.tif", 8, 8, 16, 1, SAMPLEFORMAT_INT, false);
        CHECK_THAT(message_of(folder / "signed.tif"), Catch::Contains("signed"));
    }
    SECTION("corrupt compressed data fails when the page is decoded")
    {
        const std::string path = folder / "corrupt.tif";
        {
            TiffWriter writer(path);
            const auto a = ramp16(64, 64, 5);
            writer.write_uint16(a.data(), 64, 64, TiffCompression::deflate);
            writer.close();
        }
        const auto pages = inspect_tiff(path);   // the directory is intact
        REQUIRE(pages.size() == 1);
        // Overwrite the first strip's zlib header: inflate refuses it.
        uint64_t* offsets = nullptr;
        TIFF* tif = TIFFOpen(path.c_str(), "r");
        REQUIRE(tif);
        REQUIRE(TIFFGetField(tif, TIFFTAG_STRIPOFFSETS, &offsets));
        const uint64_t offset = offsets[0];
        TIFFClose(tif);
        std::string bytes = read_text(path);
        for (size_t i = 0; i < 16; ++i) bytes[offset + i] = char(0xff);
        write_text(path, bytes);
        std::vector<uint16_t> got(64 * 64);
        TiffReader reader(path);
        try {
            reader.read_page(pages[0], got.data());
            FAIL("a corrupt strip was decoded");
        } catch (const TiffError& e) {
            CHECK_THAT(e.what(), Catch::StartsWith(path) && Catch::Contains("cannot decode strip 0"));
        }
    }
    SECTION("unwritable output")
    {
        try {
            TiffWriter writer(folder / "no-such-folder/x.tif");
            FAIL("opened a file in a missing folder");
        } catch (const TiffError& e) {
            CHECK_THAT(e.what(), Catch::StartsWith(folder / "no-such-folder/x.tif") && Catch::Contains("cannot open for writing"));
        }
    }
}

TEST_CASE("FRAME arguments expand to files and pages", "[frames]")
{
    TemporaryFolder folder;
    std::filesystem::create_directory(folder / "sub");
    write_page16(folder / "sub/a.tif", 16, 16);
    write_page16(folder / "b.tif", 16, 16);
    {
        TiffWriter writer(folder / "stack.tif");
        const auto a = ramp16(16, 16, 1);
        for (int p = 0; p < 3; ++p) writer.write_uint16(a.data(), 16, 16);
        writer.close();
    }
    write_text(folder / "sub/list.txt", "# frames\n\na.tif\r\n  " + (folder / "b.tif") + "  \n");
    const auto paths = expand_frame_arguments({"@" + (folder / "sub/list.txt"), folder / "stack.tif"});
    REQUIRE(paths.size() == 3);
    CHECK(paths[0] == folder / "sub/a.tif");   // relative to the list's folder
    CHECK(paths[1] == folder / "b.tif");
    CHECK(paths[2] == folder / "stack.tif");

    const auto frames = inspect_frames(paths, false);
    REQUIRE(frames.size() == 5);
    CHECK(frames[0].name() == folder / "sub/a.tif");
    CHECK(frames[4].name() == folder / "stack.tif (page 3)");
    CHECK(frames[4].page.index == 2);

    SECTION("an empty or missing list is an error naming it")
    {
        write_text(folder / "empty.txt", "# nothing\n");
        CHECK_THROWS_WITH(expand_frame_arguments({"@" + (folder / "empty.txt")}), Catch::StartsWith(folder / "empty.txt"));
        CHECK_THROWS_WITH(expand_frame_arguments({"@" + (folder / "none.txt")}), Catch::StartsWith(folder / "none.txt"));
    }
    SECTION("a missing file stops the inspection, or is recorded with keep_going")
    {
        const std::vector<std::string> with_missing{folder / "b.tif", folder / "gone.tif", folder / "b.tif"};
        CHECK_THROWS_WITH(inspect_frames(with_missing, false), Catch::StartsWith(folder / "gone.tif"));
        const auto kept = inspect_frames(with_missing, true);
        REQUIRE(kept.size() == 3);
        CHECK(kept[0].usable());
        CHECK_FALSE(kept[1].usable());
        CHECK_THAT(kept[1].error, Catch::StartsWith(folder / "gone.tif"));
        CHECK(kept[2].usable());
    }
    SECTION("frames of another size or bit depth")
    {
        write_page16(folder / "wide.tif", 16, 17);
        {
            TiffWriter writer(folder / "eight.tif");
            std::vector<uint8_t> p(16 * 16);
            writer.write_uint8(p.data(), 16, 16);
            writer.close();
        }
        PageInfo expected = frames[0].page;
        auto wide = inspect_frames({folder / "b.tif", folder / "wide.tif"}, false);
        CHECK_THROWS_WITH(check_geometry(wide, expected, "ref.tif", false),
                          Catch::StartsWith(folder / "wide.tif") && Catch::Contains("16x17 16-bit") &&
                              Catch::Contains("ref.tif is 16x16 16-bit"));
        auto eight = inspect_frames({folder / "eight.tif"}, false);
        CHECK_THROWS_WITH(check_geometry(eight, expected, "ref.tif", false), Catch::Contains("16x16 8-bit"));
        check_geometry(eight, expected, "ref.tif", true);
        CHECK_FALSE(eight[0].usable());
    }
}

TEST_CASE("Subregion grids and origin files", "[rois]")
{
    SECTION("a grid is centred in the area inside the margin")
    {
        const auto grid = grid_subregions(256, 256, 80, 80, 8);
        REQUIRE(grid.size() == 9);
        CHECK(grid[0].y == 8);
        CHECK(grid[0].x == 8);
        CHECK(grid[1].x == 88);
        CHECK(grid[3].y == 88);   // row-major
        CHECK(grid[8].y == 168);
        // 900 x 900, 128, step 128, margin 2: 7 x 7 fill the 896 pixels inside the margin.
        const auto big = grid_subregions(900, 900, 128, 128, 2);
        REQUIRE(big.size() == 49);
        CHECK(big[0].y == 2);
        CHECK(big[48].y + 128 == 900 - 2);
        // Margin 0: 4 spare pixels split 2 / 2.
        CHECK(grid_subregions(900, 900, 128, 128, 0)[0].x == 2);
        // Overlapping steps, non-square frames.
        const auto overlapping = grid_subregions(100, 60, 32, 16, 0);
        CHECK(overlapping.size() == size_t(5 * 2));
        CHECK(grid_subregions(50, 50, 64, 64, 0).empty());
        CHECK(grid_subregions(100, 100, 64, 64, 20).empty());
    }
    TemporaryFolder folder;
    SECTION("origin files: comments, commas, order kept")
    {
        write_text(folder / "rois.txt", "# y x\n10 20\n\n30,40\r\n  5\t6\n");
        const auto rois = read_subregion_file(folder / "rois.txt");
        REQUIRE(rois.size() == 3);
        CHECK(rois[1].y == 30);
        CHECK(rois[1].x == 40);
        CHECK(rois[2].x == 6);
        check_subregions_inside(rois, 16, 64, 64, "rois.txt");
    }
    SECTION("bad origin files name the file and line")
    {
        write_text(folder / "bad.txt", "10 20\n10 twenty\n");
        CHECK_THROWS_WITH(read_subregion_file(folder / "bad.txt"),
                          Catch::StartsWith(folder / "bad.txt") && Catch::Contains("line 2"));
        write_text(folder / "three.txt", "1 2 3\n");
        CHECK_THROWS_WITH(read_subregion_file(folder / "three.txt"), Catch::Contains("line 1"));
        write_text(folder / "empty.txt", "# none\n");
        CHECK_THROWS_WITH(read_subregion_file(folder / "empty.txt"), Catch::Contains("no subregion"));
    }
    SECTION("a subregion outside the frame")
    {
        const std::vector<Subregion> rois{{0, 0}, {50, 10}};
        CHECK_THROWS_WITH(check_subregions_inside(rois, 16, 64, 64, "rois.txt"),
                          Catch::StartsWith("rois.txt") && Catch::Contains("subregion 1 at (50, 10)") &&
                              Catch::Contains("leaves the 64x64 frame"));
        CHECK_THROWS(check_subregions_inside({{-1, 0}}, 16, 64, 64, "r"));
        CHECK_NOTHROW(check_subregions_inside({{48, 48}}, 16, 64, 64, "r"));
    }
}

TEST_CASE("Output rows in CSV and JSON lines", "[output]")
{
    const std::string file = "dir/a \"b\".tif";
    ResultRow row;
    row.frame = 12;
    row.roi = 3;
    row.y = 47.5;
    row.x = 127.5;
    row.dy = -0.123456;
    row.dx = 2.5;
    row.peak = 0.987654321;
    row.quality = std::numeric_limits<double>::infinity();
    row.psr = 11.25;
    row.file = &file;
    row.page = 2;
    SECTION("CSV: the exact header, fixed decimals, nan and inf")
    {
        const ResultFormatter csv(OutputFormat::csv);
        CHECK(csv.header() == "frame,roi,y,x,dy,dx,peak,quality\n");
        std::string text;
        csv.append_row(text, row);
        CHECK(text == "12,3,47.5,127.5,-0.1235,2.5000,0.987654,inf\n");
        row.dy = row.dx = std::numeric_limits<double>::quiet_NaN();
        text.clear();
        csv.append_row(text, row);
        CHECK(text == "12,3,47.5,127.5,nan,nan,0.987654,inf\n");
    }
    SECTION("JSON lines: null for non-finite values, file and page, skipped frames")
    {
        const ResultFormatter jsonl(OutputFormat::jsonl);
        CHECK(jsonl.header().empty());
        std::string text;
        jsonl.append_row(text, row);
        CHECK(text == "{\"frame\":12,\"roi\":3,\"y\":47.5,\"x\":127.5,\"dy\":-0.1235,\"dx\":2.5000,\"peak\":0.987654,"
                      "\"quality\":null,\"psr\":11.2500,\"file\":\"dir/a \\\"b\\\".tif\",\"page\":2}\n");
        const std::string reason = "x.tif: cannot decode\tstrip";
        row.skipped_reason = &reason;
        text.clear();
        jsonl.append_row(text, row);
        CHECK_THAT(text, Catch::EndsWith(",\"skipped\":true,\"reason\":\"x.tif: cannot decode\\tstrip\"}\n"));
    }
    SECTION("the output file: an unwritable one is refused by name")
    {
        CHECK_THROWS_WITH(OutputSink("/nonexistent-folder/out.csv"),
                          Catch::StartsWith("/nonexistent-folder/out.csv: cannot open for writing"));
        TemporaryFolder folder;
        {
            OutputSink sink(folder / "out.csv");
            sink.write("a\n");
            sink.write("b\n");
        }
        CHECK(read_text(folder / "out.csv") == "a\nb\n");
    }
}

TEST_CASE("Jobs of each mode", "[pipeline]")
{
    const auto ebsd = make_jobs(Mode::reference, 3);
    REQUIRE(ebsd.size() == 3);
    CHECK(ebsd[2].output_frame == 2);
    CHECK(ebsd[2].moving == 2);
    CHECK(ebsd[2].reference == -1);
    const auto pairs = make_jobs(Mode::pairs, 6);
    REQUIRE(pairs.size() == 3);
    CHECK(pairs[1].moving == 3);
    CHECK(pairs[1].reference == 2);
    CHECK(pairs[1].output_frame == 3);
    const auto sequence = make_jobs(Mode::sequence, 4);
    REQUIRE(sequence.size() == 3);
    CHECK(sequence[0].moving == 1);
    CHECK(sequence[0].reference == 0);
    CHECK(sequence[2].reference == 2);
}

TEST_CASE("Progress text", "[progress]")
{
    CHECK(Progress::clock_text(3725) == "1:02:05");
    CHECK(Progress::clock_text(NAN) == "?");
    StageTimes t;
    t.readers = 2;
    t.read_seconds = 16;   // 8 s per reader of 10 s: 80%
    t.correlate_seconds = 5;
    t.write_seconds = 0.5;
    CHECK(Progress::busy_text(t, 10) == "read 80%, correlate 50%, write 5%");
    CHECK(Progress::limiting_stage(t, 10) == "reading");
    t.correlate_seconds = 9.5;
    CHECK(Progress::limiting_stage(t, 10) == "correlation");
}

TEST_CASE("Synthetic sets: files, truth and the comparison", "[synthetic]")
{
    TemporaryFolder folder;
    SyntheticSpec spec;
    spec.folder = folder / "ebsd";
    spec.frames = 4;
    spec.height = spec.width = 96;
    spec.roi_size = spec.roi_step = 32;
    spec.roi_margin = 8;
    spec.max_displacement = 2;
    spec.feature_size = 3;
    write_synthetic_set(spec);
    const auto reference = inspect_tiff(spec.folder + "/reference.tif");
    REQUIRE(reference.size() == 1);
    CHECK(reference[0].height == 96);
    CHECK(reference[0].bits == 16);
    CHECK(inspect_frames(expand_frame_arguments({"@" + spec.folder + "/frames.txt"}), false).size() == 4);
    const auto truth = read_truth_csv(spec.folder + "/truth.csv");
    REQUIRE(truth.size() == 4 * 4);   // 4 frames x 2 x 2 subregions
    CHECK(truth[5].frame == 1);
    CHECK(truth[5].roi == 1);
    CHECK(truth[5].y == Approx(16 + 15.5));   // the grid centred: 16 spare pixels split 8 / 8
    CHECK(truth[5].x == Approx(48 + 15.5));
    double largest = 0;
    for (const auto& t : truth) largest = std::max({largest, std::abs(t.dy), std::abs(t.dx)});
    CHECK(largest <= 2.0);
    CHECK(largest > 0.2);
    const auto sequence = read_truth_csv(spec.folder + "/truth_sequence.csv");
    REQUIRE(sequence.size() == 3 * 4);
    CHECK(sequence[0].frame == 1);
    CHECK(sequence[0].dy == Approx(truth[4].dy - truth[0].dy).margin(2e-6));

    SECTION("the pattern is moved by the truth: the frame's subregion matches the reference shifted back")
    {
        // Noise-free, an integer displacement checks the sign convention exactly.
        SyntheticSpec exact = spec;
        exact.folder = folder / "exact";
        exact.photons = 0;
        exact.frames = 1;
        exact.max_displacement = 0;   // frame 0 equals the reference
        write_synthetic_set(exact);
        std::vector<uint16_t> ref(96 * 96), frame(96 * 96);
        TiffReader(exact.folder + "/reference.tif").read_page(inspect_tiff(exact.folder + "/reference.tif")[0], ref.data());
        const std::string f0 = exact.folder + "/frames/frame_00000.tif";
        TiffReader(f0).read_page(inspect_tiff(f0)[0], frame.data());
        CHECK(ref == frame);
    }
    SECTION("PIV-like pairs, stacked")
    {
        SyntheticSpec piv = spec;
        piv.kind = SyntheticKind::piv;
        piv.folder = folder / "piv";
        piv.stack = true;
        piv.bits = 8;
        write_synthetic_set(piv);
        const auto pages = inspect_tiff(piv.folder + "/frames.tif");
        REQUIRE(pages.size() == 4);
        CHECK(pages[0].bits == 8);
        const auto piv_truth = read_truth_csv(piv.folder + "/truth.csv");
        REQUIRE(piv_truth.size() == 2 * 4);
        CHECK(piv_truth[0].frame == 1);
        CHECK(piv_truth[4].frame == 3);
        piv.frames = 3;
        CHECK_THROWS(write_synthetic_set(piv));
    }
    SECTION("comparison: RMS, bias, missing and unmeasured rows")
    {
        std::vector<ResultRecord> result;
        for (const auto& t : truth) {
            ResultRecord r = t;
            r.dy += 0.03;
            r.dx -= 0.04;
            result.push_back(r);
        }
        result[0].dy = std::numeric_limits<double>::quiet_NaN();
        result[1].x += 1;
        result.pop_back();
        const OffsetComparison c = compare_offsets(truth, result);
        CHECK(c.compared == 13);
        CHECK(c.misplaced == 1);
        CHECK(c.not_measured == 1);
        CHECK(c.missing == 1);
        CHECK(c.rms == Approx(0.05));
        CHECK(c.mean_dy == Approx(0.03));
        CHECK(c.mean_dx == Approx(-0.04));
        CHECK(c.max_error == Approx(0.05));
    }
}
