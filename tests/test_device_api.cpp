// The GPU side of the API, across solver families: DEVICE plans without a GPU, streams, device
// and page-locked pointers, a caller's stream, templates in device memory, and recovery from
// running out of device memory. Without a usable GPU every other test case says so and is
// skipped.
#include "device_test_support.h"
#include "helpers.h"

#include <catch2/catch.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

using dt::DeviceArray;
using dt::forced_plan;
using dt::skip_without_gpu;

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

namespace {

// A host function the legacy stream runs: it holds that stream for a while.
void CUDART_CB hold_legacy_stream(void*) { std::this_thread::sleep_for(std::chrono::milliseconds(200)); }

}  // namespace

TEST_CASE("an exec on device data follows the caller's work on the legacy default stream",
          "[device][stream]")
{
    if (skip_without_gpu()) return;
    // The caller's image reaches the device on the legacy stream after a delay (as the DMA of a
    // cudaMemcpy from pageable memory may): the exec, on the plan's own non-blocking stream,
    // must wait for it and never see the zeros there before.
    // The wait is in the executor base that every GPU solver shares; one solver shows it.
    {
        const std::string name = "device.direct2.k5";
        const ref::Shape s{2, {61, 70, 1}, {5, 5, 1}, FLCC_SAME};
        std::mt19937 rng(3);
        const auto img = ref::make_data(ref::Data::uniform, s, true, rng);
        const auto t = ref::make_data(ref::Data::uniform, s, false, rng);
        const auto want = th::reference(FLCC_LCORR, s, img.data(), t.data());
        flcc_plan p = nullptr;
        REQUIRE(forced_plan(&p, name, FLCC_LCORR, s, true) == FLCC_SUCCESS);
        DeviceArray<float> d_img(std::vector<float>(img.size(), 0.f)), d_t(t),
            d_out(size_t(ref::out_elems(s)));
        float* pinned = nullptr;
        REQUIRE(cudaMallocHost(&pinned, img.size() * sizeof(float)) == cudaSuccess);
        std::copy(img.begin(), img.end(), pinned);
        REQUIRE(cudaLaunchHostFunc(cudaStreamLegacy, hold_legacy_stream, nullptr) == cudaSuccess);
        REQUIRE(cudaMemcpyAsync(d_img.p, pinned, img.size() * sizeof(float), cudaMemcpyHostToDevice,
                                cudaStreamLegacy) == cudaSuccess);
        REQUIRE(flcc_lcorr_exec(p, d_img.p, d_t.p, d_out.p, 1) == FLCC_SUCCESS);
        CHECK(th::error(FLCC_LCORR, want, d_out.get().data()) <= 1e-5);
        REQUIRE(cudaStreamSynchronize(cudaStreamLegacy) == cudaSuccess);
        cudaFreeHost(pinned);
        flcc_destroy(p);
    }
}
