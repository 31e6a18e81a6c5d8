// The 3D GPU Fourier solvers (device.fourier3.tN, planes, rows, slabs) beyond the every-solver
// sweeps of test_device_all_solvers.cpp: misaligned device images, chunks of planes and the
// window-sum ring, every template extent through each finalisation, the slab tile transforms
// on the CPU, and a small frame for compute-sanitizer. Without a usable GPU every GPU test case
// says so and is skipped.
#include "device/kernels/fft32.h"
#include "device/kernels/fft64.cuh"
#include "device/kernels/slab_layout.h"
#include "device_test_support.h"
#include "helpers.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

using dt::check_lcc;
using dt::device_opts;
using dt::DeviceArray;
using dt::forced_plan;
using dt::skip_without_gpu;

TEST_CASE("8-point transforms against a direct DFT in double", "[numerics]")
{
    // The register transform of device.batch.blockfft's 64-point transforms (kernels/fft64.cuh),
    // both signs; host and device code, so this runs everywhere.
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    for (int trial = 0; trial < 20; ++trial) {
        float2 x[8], f[8], b[8];
        for (int i = 0; i < 8; ++i) x[i] = f[i] = b[i] = {u(rng), u(rng)};
        flcc::device::fft64::fft8<-1>(f);
        flcc::device::fft64::fft8<1>(b);
        for (int k = 0; k < 8; ++k)
            for (int sign : {-1, 1}) {
                double re = 0, im = 0;
                for (int n = 0; n < 8; ++n) {
                    const double a = sign * 2 * M_PI * n * k / 8;
                    re += x[n].x * std::cos(a) - x[n].y * std::sin(a);
                    im += x[n].x * std::sin(a) + x[n].y * std::cos(a);
                }
                const float2 got = sign < 0 ? f[k] : b[k];
                CHECK(std::fabs(got.x - re) <= 1e-5);
                CHECK(std::fabs(got.y - im) <= 1e-5);
            }
    }
}

TEST_CASE("3D Fourier solvers: device images 0 to 3 floats off 16-byte alignment", "[device][numerics]")
{
    // The image statistics (planes, rows, slabs) read the 16-byte-aligned middle of the image by
    // float4 and the ends value by value; slabs copies 16-byte pieces only from aligned rows.
    // Frames from host memory arrive in the library's aligned buffers, so these come from device
    // pointers 0..3 floats into an allocation; 37 x 29 x 45 values (not a multiple of 4, rows
    // of 45) leave ends of every length.
    if (skip_without_gpu()) return;
    using ref::Data;
    const ref::Shape s{3, {37, 29, 45}, {5, 6, 8}, FLCC_FULL};
    for (Data d : {Data::offset, Data::panels}) {
        std::mt19937 rng(17);
        const auto img = ref::make_data(d, s, true, rng);
        const auto t = ref::make_data(d, s, false, rng);
        const auto want = ref::lcorr(s, img.data(), t.data());
        const auto flat = ref::zero_variance(s, img.data());
        for (const std::string& name : th::solvers("device.fourier3")) {
            flcc_plan p = nullptr;
            const flcc_result made = forced_plan(&p, name, FLCC_LCORR, s);
            if (made == FLCC_METHOD_NOT_APPLICABLE) continue;
            REQUIRE(made == FLCC_SUCCESS);
            for (int off = 0; off < 4; ++off) {
                INFO(name << " data " << ref::data_name(d) << ", " << off << " floats off");
                std::vector<float> shifted(img.size() + off);
                std::copy(img.begin(), img.end(), shifted.begin() + off);
                DeviceArray<float> d_in(shifted), d_out(want.size());
                REQUIRE(flcc_lcorr_exec(p, d_in.p + off, t.data(), d_out.p, 1) == FLCC_SUCCESS);
                check_lcc(s, want, flat, d_out.get().data());
            }
            flcc_destroy(p);
        }
    }
}

TEST_CASE("3D Fourier LCC: several plane chunks per tile, and templates too deep for the ring",
          "[device][numerics]")
{
    // window_sums_finalise marches along the planes in chunks (32 planes, or 4 T0 if more;
    // down to 2 T0 for groups of few blocks, as these small volumes are) and
    // keeps the T0 planes of the window in a shared ring unless it does not fit
    // (T0 = 24 here), when it recomputes the leaving plane. Each shape names the box that
    // reaches the path (t64: interior tiles of 33 planes, two chunks or more, ring; t128 and
    // T0 = 24: interior tiles of 100 planes, chunks of 48 or 96, no ring); the other boxes run
    // where they apply.
    if (skip_without_gpu()) return;
    using ref::Data;
    struct Case {
        ref::Shape shape;
        const char* must_run;
    };
    const Case cases[] = {{{3, {70, 32, 40}, {5, 4, 3}, FLCC_FULL}, "device.fourier3.t64"},
                          {{3, {70, 32, 40}, {5, 4, 3}, FLCC_VALID}, "device.fourier3.t64"},
                          {{3, {123, 64, 64}, {24, 2, 3}, FLCC_FULL}, "device.fourier3.t128"},
                          {{3, {123, 64, 64}, {24, 2, 3}, FLCC_VALID}, "device.fourier3.t128"},
                          {{3, {123, 64, 64}, {24, 2, 3}, FLCC_SAME}, "device.fourier3.t128"}};
    for (const Case& c : cases) {
        const ref::Shape& s = c.shape;
        for (Data d : {Data::uniform, Data::uint16, Data::panels}) {
            std::mt19937 rng(11);
            const auto img = ref::make_data(d, s, true, rng);
            const auto t = ref::make_data(d, s, false, rng);
            const auto want = ref::lcorr(s, img.data(), t.data());
            const auto flat = ref::zero_variance(s, img.data());
            for (const std::string& name : th::solvers("device.fourier3")) {
                const th::Run r = th::run(FLCC_LCORR, s, img, t, device_opts(name));
                INFO(name << " " << th::describe(s) << " data " << ref::data_name(d));
                if (r.result == FLCC_METHOD_NOT_APPLICABLE && name != c.must_run) continue;
                REQUIRE(r.result == FLCC_SUCCESS);
                check_lcc(s, want, flat, r.out.data());
            }
        }
    }
}

TEST_CASE("3D Fourier LCC: every template extent compiled into the window sums", "[device][numerics]")
{
    // window_sums_finalise has instances with T1 = T2 = 2..8 compiled in (march_kernel) and a
    // run-time one; the other cases reach the latter and few of the former. Here each extent
    // runs, with T0 equal to and different from T1, on images that span several x and y blocks
    // of the kernel (32 x 8 outputs) and are large enough for the smallest box (t64: a box
    // more than twice the problem is not applicable), every region and the numeric data classes.
    if (skip_without_gpu()) return;
    using ref::Data;
    for (int k = 2; k <= 8; ++k)
        for (int t0 : {k, k + 3})
            for (flcc_region reg : {FLCC_FULL, FLCC_SAME, FLCC_VALID}) {
                const ref::Shape s{3, {k + 30, k + 35, k + 45}, {t0, k, k}, reg};
                for (Data d : {Data::uniform, Data::offset, Data::panels}) {
                    std::mt19937 rng(unsigned(k * 31 + t0));
                    const auto img = ref::make_data(d, s, true, rng);
                    const auto t = ref::make_data(d, s, false, rng);
                    const auto want = ref::lcorr(s, img.data(), t.data());
                    const auto flat = ref::zero_variance(s, img.data());
                    int ran = 0;
                    for (const std::string& name : th::solvers("device.fourier3")) {
                        const th::Run r = th::run(FLCC_LCORR, s, img, t, device_opts(name));
                        INFO(name << " " << th::describe(s) << " data " << ref::data_name(d));
                        if (r.result == FLCC_METHOD_NOT_APPLICABLE) continue;
                        REQUIRE(r.result == FLCC_SUCCESS);
                        ++ran;
                        check_lcc(s, want, flat, r.out.data());
                    }
                    INFO(th::describe(s));
                    CHECK(ran > 0);
                }
            }
}

TEST_CASE("3D planes LCC: every template row and column extent through its finalisation",
          "[device][numerics]")
{
    // finalise_planes (device.fourier3.planes) has one instance for templates up to 8 x 8 across
    // (6 patch elements per thread) and one up to 16 x 16 (9, more than 48 KB of shared memory
    // from 16 x 1 on), with loops unrolled to 8 or 16 and cut at T1 and T2; the cases above
    // reach T2 <= 8 only. Here T1 and T2 run to 16, with images spanning several blocks (32 x 32
    // outputs), chunks of planes, and both block modes (centred interior blocks, uncentred ones
    // at the padding).
    if (skip_without_gpu()) return;
    using ref::Data;
    for (int k = 1; k <= 16; ++k)
        for (flcc_region reg : {FLCC_FULL, FLCC_VALID}) {
            const ref::Shape s{3, {12, k + 40, k + 70}, {3, 17 - k, k}, reg};
            for (Data d : {Data::uniform, Data::offset, Data::panels}) {
                std::mt19937 rng(unsigned(k * 7 + int(reg)));
                const auto img = ref::make_data(d, s, true, rng);
                const auto t = ref::make_data(d, s, false, rng);
                const auto want = ref::lcorr(s, img.data(), t.data());
                const auto flat = ref::zero_variance(s, img.data());
                const th::Run r = th::run(FLCC_LCORR, s, img, t, device_opts("device.fourier3.planes"));
                INFO(th::describe(s) << " data " << ref::data_name(d));
                REQUIRE(r.result == FLCC_SUCCESS);
                check_lcc(s, want, flat, r.out.data());
            }
        }
}

TEST_CASE("3D rows and slabs LCC and convolution: every template extent to 8, blocks in both modes",
          "[device][numerics]")
{
    // device.fourier3.rows: blocks of 8 x 16 x 25 outputs, each with its own box, row transforms
    // and window sums; device.fourier3.slabs: tiles of 25 x 25 outputs marching along chunks of
    // planes with their window sums (centred for the planes whose windows lie inside, plain at
    // the padding, summed afresh where that changes). Images here span several blocks along
    // every axis, with windows inside the image (centred) and at the padding (uncentred), every
    // extent 1..8 on every axis (slabs' column sums: runs for 8, gathered columns below), and
    // the three regions; the rows of 50 and 80 values are 16-byte aligned, those of 77 (slabs'
    // 4-byte copies) not.
    if (skip_without_gpu()) return;
    using ref::Data;
    for (const char* name : {"device.fourier3.rows", "device.fourier3.slabs"})
    for (int k = 1; k <= 8; ++k)
        for (flcc_region reg : {FLCC_FULL, FLCC_SAME, FLCC_VALID}) {
            const ref::Shape s{3, {40, 50, k % 2 ? 80 : 77}, {k, 9 - k, (k + 2) % 8 + 1}, reg};
            for (Data d : {Data::uniform, Data::offset, Data::panels}) {
                std::mt19937 rng(unsigned(k * 11 + int(reg)));
                const auto img = ref::make_data(d, s, true, rng);
                const auto t = ref::make_data(d, s, false, rng);
                const auto want = ref::lcorr(s, img.data(), t.data());
                const auto flat = ref::zero_variance(s, img.data());
                const th::Run r = th::run(FLCC_LCORR, s, img, t, device_opts(name));
                INFO(name << " " << th::describe(s) << " data " << ref::data_name(d));
                REQUIRE(r.result == FLCC_SUCCESS);
                check_lcc(s, want, flat, r.out.data());
            }
            std::mt19937 rng{unsigned(k)};
            const auto img = ref::make_data(Data::uniform, s, true, rng);
            const auto t = ref::make_data(Data::uniform, s, false, rng);
            const th::Run r = th::run(FLCC_CONV, s, img, t, device_opts(name));
            INFO(name << " conv " << th::describe(s));
            REQUIRE(r.result == FLCC_SUCCESS);
            CHECK(th::error(FLCC_CONV, th::reference(FLCC_CONV, s, img.data(), t.data()), r.out.data()) <= 1e-5);
        }
}

TEST_CASE("slab tile transforms: 2D overlap-save correlation of a 32 x 32 tile, on the CPU", "[numerics]")
{
    // device.fourier3.slabs' per-tile arithmetic without the kernel's threads: row transforms,
    // column halves (the packed column split and joined again), the template spectrum's
    // products, the inverse halves and rows, against a direct correlation in double. Runs
    // everywhere (no GPU): the transforms are host and device code.
    using namespace flcc::device;
    using namespace flcc::device::fft32;
    std::mt19937 rng(3);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    for (const auto& T : {std::pair<int, int>{1, 1}, {3, 5}, {8, 8}, {8, 1}, {2, 7}}) {
        const int T1 = T.first, T2 = T.second;
        std::vector<float> x(32 * 32), taps(size_t(T1) * T2), spec(size_t(kSlabMaxT) * kSlabSlots * 4);
        for (float& v : x) v = u(rng);
        for (float& v : taps) v = u(rng);
        slab_template_spectra(taps.data(), 1, T1, T2, spec.data());
        float2 rows[32][16], slots[kSlabCols][32], halves[kSlabCols][32];
        for (int y = 0; y < 32; ++y) {
            float2 v[16];
            for (int m = 0; m < 16; ++m) v[m] = {x[y * 32 + 2 * m], x[y * 32 + 2 * m + 1]};
            forward_row(v);
            for (int c = 0; c < 16; ++c) rows[y][c] = v[c];
        }
        for (int c = 0; c < kSlabCols; ++c)
            for (int h = 0; h < 2; ++h) {
                float2 o[16];
                column_forward_half([&](int y) { return rows[y][c]; }, h, o);
                if (c == 0) pack_column<true>(o, h);
                for (int m = 0; m < 16; ++m) slots[c][2 * m + h] = o[m];
            }
        for (int c = 0; c < kSlabCols; ++c)
            for (int k = 0; k < 32; ++k) {
                const float* t = spec.data() + size_t(c * 32 + k) * 4;
                const float2 F = slots[c][k];
                slots[c][k] = {F.x * t[0] + F.y * t[1], F.y * t[2] + F.x * t[3]};
            }
        for (int c = 0; c < kSlabCols; ++c)
            for (int h = 0; h < 2; ++h) {
                float2 w[16];
                for (int m = 0; m < 16; ++m) w[m] = slots[c][2 * m + h];
                if (c == 0) pack_column<false>(w, h);
                column_inverse_half(w, h);
                for (int y = 0; y < 16; ++y) halves[c][16 * h + y] = w[y];
            }
        double worst = 0;
        for (int y = 0; y < kSlabOut; ++y) {
            float2 v[16];
            for (int c = 0; c < kSlabCols; ++c) {
                const float2 e = halves[c][y & 15], o = halves[c][16 + (y & 15)];
                v[c] = y < 16 ? add(e, o) : sub(e, o);
            }
            inverse_row(v);
            for (int xo = 0; xo < kSlabOut; ++xo) {
                double want = 0;
                for (int dy = 0; dy < T1; ++dy)
                    for (int dx = 0; dx < T2; ++dx) want += double(x[(y + dy) * 32 + xo + dx]) * taps[dy * T2 + dx];
                const float got = xo & 1 ? v[xo / 2].y : v[xo / 2].x;
                worst = std::max(worst, std::fabs(double(got) - want));
            }
        }
        INFO("template " << T1 << " x " << T2);
        CHECK(worst <= 1e-5 * std::sqrt(double(T1 * T2)));
    }
}

TEST_CASE("3D Fourier solvers forced by name on a small frame of several blocks", "[device][sanitize]")
{
    // Small enough for compute-sanitizer (scripts/gpu-check.sh runs the [sanitize] cases under
    // memcheck, racecheck, initcheck and synccheck): the fused rows kernel (blocks of 8 x 16 x 25
    // outputs, here 2 x 2 x 2 of them with both block modes), the slabs kernels (2 x 2 tiles,
    // window-sum blocks in both modes) and the planes kernels.
    if (skip_without_gpu()) return;
    std::mt19937 rng(5);
    const ref::Shape s{3, {12, 24, 40}, {4, 3, 5}, FLCC_FULL};
    for (const char* name : {"device.fourier3.rows", "device.fourier3.slabs", "device.fourier3.planes"})
        for (flcc_op op : {FLCC_CONV, FLCC_LCORR}) {
            const auto img = ref::make_data(ref::Data::uniform, s, true, rng);
            const auto t = ref::make_data(ref::Data::uniform, s, false, rng);
            const th::Run r = th::run(op, s, img, t, device_opts(name));
            INFO(name << (op == FLCC_CONV ? " conv" : " lcorr"));
            REQUIRE(r.result == FLCC_SUCCESS);
            CHECK(th::error(op, th::reference(op, s, img.data(), t.data()), r.out.data()) <= 1e-5);
        }
}
