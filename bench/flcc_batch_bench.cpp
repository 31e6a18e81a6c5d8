// flcc-batch-bench: batch plans on the subregion-registration workloads of issue 28, one JSON
// line per problem in flcc-bench's schema ("bench": "flcc.batch"), seconds per frame.
//
//   ebsd-search  900 x 900 uint16 frames, 49 subregions of 128 x 128 on a 7 x 7 grid, each
//                searched for the centre 64 x 64 of its reference subregion (VALID region,
//                OpenCV's form)
//   ebsd-full    the same subregions, each correlated with its whole reference subregion (FULL
//                region, zero-mean subregions: the EBSD seed's form)
//   piv          frame pairs of 1024 x 1024 uint8 (PIV cameras), 32 x 32 windows on a 32-pixel
//                step, each searched in the 64 x 64 window around it in the second frame
//   piv-full     frame pairs of 2048 x 2048 uint8, 4096 windows of 32 x 32 (a 64 x 64 grid),
//                each correlated with the same window of the first frame (FULL, zero mean)
//   piv-same     the same windows, SAME region: displacements -16 to 15 per axis, the range of
//                a circular 32 x 32 correlation (the CuPy peer's map)
//
// --platform device runs the GPU engine; --memory says where the frames are: host (pageable),
// pinned (page-locked host: the stream case) or device (device-resident; peaks to the host).
//
// Frames hold band-limited random patterns (a few dozen plane waves), so that every map has a
// peak; the times do not depend on the content.
#include "bench_common.h"
#include "flcc.h"

#ifdef FLCC_BENCH_CUDA
#include <cuda_runtime.h>
#endif

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Workload {
    std::string name;
    flcc_op op = FLCC_LCORR;
    flcc_region region = FLCC_VALID;
    flcc_size frame{}, image{}, templ{};
    flcc_dtype type = FLCC_UINT16;
    std::vector<int> image_origins, templ_origins;
    bool zero_mean = false;
    int templ_per_frame = 0;
};

Workload make_workload(const std::string& name)
{
    Workload w;
    w.name = name;
    if (name == "ebsd-search" || name == "ebsd-full") {
        w.frame = {900, 900, 1};
        w.image = {128, 128, 1};
        const bool full = name == "ebsd-full";
        w.templ = full ? flcc_size{128, 128, 1} : flcc_size{64, 64, 1};
        w.region = full ? FLCC_FULL : FLCC_VALID;
        w.zero_mean = full;
        const int step = (900 - 2 * 50 - 128) / 6;   // 7 x 7 grid, 50-pixel margin
        for (int i = 0; i < 7; ++i)
            for (int j = 0; j < 7; ++j) {
                const int y = 50 + i * step, x = 50 + j * step;
                w.image_origins.insert(w.image_origins.end(), {y, x});
                const int t = full ? 0 : 32;
                w.templ_origins.insert(w.templ_origins.end(), {y + t, x + t});
            }
    } else if (name == "piv") {
        w.frame = {1024, 1024, 1};
        w.type = FLCC_UINT8;
        w.image = {64, 64, 1};
        w.templ = {32, 32, 1};
        w.templ_per_frame = 1;   // each pair's first frame gives the templates
        for (int y = 16; y + 64 <= 1024 - 16; y += 32)
            for (int x = 16; x + 64 <= 1024 - 16; x += 32) {
                w.image_origins.insert(w.image_origins.end(), {y, x});
                w.templ_origins.insert(w.templ_origins.end(), {y + 16, x + 16});
            }
    } else if (name == "piv-full" || name == "piv-same") {
        w.frame = {2048, 2048, 1};
        w.type = FLCC_UINT8;
        w.image = {32, 32, 1};
        w.templ = {32, 32, 1};
        w.region = name == "piv-full" ? FLCC_FULL : FLCC_SAME;
        w.zero_mean = true;
        w.templ_per_frame = 1;
        for (int y = 0; y < 2048; y += 32)
            for (int x = 0; x < 2048; x += 32) {
                w.image_origins.insert(w.image_origins.end(), {y, x});
                w.templ_origins.insert(w.templ_origins.end(), {y, x});
            }
    } else {
        throw CLI::ValidationError("--problem", "unknown problem " + name);
    }
    return w;
}

template <class T>
std::vector<T> pattern(const flcc_size& f, int frames, double scale, std::mt19937& rng)
{
    std::uniform_real_distribution<double> angle(0, 2 * M_PI), len(5, 40);
    // Three distinct frames, repeated: the times do not depend on the content.
    const size_t elems = size_t(f.h) * f.w;
    std::vector<T> v(elems * frames);
    for (int k = 0; k < frames; ++k) {
        if (k >= 3) {
            std::copy(v.begin() + (k % 3) * elems, v.begin() + (k % 3 + 1) * elems, v.begin() + k * elems);
            continue;
        }
        std::vector<double> ky, kx, ph;
        for (int i = 0; i < 24; ++i) {
            const double a = angle(rng), q = 2 * M_PI / len(rng);
            ky.push_back(q * std::sin(a));
            kx.push_back(q * std::cos(a));
            ph.push_back(angle(rng));
        }
        for (int r = 0; r < f.h; ++r)
            for (int c = 0; c < f.w; ++c) {
                double s = 0;
                for (size_t i = 0; i < ky.size(); ++i) s += std::cos(ky[i] * r + kx[i] * c + ph[i]);
                v[(size_t(k) * f.h + r) * f.w + c] = T(scale * (0.5 + s / 24 * 0.45));
            }
    }
    return v;
}

}  // namespace

int main(int argc, char** argv)
{
    CLI::App app{"flcc-batch-bench: batch plans on subregion-registration workloads"};
    std::string problem = "ebsd-search", refine = "parabolic", method, op = "lcorr";
    int frames = 16, repeats = 5, threads = 0;
    std::string rigor = "measure", platform = "host", memory = "host";
    bool hann = false;
    app.add_option("--problem", problem, "ebsd-search, ebsd-full, piv, piv-full or piv-same");
    app.add_option("--platform", platform, "host or device")->check(CLI::IsMember({"host", "device"}));
    app.add_option("--memory", memory, "where the frames are: host, pinned or device")
        ->check(CLI::IsMember({"host", "pinned", "device"}));
    app.add_option("--refine", refine, "none, parabolic, gaussian, quadratic or upsampled");
    app.add_option("--frames", frames, "frames per exec")->check(CLI::PositiveNumber);
    app.add_option("--repeats", repeats, "timed execs")->check(CLI::PositiveNumber);
    app.add_option("--threads", threads, "0 = all hardware threads");
    app.add_option("--method", method, "force a per-pair solver or a GPU engine");
    app.add_option("--rigor", rigor, "measure or estimate");
    app.add_flag("--hann", hann, "Hann window on every subregion");
    app.add_option("--op", op, "lcorr, or xcorr: the same maps unnormalised")
        ->check(CLI::IsMember({"lcorr", "xcorr"}));
    CLI11_PARSE(app, argc, argv);

    Workload w = make_workload(problem);
    if (op == "xcorr") w.op = FLCC_XCORR;
    const char* refines[] = {"none", "parabolic", "gaussian", "quadratic", "upsampled"};
    int r = -1;
    for (int i = 0; i < 5; ++i)
        if (refine == refines[i]) r = i;
    if (r < 0) {
        std::fprintf(stderr, "flcc-batch-bench: unknown refine %s\n", refine.c_str());
        return 2;
    }
    flcc_batch b;
    flcc_batch_init(&b);
    const int n = int(w.image_origins.size() / 2);
    b.images = n;
    b.templates = n;
    b.image_type = w.type;
    b.templ_type = w.type;
    b.image_origins = w.image_origins.data();
    b.image_frame = w.frame;
    b.templ_origins = w.templ_origins.data();
    b.templ_frame = w.frame;
    b.zero_mean = w.zero_mean;
    b.hann = hann;
    b.refine = static_cast<flcc_refine>(r);
    b.templ_per_frame = w.templ_per_frame;
    flcc_options o;
    flcc_options_init(&o);
    o.platform = platform == "device" ? FLCC_DEVICE : FLCC_HOST;
    o.region = w.region;
    o.threads = threads;
    o.rigor = rigor == "estimate" ? FLCC_ESTIMATE : FLCC_MEASURE;
    if (!method.empty()) o.method = method.c_str();

    std::mt19937 rng(1);
    const double scale = w.type == FLCC_UINT8 ? 255 : 4000;
    std::vector<uint16_t> f16;
    std::vector<uint8_t> f8;
    if (w.type == FLCC_UINT16) f16 = pattern<uint16_t>(w.frame, frames + 1, scale, rng);
    else f8 = pattern<uint8_t>(w.frame, frames + 1, scale, rng);
    const size_t frame_elems = size_t(w.frame.h) * w.frame.w;
    const size_t elem = w.type == FLCC_UINT16 ? 2 : 1;
    const unsigned char* all = w.type == FLCC_UINT16 ? reinterpret_cast<const unsigned char*>(f16.data())
                                                     : reinterpret_cast<const unsigned char*>(f8.data());
    // Frame 0 is the reference (EBSD) or the first frame of the first pair (PIV: each frame's
    // templates come from the frame before).
    const unsigned char* images = all + frame_elems * elem;
    const unsigned char* templs = all;
    void* staged = nullptr;
    if (memory != "host") {
#ifdef FLCC_BENCH_CUDA
        const size_t bytes = frame_elems * elem * size_t(frames + 1);
        const cudaError_t e = memory == "pinned" ? cudaMallocHost(&staged, bytes) : cudaMalloc(&staged, bytes);
        if (e != cudaSuccess || cudaMemcpy(staged, all, bytes, cudaMemcpyDefault) != cudaSuccess) {
            std::fprintf(stderr, "flcc-batch-bench: --memory %s: %s\n", memory.c_str(), cudaGetErrorString(e));
            return 1;
        }
        images = static_cast<const unsigned char*>(staged) + frame_elems * elem;
        templs = static_cast<const unsigned char*>(staged);
#else
        std::fprintf(stderr, "flcc-batch-bench: --memory %s needs a CUDA build\n", memory.c_str());
        return 2;
#endif
    }

    const auto t0 = std::chrono::steady_clock::now();
    flcc_plan plan = nullptr;
    const flcc_result made = flcc_batch_plan_create(&plan, w.op, 2, w.image, w.templ, &b, &o);
    const double plan_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (made != FLCC_SUCCESS) {
        std::fprintf(stderr, "flcc-batch-bench: %s: %s\n", flcc_result_string(made),
                     flcc_last_error_detail());
        return 1;
    }
    std::vector<flcc_peak> peaks(size_t(frames) * n);
    std::vector<double> times;
    for (int i = 0; i <= repeats; ++i) {   // the first run warms up
        const auto s = std::chrono::steady_clock::now();
        const flcc_result e = flcc_batch_exec(plan, images, templs, nullptr, peaks.data(), frames);
        const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - s).count();
        if (e != FLCC_SUCCESS) {
            std::fprintf(stderr, "flcc-batch-bench: exec: %s: %s\n", flcc_result_string(e),
                         flcc_last_error_detail());
            return 1;
        }
        if (i > 0) times.push_back(t / frames);
    }
    std::sort(times.begin(), times.end());
    const double median = times[times.size() / 2];
    const int hw = int(std::thread::hardware_concurrency());
    std::printf("{\"bench\": \"flcc.batch\", \"problem\": \"%s\", \"op\": \"%s\", \"dim\": 2, "
                "\"frame\": [%d, %d], \"subregions\": %d, \"image\": [%d, %d], \"template\": [%d, %d], "
                "\"region\": \"%s\", \"refine\": \"%s\", \"frames\": %d, \"platform\": \"%s\", \"memory\": \"%s\", "
                "\"method\": \"%s\", \"rigor\": \"%s\", \"threads\": %d, \"plan_seconds\": %.6g, "
                "\"seconds\": {\"median\": %.6g, \"min\": %.6g, \"max\": %.6g}, \"repeats\": %d, "
                "\"frames_per_second\": %.6g, \"machine\": {\"cpu\": \"%s\", \"hardware_threads\": %d}}\n",
                w.name.c_str(), op.c_str(), w.frame.h, w.frame.w, n, w.image.h, w.image.w, w.templ.h, w.templ.w,
                w.region == FLCC_FULL ? "full" : w.region == FLCC_SAME ? "same" : "valid", refine.c_str(), frames, platform.c_str(),
                memory.c_str(), flcc_plan_method(plan), rigor.c_str(), threads == 0 ? hw : threads, plan_seconds,
                median, times.front(), times.back(), repeats, 1 / median,
                bench::json_escape(bench::cpu_model()).c_str(), hw);
    flcc_destroy(plan);
#ifdef FLCC_BENCH_CUDA
    if (memory == "pinned") cudaFreeHost(staged);
    if (memory == "device") cudaFree(staged);
#endif
    return 0;
}
