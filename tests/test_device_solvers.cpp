// The GPU solvers: every one forced by name against the float64 reference (shapes, regions,
// both operations, the data classes of DESIGN.md), GPU against CPU, exact zeros, streams,
// device pointers, a caller's stream, and recovery from running out of device memory.
// Without a usable GPU every test case says so and is skipped.
#include "adversarial.h"
#include "device/kernels/fft32.h"
#include "device/kernels/slab_layout.h"
#include "helpers.h"

#include <catch2/catch.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>

namespace {

bool skip_without_gpu()
{
    if (th::have_device()) return false;
    WARN("skipped: no usable GPU on this machine");
    return true;
}

// False in a GPU-only build (FLCC_WITH_HOST=OFF).
bool have_host_solvers()
{
    for (int i = 0; i < flcc_solver_count(); ++i)
        if (std::string(flcc_solver_name(i)).rfind("host.", 0) == 0) return true;
    return false;
}

th::RunOptions device_opts(const std::string& name)
{
    th::RunOptions o;
    o.method = name.c_str();
    o.platform = FLCC_DEVICE;
    return o;
}

// An LCC output against the float64 reference: within 1e-5, and exactly 0 on every
// zero-variance panel (`flat`).
void check_lcc(const ref::Shape& s, const std::vector<double>& want, const std::vector<bool>& flat,
               const float* out)
{
    INFO("worst " << th::worst(s, want, out));
    CHECK(ref::max_abs_diff(want, out) <= 1e-5);
    size_t misses = 0;
    for (size_t i = 0; i < want.size(); ++i)
        if (flat[i] && out[i] != 0.0f) ++misses;
    CHECK(misses == 0);
}

template <class T>
struct DeviceArray {
    T* p = nullptr;
    size_t n = 0;
    explicit DeviceArray(size_t count) : n(count) { REQUIRE(cudaMalloc(&p, n * sizeof(T)) == cudaSuccess); }
    DeviceArray(const std::vector<T>& v) : DeviceArray(v.size())
    {
        REQUIRE(cudaMemcpy(p, v.data(), n * sizeof(T), cudaMemcpyHostToDevice) == cudaSuccess);
    }
    ~DeviceArray() { cudaFree(p); }
    std::vector<T> get() const
    {
        std::vector<T> v(n);
        REQUIRE(cudaMemcpy(v.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost) == cudaSuccess);
        return v;
    }
};

// A plan forced to GPU solver `name` for shape s; `resident`: device_resident (device pointers
// only).
flcc_result forced_plan(flcc_plan* p, const std::string& name, flcc_op op, const ref::Shape& s, bool resident = false)
{
    flcc_options o;
    flcc_options_init(&o);
    o.platform = FLCC_DEVICE;
    o.method = name.c_str();
    o.region = s.region;
    o.device_resident = resident ? 1 : 0;
    return flcc_plan_create(p, op, s.dim, s.image, s.templ, &o);
}

}  // namespace

TEST_CASE("without a GPU, DEVICE plans fail cleanly and ANY plans on the host", "[device]")
{
    if (th::have_device()) return;
    flcc_options o;
    flcc_options_init(&o);
    o.platform = FLCC_DEVICE;
    flcc_plan p = nullptr;
    CHECK(flcc_plan_create(&p, FLCC_LCORR, 2, {64, 64, 1}, {5, 5, 1}, &o) == FLCC_NO_DEVICE);
    o.platform = FLCC_ANY;
    REQUIRE(flcc_plan_create(&p, FLCC_LCORR, 2, {64, 64, 1}, {5, 5, 1}, &o) == FLCC_SUCCESS);
    CHECK(std::string(flcc_plan_method(p)).rfind("host.", 0) == 0);
    CHECK(flcc_plan_set_stream(p, nullptr) == FLCC_INVALID_PLATFORM);
    CHECK(flcc_plan_synchronize(p) == FLCC_SUCCESS);
    flcc_destroy(p);
    o.platform = FLCC_HOST;
    o.method = "device.direct2.k5";
    if (flcc_solver_count() > 0) {
        const flcc_result r = flcc_plan_create(&p, FLCC_LCORR, 2, {64, 64, 1}, {5, 5, 1}, &o);
        CHECK((r == FLCC_NO_DEVICE || r == FLCC_UNKNOWN_METHOD || r == FLCC_INVALID_PLATFORM));
    }
}

TEST_CASE("every GPU solver matches the float64 reference on varied shapes", "[device][solvers]")
{
    if (skip_without_gpu()) return;
    const auto names = th::solvers("device.");
    REQUIRE(!names.empty());
    for (const std::string& name : names) {
        std::mt19937 rng(std::hash<std::string>{}(name));
        for (const ref::Shape& s : th::shapes_for(name))
            for (flcc_op op : {FLCC_CONV, FLCC_LCORR}) {
                const auto img = ref::make_data(ref::Data::uniform, s, true, rng);
                const auto t = ref::make_data(ref::Data::uniform, s, false, rng);
                const th::Run r = th::run(op, s, img, t, device_opts(name));
                INFO(name << " " << (op == FLCC_CONV ? "conv " : "lcorr ") << th::describe(s));
                if (r.result == FLCC_METHOD_NOT_APPLICABLE) continue;   // e.g. too large for shared memory
                REQUIRE(r.result == FLCC_SUCCESS);
                const auto want = th::reference(op, s, img.data(), t.data());
                INFO("worst " << th::worst(s, want, r.out.data()));
                CHECK(th::error(op, want, r.out.data()) <= 1e-5);
            }
    }
}

TEST_CASE("every GPU solver passes the LCC data classes, zero-variance panels exactly 0", "[device][numerics]")
{
    if (skip_without_gpu()) return;
    using ref::Data;
    for (const std::string& name : th::solvers("device.")) {
        std::mt19937 rng(7);
        const int dim = th::solver_dim(name), n = th::solver_cube(name);
        const int k = n ? n : (dim == 2 ? 9 : 4);
        for (flcc_region reg : {FLCC_FULL, FLCC_SAME, FLCC_VALID}) {
            const ref::Shape s = dim == 2 ? ref::Shape{2, {k + 77, k + 90, 1}, {k, n ? k : k + 3, 1}, reg}
                                          : ref::Shape{3, {k + 9, k + 8, k + 11}, {k, k, n ? k : k + 1}, reg};
            for (Data d : {Data::uniform, Data::uint8, Data::uint16, Data::offset, Data::ramp,
                           Data::panels, Data::constant, Data::plateaus}) {
                const auto img = ref::make_data(d, s, true, rng);
                const auto t = ref::make_data(d, s, false, rng);
                const th::Run r = th::run(FLCC_LCORR, s, img, t, device_opts(name));
                INFO(name << " " << th::describe(s) << " data " << ref::data_name(d));
                if (r.result == FLCC_METHOD_NOT_APPLICABLE) continue;
                REQUIRE(r.result == FLCC_SUCCESS);
                const auto want = ref::lcorr(s, img.data(), t.data());
                INFO("worst " << th::worst(s, want, r.out.data()));
                CHECK(ref::max_abs_diff(want, r.out.data()) <= (d == Data::ramp ? 1e-4 : 1e-5));
                const auto flat = ref::zero_variance(s, img.data());
                size_t misses = 0, out_of_range = 0;
                for (size_t i = 0; i < want.size(); ++i) {
                    if (flat[i] && r.out[i] != 0.0f) ++misses;
                    if (!(std::fabs(r.out[i]) <= 1.0f)) ++out_of_range;
                }
                CHECK(misses == 0);
                CHECK(out_of_range == 0);
            }
        }
    }
}

TEST_CASE("every GPU solver on adversarial data: finite, bounded, exact zeros", "[device][numerics][adversarial]")
{
    // The host suite's adversarial kinds (huge and tiny scales, values near FLT_MAX, denormals,
    // signed zeros, huge offsets, mixed magnitudes, constant blocks) on every GPU solver: each
    // image kind once per solver with a template kind and region that rotate, on images of
    // several blocks or tiles (the 3D Fourier solvers' scaled and plain modes, their changes
    // along the planes). For finite input: finite, within [-1, 1], exactly 0 on every
    // zero-variance panel and for a constant template.
    if (skip_without_gpu()) return;
    using adversarial::Kind;
    const auto names = th::solvers("device.");
    std::mt19937 rng(77);
    int index = 0;
    for (const std::string& name : names) {
        const int dim = th::solver_dim(name), n = th::solver_cube(name), k = n ? n : (dim == 2 ? 7 : 5);
        for (int ki = 0; ki < int(Kind::count); ++ki) {
            const int kt = (3 * ki + index) % int(Kind::count);
            const flcc_region reg = flcc_region((ki + index) % 3);
            const ref::Shape s = dim == 2 ? ref::Shape{2, {k + 40, k + 50, 1}, {k, k, 1}, reg}
                                          : ref::Shape{3, {k + 6, k + 30, k + 28}, {k, k, k}, reg};
            const auto img = adversarial::make(Kind(ki), ref::image_elems(s), dim == 2 ? s.image.w : s.image.d, rng);
            const auto t = adversarial::make(Kind(kt), ref::templ_elems(s), dim == 2 ? s.templ.w : s.templ.d, rng);
            const th::Run r = th::run(FLCC_LCORR, s, img, t, device_opts(name));
            INFO(name << " " << th::describe(s) << " image kind " << ki << " template kind " << kt);
            if (r.result == FLCC_METHOD_NOT_APPLICABLE) continue;
            REQUIRE(r.result == FLCC_SUCCESS);
            const auto flat = ref::zero_variance(s, img.data());
            const bool flat_template = std::all_of(t.begin(), t.end(), [&](float v) { return v == t[0]; });
            size_t nonfinite = 0, out_of_range = 0, zero_misses = 0;
            for (size_t i = 0; i < r.out.size(); ++i) {
                if (!std::isfinite(r.out[i])) ++nonfinite;
                if (!(std::fabs(r.out[i]) <= 1.0f)) ++out_of_range;
                if ((flat[i] || flat_template) && r.out[i] != 0.0f) ++zero_misses;
            }
            CHECK(nonfinite == 0);
            CHECK(out_of_range == 0);
            CHECK(zero_misses == 0);
        }
        ++index;
    }
}

TEST_CASE("small 2D direct kernels: every column shift, aligned and misaligned device images",
          "[device][numerics]")
{
    // The small 2D kernels (templates up to 8 x 8) gather a box that starts at any column mod 4
    // (template size and region set it) into float4-aligned shared rows. The shapes of the other
    // cases have widths that are not multiples of 4, or one tile across; these have several tiles
    // across a width that is, and the same frames then come from a device pointer one float off
    // 16-byte alignment.
    if (skip_without_gpu()) return;
    using ref::Data;
    for (int k = 2; k <= 8; ++k) {
        const std::string name = "device.direct2.k" + std::to_string(k);
        for (flcc_region reg : {FLCC_FULL, FLCC_SAME, FLCC_VALID})
            for (Data d : {Data::uniform, Data::uint16, Data::panels}) {
                const ref::Shape s{2, {70, 136, 1}, {k, k, 1}, reg};
                std::mt19937 rng(5);
                const auto img = ref::make_data(d, s, true, rng);
                const auto t = ref::make_data(d, s, false, rng);
                const auto want = ref::lcorr(s, img.data(), t.data());
                const auto want_conv = ref::conv(s, img.data(), t.data());
                INFO(name << " " << th::describe(s) << " data " << ref::data_name(d));
                const th::Run r = th::run(FLCC_LCORR, s, img, t, device_opts(name));
                REQUIRE(r.result == FLCC_SUCCESS);
                CHECK(ref::max_abs_diff(want, r.out.data()) <= 1e-5);
                const th::Run c = th::run(FLCC_CONV, s, img, t, device_opts(name));
                REQUIRE(c.result == FLCC_SUCCESS);
                CHECK(th::error(FLCC_CONV, want_conv, c.out.data()) <= 1e-5);

                flcc_plan p = nullptr;
                REQUIRE(forced_plan(&p, name, FLCC_LCORR, s) == FLCC_SUCCESS);
                std::vector<float> shifted(img.size() + 1);
                std::copy(img.begin(), img.end(), shifted.begin() + 1);
                DeviceArray<float> d_in(shifted), d_out(want.size());
                REQUIRE(flcc_lcorr_exec(p, d_in.p + 1, t.data(), d_out.p, 1) == FLCC_SUCCESS);
                CHECK(ref::max_abs_diff(want, d_out.get().data()) <= 1e-5);
                flcc_destroy(p);

                // A NaN anywhere in the image is reported by both operations (convolution's
                // blocks gather the statistics for this check alone).
                if (d != Data::uniform) continue;
                for (const size_t at : {size_t(0), img.size() / 2 + 3, img.size() - 1}) {
                    auto bad = img;
                    bad[at] = std::nanf("");
                    INFO("NaN at " << at);
                    CHECK(th::run(FLCC_LCORR, s, bad, t, device_opts(name)).result == FLCC_NONFINITE_INPUT);
                    CHECK(th::run(FLCC_CONV, s, bad, t, device_opts(name)).result == FLCC_NONFINITE_INPUT);
                }
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

TEST_CASE("GPU and CPU agree", "[device]")
{
    if (skip_without_gpu()) return;
    std::mt19937 rng(11);
    for (const ref::Shape& s : {ref::Shape{2, {300, 257, 1}, {16, 16, 1}, FLCC_FULL},
                                ref::Shape{2, {211, 190, 1}, {7, 12, 1}, FLCC_SAME},
                                ref::Shape{3, {40, 33, 37}, {5, 5, 5}, FLCC_VALID}})
        for (flcc_op op : {FLCC_CONV, FLCC_LCORR}) {
            const auto img = ref::make_data(ref::Data::uint16, s, true, rng);
            const auto t = ref::make_data(ref::Data::uniform, s, false, rng);
            th::RunOptions host, dev;
            host.platform = FLCC_HOST;
            dev.platform = FLCC_DEVICE;
            const auto b = th::run(op, s, img, t, dev);
            REQUIRE(b.result == FLCC_SUCCESS);
            if (!have_host_solvers()) {
                // A GPU-only build (FLCC_WITH_HOST=OFF): the float64 reference stands in for the CPU.
                WARN("no host solvers in this build: GPU checked against the float64 reference");
                const auto want = op == FLCC_CONV ? ref::conv(s, img.data(), t.data()) : ref::lcorr(s, img.data(), t.data());
                const double tol = op == FLCC_CONV ? 1e-5 * std::max(ref::max_abs(want), 1.0) : 1e-4;
                CHECK(ref::max_abs_diff(want, b.out.data()) <= tol);
                continue;
            }
            const auto a = th::run(op, s, img, t, host);
            REQUIRE(a.result == FLCC_SUCCESS);
            INFO(th::describe(s) << " host " << a.method << " device " << b.method);
            double e = 0, m = 1;
            for (size_t i = 0; i < a.out.size(); ++i) {
                e = std::max(e, double(std::fabs(a.out[i] - b.out[i])));
                m = std::max(m, double(std::fabs(a.out[i])));
            }
            CHECK(e <= (op == FLCC_CONV ? 2e-5 * m : 2e-5));
        }
}

TEST_CASE("GPU streams, device pointers and a caller's stream", "[device][stream]")
{
    if (skip_without_gpu()) return;
    std::mt19937 rng(12);
    const ref::Shape s{2, {123, 140, 1}, {9, 9, 1}, FLCC_FULL};
    const int frames = 7;
    const size_t n = size_t(ref::image_elems(s)), m = size_t(ref::out_elems(s));
    std::vector<float> imgs(n * frames);
    std::uniform_real_distribution<float> u(0, 1);
    for (float& v : imgs) v = u(rng);
    const auto t = ref::make_data(ref::Data::uniform, s, false, rng);

    // The reference, frame by frame, on the host.
    std::vector<std::vector<double>> want;
    for (int f = 0; f < frames; ++f) want.push_back(ref::lcorr(s, imgs.data() + f * n, t.data()));

    for (flcc_type type : {FLCC_SINGLE, FLCC_STREAM}) {
        flcc_options o;
        flcc_options_init(&o);
        o.platform = FLCC_DEVICE;
        o.type = type;
        flcc_plan p = nullptr;
        REQUIRE(flcc_plan_create(&p, FLCC_LCORR, 2, s.image, s.templ, &o) == FLCC_SUCCESS);
        INFO(flcc_plan_method(p));

        // Host frames, pageable and page-locked.
        std::vector<float> out(m * frames);
        REQUIRE(flcc_lcorr_exec(p, imgs.data(), t.data(), out.data(), frames) == FLCC_SUCCESS);
        for (int f = 0; f < frames; ++f) CHECK(ref::max_abs_diff(want[size_t(f)], out.data() + f * m) <= 1e-5);
        float* pin_in = static_cast<float*>(flcc_malloc(n * frames * sizeof(float)));
        float* pin_out = static_cast<float*>(flcc_malloc(m * frames * sizeof(float)));
        std::copy(imgs.begin(), imgs.end(), pin_in);
        REQUIRE(flcc_lcorr_exec(p, pin_in, t.data(), pin_out, frames) == FLCC_SUCCESS);
        for (int f = 0; f < frames; ++f) CHECK(ref::max_abs_diff(want[size_t(f)], pin_out + f * m) <= 1e-5);
        flcc_free(pin_in);
        flcc_free(pin_out);

        // Device frames, template on the device too.
        DeviceArray<float> d_in(imgs), d_t(t), d_out(m * frames);
        REQUIRE(flcc_lcorr_exec(p, d_in.p, d_t.p, d_out.p, frames) == FLCC_SUCCESS);
        auto got = d_out.get();
        for (int f = 0; f < frames; ++f) CHECK(ref::max_abs_diff(want[size_t(f)], got.data() + f * m) <= 1e-5);

        // Bound to a caller's stream: asynchronous until flcc_plan_synchronize.
        cudaStream_t stream;
        REQUIRE(cudaStreamCreate(&stream) == cudaSuccess);
        REQUIRE(flcc_plan_set_stream(p, stream) == FLCC_SUCCESS);
        REQUIRE(cudaMemsetAsync(d_out.p, 0, m * frames * sizeof(float), stream) == cudaSuccess);
        REQUIRE(flcc_lcorr_exec(p, d_in.p, t.data(), d_out.p, frames) == FLCC_SUCCESS);
        REQUIRE(flcc_plan_synchronize(p) == FLCC_SUCCESS);
        got = d_out.get();
        for (int f = 0; f < frames; ++f) CHECK(ref::max_abs_diff(want[size_t(f)], got.data() + f * m) <= 1e-5);
        // Mixed: device image, host output.
        std::vector<float> mixed(m * frames);
        REQUIRE(flcc_lcorr_exec(p, d_in.p, t.data(), mixed.data(), frames) == FLCC_SUCCESS);
        CHECK(ref::max_abs_diff(want[3], mixed.data() + 3 * m) <= 1e-5);
        REQUIRE(flcc_plan_set_stream(p, nullptr) == FLCC_SUCCESS);
        cudaStreamDestroy(stream);

        // Non-finite input is reported on the GPU too, then the plan goes on working.
        std::vector<float> bad(imgs.begin(), imgs.begin() + long(n));
        bad[n / 2] = std::nanf("");
        CHECK(flcc_lcorr_exec(p, bad.data(), t.data(), out.data(), 1) == FLCC_NONFINITE_INPUT);
        REQUIRE(flcc_lcorr_exec(p, imgs.data(), t.data(), out.data(), 1) == FLCC_SUCCESS);
        CHECK(ref::max_abs_diff(want[0], out.data()) <= 1e-5);
        flcc_destroy(p);
    }
}

TEST_CASE("templates in device memory: changes are detected, every exec uses the template given",
          "[device][template]")
{
    if (skip_without_gpu()) return;
    using ref::Data;
    // Direct solvers, the Fourier tile plans and device.fourier3.slabs prepare device templates on
    // the GPU; the others copy them to the host. A sequence that would expose a stale template either
    // way: A, A, B, A from the host, B.
    for (const std::string& name : th::solvers("device.")) {
        const int dim = th::solver_dim(name), c = th::solver_cube(name);
        // Two specialised sizes (2D: 5 x 5 and 8 x 8, whose blocks prepare device templates
        // themselves, the second with two values per lane), the generic kernels, Fourier.
        if (c != 0 && c != 5 && c != 8) continue;
        std::mt19937 rng(31);
        // The generic 2D kernels also with a template of 33 x 35, more values than the template
        // kernel has threads.
        for (const int k : {5, 33}) {
            if (k == 33 && (dim != 2 || c != 0)) continue;
            const ref::Shape s = dim == 2 ? ref::Shape{2, {61, 70, 1}, {k, c ? k : k + 2, 1}, FLCC_SAME}
                                          : ref::Shape{3, {14, 15, 13}, {k, k, c ? k : k - 1}, FLCC_SAME};
            for (flcc_op op : {FLCC_CONV, FLCC_LCORR})
                for (Data d : {Data::uniform, Data::offset, Data::uint16}) {
                    INFO(name << (op == FLCC_CONV ? " conv " : " lcorr ") << th::describe(s) << " data "
                              << ref::data_name(d));
                    const auto img = ref::make_data(d, s, true, rng);
                    const auto a = ref::make_data(d, s, false, rng), b = ref::make_data(d, s, false, rng);
                    const auto want_a = th::reference(op, s, img.data(), a.data());
                    const auto want_b = th::reference(op, s, img.data(), b.data());
                    flcc_plan p = nullptr;
                    const flcc_result made = forced_plan(&p, name, op, s, true);
                    if (made == FLCC_METHOD_NOT_APPLICABLE) continue;
                    REQUIRE(made == FLCC_SUCCESS);
                    DeviceArray<float> d_img(img), d_a(a), d_b(b), d_out(size_t(ref::out_elems(s)));
                    auto exec = [&](const float* t) {
                        return op == FLCC_CONV ? flcc_conv_exec(p, d_img.p, t, d_out.p, 1)
                                               : flcc_lcorr_exec(p, d_img.p, t, d_out.p, 1);
                    };
                    const std::pair<const float*, const std::vector<double>*> steps[] = {
                        {d_a.p, &want_a}, {d_a.p, &want_a}, {d_b.p, &want_b}, {a.data(), &want_a}, {d_b.p, &want_b}};
                    int step = 0;
                    for (const auto& [t, want] : steps) {
                        INFO("step " << step++);
                        REQUIRE(exec(t) == FLCC_SUCCESS);
                        CHECK(th::error(op, *want, d_out.get().data()) <= 1e-5);
                    }
                    // A non-finite template is refused; the plan then goes on with the next one.
                    auto bad = b;
                    bad[bad.size() / 2] = std::nanf("");
                    DeviceArray<float> d_bad(bad);
                    CHECK(exec(d_bad.p) == FLCC_NONFINITE_INPUT);
                    CHECK(exec(d_bad.p) == FLCC_NONFINITE_INPUT);
                    REQUIRE(exec(d_b.p) == FLCC_SUCCESS);
                    CHECK(th::error(op, want_b, d_out.get().data()) <= 1e-5);
                    REQUIRE(exec(d_a.p) == FLCC_SUCCESS);
                    CHECK(th::error(op, want_a, d_out.get().data()) <= 1e-5);
                    // A constant template: LCC exactly 0 everywhere.
                    if (op == FLCC_LCORR) {
                        DeviceArray<float> d_flat(std::vector<float>(a.size(), 3.5f));
                        REQUIRE(exec(d_flat.p) == FLCC_SUCCESS);
                        const auto got = d_out.get();
                        CHECK(std::count(got.begin(), got.end(), 0.0f) == long(got.size()));
                    }
                    flcc_destroy(p);
                }
        }
    }
}

TEST_CASE("device templates changing between frames queued on a caller's stream", "[device][template][stream]")
{
    if (skip_without_gpu()) return;
    // Frames queued without waiting, each with another device template: a solver that prepares
    // device templates beside the frames (slabs: in blocks of each frame's first kernel, beside
    // its statistics; the Fourier tile plans: a kernel and a transform ahead of each frame) must
    // neither rewrite the spectra an earlier frame still reads nor let a frame start on a
    // template not yet prepared.
    std::mt19937 rng(47);
    for (const std::string& name : th::solvers("device.")) {
        // 2D: the Fourier tile plans (compared and prepared by a kernel, then transformed, ahead
        // of each frame) and the direct kernels of 8 x 8 (prepared in every block) and any size.
        const int dim = th::solver_dim(name), c = th::solver_cube(name);
        if (dim == 2 && c != 0 && c != 8) continue;
        const ref::Shape s = dim == 3 ? ref::Shape{3, {40, 44, 48}, {8, 8, 8}, FLCC_FULL}
                                      : ref::Shape{2, {90, 100, 1}, {8, 8, 1}, FLCC_FULL};
        for (flcc_op op : {FLCC_CONV, FLCC_LCORR}) {
            flcc_plan p = nullptr;
            const flcc_result made = forced_plan(&p, name, op, s, true);
            if (made == FLCC_METHOD_NOT_APPLICABLE) continue;
            REQUIRE(made == FLCC_SUCCESS);
            INFO(name << (op == FLCC_CONV ? " conv" : " lcorr"));
            const auto img = ref::make_data(ref::Data::uniform, s, true, rng);
            std::vector<std::vector<float>> templs;
            for (int k = 0; k < 3; ++k) templs.push_back(ref::make_data(ref::Data::uniform, s, false, rng));
            DeviceArray<float> d_img(img);
            std::vector<std::unique_ptr<DeviceArray<float>>> d_t;
            for (const auto& t : templs) d_t.push_back(std::make_unique<DeviceArray<float>>(t));
            const int frames = 6;
            const size_t m = size_t(ref::out_elems(s));
            DeviceArray<float> d_out(m * frames);
            cudaStream_t stream;
            REQUIRE(cudaStreamCreate(&stream) == cudaSuccess);
            REQUIRE(flcc_plan_set_stream(p, stream) == FLCC_SUCCESS);
            for (int f = 0; f < frames; ++f) {
                const float* t = d_t[size_t(f % 3)]->p;
                float* out = d_out.p + size_t(f) * m;
                REQUIRE((op == FLCC_CONV ? flcc_conv_exec(p, d_img.p, t, out, 1)
                                         : flcc_lcorr_exec(p, d_img.p, t, out, 1)) == FLCC_SUCCESS);
            }
            REQUIRE(flcc_plan_synchronize(p) == FLCC_SUCCESS);
            const auto got = d_out.get();
            for (int f = 0; f < frames; ++f) {
                INFO("frame " << f);
                const auto want = th::reference(op, s, img.data(), templs[size_t(f % 3)].data());
                CHECK(th::error(op, want, got.data() + size_t(f) * m) <= 1e-5);
            }
            REQUIRE(flcc_plan_set_stream(p, nullptr) == FLCC_SUCCESS);
            cudaStreamDestroy(stream);
            flcc_destroy(p);
        }
    }
}

TEST_CASE("running out of device memory is reported and recoverable", "[device][memory]")
{
    if (skip_without_gpu()) return;
    size_t free_bytes = 0, total = 0;
    REQUIRE(cudaMemGetInfo(&free_bytes, &total) == cudaSuccess);
    // A 3D plan whose host-frame buffers alone exceed the free memory.
    const int side = int(std::cbrt(double(free_bytes) / 4.0 / 2.0)) + 64;
    flcc_options o;
    flcc_options_init(&o);
    o.platform = FLCC_DEVICE;
    o.rigor = FLCC_ESTIMATE;
    o.method = "device.direct3.k2";
    flcc_plan p = nullptr;
    CHECK(flcc_plan_create(&p, FLCC_CONV, 3, {side, side, side}, {2, 2, 2}, &o) == FLCC_ALLOC_FAILED);
    CHECK(p == nullptr);
    size_t after = 0;
    REQUIRE(cudaMemGetInfo(&after, &total) == cudaSuccess);
    CHECK(after + (64u << 20) >= free_bytes);   // nothing leaked beyond allocator slack
    // The next, smaller call succeeds and is right.
    const ref::Shape s{3, {20, 21, 22}, {2, 2, 2}, FLCC_FULL};
    std::mt19937 rng(13);
    const auto img = ref::make_data(ref::Data::uniform, s, true, rng);
    const auto t = ref::make_data(ref::Data::uniform, s, false, rng);
    th::RunOptions ro;
    ro.method = "device.direct3.k2";
    ro.platform = FLCC_DEVICE;
    const auto r = th::run(FLCC_CONV, s, img, t, ro);
    REQUIRE(r.result == FLCC_SUCCESS);
    CHECK(th::error(FLCC_CONV, ref::conv(s, img.data(), t.data()), r.out.data()) <= 1e-5);
}

TEST_CASE("a full GPU: every GPU solver reports FLCC_ALLOC_FAILED, no sticky error, then works",
          "[device][memory]")
{
    if (skip_without_gpu()) return;
    // One problem each GPU solver takes (LCC, else convolution), found with the GPU free.
    const ref::Shape shapes[] = {{2, {256, 256, 1}, {5, 5, 1}, FLCC_FULL},
                                 {2, {256, 256, 1}, {16, 16, 1}, FLCC_FULL},
                                 {2, {256, 256, 1}, {32, 32, 1}, FLCC_FULL},
                                 {3, {48, 48, 48}, {3, 3, 3}, FLCC_FULL},
                                 {3, {48, 48, 48}, {8, 8, 8}, FLCC_FULL}};
    struct Case {
        std::string name;
        flcc_op op;
        ref::Shape shape;
    };
    std::vector<Case> cases;
    for (int i = 0; i < flcc_solver_count(); ++i) {
        const std::string name = flcc_solver_name(i);
        if (name.rfind("device.", 0) != 0) continue;
        for (flcc_op op : {FLCC_LCORR, FLCC_CONV}) {
            bool found = false;
            for (const auto& s : shapes) {
                flcc_plan p = nullptr;
                if (forced_plan(&p, name, op, s) == FLCC_SUCCESS) {
                    flcc_destroy(p);
                    cases.push_back({name, op, s});
                    found = true;
                    break;
                }
            }
            if (found) break;
        }
    }
    REQUIRE(!cases.empty());

    // Fill the device: the largest blocks that still fit, down to 1 MiB.
    std::vector<void*> fill;
    for (size_t block = size_t(1) << 34; block >= (size_t(1) << 20);) {
        void* q = nullptr;
        if (cudaMalloc(&q, block) == cudaSuccess) fill.push_back(q);
        else block /= 2;
    }
    (void)cudaGetLastError();   // clears the failed allocations' error
    size_t free_bytes = 0, total = 0;
    REQUIRE(cudaMemGetInfo(&free_bytes, &total) == cudaSuccess);
    INFO("free while full: " << free_bytes << " bytes");
    int refused = 0;
    for (const auto& c : cases) {
        INFO(c.name);
        flcc_plan p = nullptr;
        const flcc_result r = forced_plan(&p, c.name, c.op, c.shape);
        CHECK((r == FLCC_ALLOC_FAILED || r == FLCC_SUCCESS));
        if (r == FLCC_SUCCESS) {
            // It fitted in what was left: an exec then succeeds or reports the allocation.
            std::vector<float> img(size_t(ref::image_elems(c.shape)), 1.0f), t(size_t(ref::templ_elems(c.shape)), 0.5f);
            flcc_size os{};
            REQUIRE(flcc_plan_output_size(p, &os) == FLCC_SUCCESS);
            std::vector<float> out(size_t(os.h) * os.w * os.d);
            const flcc_result e = c.op == FLCC_CONV ? flcc_conv_exec(p, img.data(), t.data(), out.data(), 1)
                                                     : flcc_lcorr_exec(p, img.data(), t.data(), out.data(), 1);
            CHECK((e == FLCC_SUCCESS || e == FLCC_ALLOC_FAILED));
            flcc_destroy(p);
        } else {
            CHECK(p == nullptr);
            ++refused;
        }
        // Out of memory is not a sticky error: the context still works.
        CHECK(cudaGetLastError() == cudaSuccess);
        CHECK(cudaDeviceSynchronize() == cudaSuccess);
    }
    for (void* q : fill) cudaFree(q);
    CHECK(refused > 0);
    // With the memory back, every solver plans and runs again.
    for (const auto& c : cases) {
        INFO(c.name);
        flcc_plan p = nullptr;
        REQUIRE(forced_plan(&p, c.name, c.op, c.shape) == FLCC_SUCCESS);
        std::vector<float> img(size_t(ref::image_elems(c.shape)), 1.0f), t(size_t(ref::templ_elems(c.shape)), 0.5f);
        flcc_size os{};
        REQUIRE(flcc_plan_output_size(p, &os) == FLCC_SUCCESS);
        std::vector<float> out(size_t(os.h) * os.w * os.d);
        CHECK((c.op == FLCC_CONV ? flcc_conv_exec(p, img.data(), t.data(), out.data(), 1)
                                 : flcc_lcorr_exec(p, img.data(), t.data(), out.data(), 1)) == FLCC_SUCCESS);
        flcc_destroy(p);
    }
}
