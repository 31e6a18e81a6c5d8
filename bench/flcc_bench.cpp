// flcc-bench: times FLCC on one problem or a sweep and prints one JSON line per measurement.
//
//   flcc-bench --op lcorr --image 256x256 --template 8x8 --repeats 3
//   flcc-bench --op conv --image 2000x2000 --template 4,8,16 --region same --method all
//
// Sizes are HxW (2D) or HxWxD (3D); a template given as one number N means N x N (x N in 3D).
// Lists (comma separated) of images and templates are swept. --method auto lets the planner
// choose, a solver name forces it, "all" measures every applicable solver. Inputs are random
// (uniform [0, 1)); timings are medians over repeats after warm-up, per frame: wall clock around
// each exec, or with --timing events (device buffers) CUDA events around it, as the GPU peers.
#include "bench_common.h"
#include "flcc.h"

#include <CLI/CLI.hpp>

#ifdef FLCC_BENCH_CUDA
#include <cuda_runtime.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using bench::cpu_model;
using bench::json_escape;
using bench::split;

struct Dims {
    int dim;
    int v[3];
};

bool parse_dims(const std::string& s, Dims& d)
{
    const auto parts = split(s, 'x');
    if (parts.size() < 1 || parts.size() > 3) return false;
    d.dim = parts.size() == 3 ? 3 : 2;
    d.v[0] = d.v[1] = d.v[2] = 1;
    for (size_t i = 0; i < parts.size(); ++i) {
        char* end = nullptr;
        const long x = std::strtol(parts[i].c_str(), &end, 10);
        if (*end != '\0' || x < 1 || x > 1 << 30) return false;
        d.v[i] = int(x);
    }
    if (parts.size() == 1) d.dim = 0;   // a cube of the image's dimension
    return true;
}

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct Config {
    std::string op = "lcorr", region = "full", type = "single", platform = "host", method = "auto";
    std::string memory = "host";   // where image and output live: host (page-locked) or device
    std::string rigor = "measure";
    std::string timing = "wall";       // wall: host clock around each exec; events: see --timing
    std::string wisdom;                // a wisdom file imported before planning, or ""
    double wisdom_import_s = -1;       // how long its import took
    int frames = 1, repeats = 5, warmup = 1, threads = 0;
};

const char* region_name(flcc_region r) { return r == FLCC_FULL ? "full" : r == FLCC_SAME ? "same" : "valid"; }

// The planner's candidates with their times (negative: not timed), as a JSON object.
std::string candidates(flcc_plan plan)
{
    std::string s = "{";
    for (int i = 0; i < flcc_plan_candidate_count(plan); ++i) {
        const char* name = nullptr;
        double seconds = 0;
        if (flcc_plan_candidate(plan, i, &name, &seconds) != FLCC_SUCCESS) continue;
        char b[32];
        std::snprintf(b, sizeof b, "%.6g", seconds);
        s += (s.size() > 1 ? ",\"" : "\"") + json_escape(name) + "\":" + b;
    }
    return s + "}";
}

// The random input frames, made once per size and reused by every method timed on them:
// filling 10 frames of 4000x4000 afresh for each solver took longer than timing it.
class InputFrames {
public:
    ~InputFrames() { flcc_free(p_); }
    // n uniform [0, 1) values (the same ones for the same n); null when out of memory.
    float* get(size_t n)
    {
        if (n != n_) {
            flcc_free(p_);
            p_ = static_cast<float*>(flcc_malloc(n * sizeof(float)));
            n_ = p_ ? n : 0;
            std::mt19937 rng(1);
            std::uniform_real_distribution<float> u(0.f, 1.f);
            for (size_t i = 0; i < n_; ++i) p_[i] = u(rng);
        }
        return p_;
    }

private:
    float* p_ = nullptr;
    size_t n_ = 0;
};

int run_one(const Config& c, const Dims& im, const Dims& tp, const std::string& method,
            const std::string& machine, InputFrames& frames)
{
    const flcc_op op = c.op == "conv" ? FLCC_CONV : FLCC_LCORR;
    flcc_options o;
    flcc_options_init(&o);
    o.region = c.region == "same" ? FLCC_SAME : c.region == "valid" ? FLCC_VALID : FLCC_FULL;
    o.type = c.type == "stream" ? FLCC_STREAM : FLCC_SINGLE;
    o.platform = c.platform == "device" ? FLCC_DEVICE : c.platform == "any" ? FLCC_ANY : FLCC_HOST;
    o.rigor = c.rigor == "estimate" ? FLCC_ESTIMATE : FLCC_MEASURE;
    o.threads = c.threads;
    o.method = method == "auto" ? nullptr : method.c_str();
    o.device_resident = c.memory == "device";

    const flcc_size is{im.v[0], im.v[1], im.v[2]}, ts{tp.v[0], tp.v[1], tp.v[2]};
    flcc_plan plan = nullptr;
    const auto t0 = Clock::now();
    flcc_result r = flcc_plan_create(&plan, op, im.dim, is, ts, &o);
    const double plan_s = seconds_since(t0);
    if (r != FLCC_SUCCESS) {
        std::fprintf(stderr, "flcc-bench: plan failed (%s) for method %s\n", flcc_result_string(r),
                     method.c_str());
        return 1;
    }
    flcc_size os;
    flcc_plan_output_size(plan, &os);
    const size_t in_n = size_t(is.h) * is.w * (im.dim == 3 ? is.d : 1);
    const size_t t_n = size_t(ts.h) * ts.w * (im.dim == 3 ? ts.d : 1);
    const size_t out_n = size_t(os.h) * os.w * os.d;
    float* image = frames.get(in_n * c.frames);
    float* templ = static_cast<float*>(flcc_malloc(t_n * sizeof(float)));
    float* out = static_cast<float*>(flcc_malloc(out_n * c.frames * sizeof(float)));
    if (!image || !templ || !out) {
        std::fprintf(stderr, "flcc-bench: out of memory\n");
        flcc_free(templ);
        flcc_free(out);
        flcc_destroy(plan);
        return 1;
    }
    std::mt19937 rng(2);
    std::uniform_real_distribution<float> u(0.f, 1.f);
    for (size_t i = 0; i < t_n; ++i) templ[i] = u(rng);
    float* host_image = image;
    float* host_out = out;
    // SINGLE: each repeat is a new template (one value nudged), so template work is timed too.
    constexpr int kVariants = 7;
    std::vector<float*> device_templ;   // device-resident runs: the variants, made beforehand
#ifdef FLCC_BENCH_CUDA
    if (c.memory == "device") {   // device-resident frames and template: the exec moves no data over PCIe
        if (cudaMalloc(&image, in_n * c.frames * sizeof(float)) != cudaSuccess ||
            cudaMalloc(&out, out_n * c.frames * sizeof(float)) != cudaSuccess ||
            cudaMemcpy(image, host_image, in_n * c.frames * sizeof(float), cudaMemcpyHostToDevice) != cudaSuccess) {
            std::fprintf(stderr, "flcc-bench: device memory\n");
            return 1;
        }
        const float first = templ[0];
        for (int v = 0; v < kVariants; ++v) {
            float* d = nullptr;
            templ[0] = o.type == FLCC_SINGLE ? float(v) * 0.125f : first;
            if (cudaMalloc(&d, t_n * sizeof(float)) != cudaSuccess ||
                cudaMemcpy(d, templ, t_n * sizeof(float), cudaMemcpyHostToDevice) != cudaSuccess) {
                std::fprintf(stderr, "flcc-bench: device memory\n");
                return 1;
            }
            device_templ.push_back(d);
        }
        templ[0] = first;
    }
#endif

    auto exec = [&](int rep) {
        const float* tp = templ;
        if (!device_templ.empty()) tp = device_templ[size_t(rep % kVariants)];
        else if (o.type == FLCC_SINGLE) templ[0] = float(rep % kVariants) * 0.125f;
        return op == FLCC_CONV ? flcc_conv_exec(plan, image, tp, out, c.frames)
                               : flcc_lcorr_exec(plan, image, tp, out, c.frames);
    };
    std::vector<double> t;
#ifdef FLCC_BENCH_CUDA
    // --timing events: the plan bound to a stream of ours (flcc_plan_set_stream, so the exec is
    // asynchronous on device buffers) and each exec timed between two CUDA events on it, as
    // npp_bench and gpu_peers.py time the peers; the status is collected after each repeat.
    cudaStream_t stream = nullptr;
    cudaEvent_t e0 = nullptr, e1 = nullptr;
    if (c.timing == "events") {
        if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess ||
            cudaEventCreate(&e0) != cudaSuccess || cudaEventCreate(&e1) != cudaSuccess) {
            std::fprintf(stderr, "flcc-bench: CUDA stream or events\n");
            return 1;
        }
        r = flcc_plan_set_stream(plan, stream);
    }
    auto timed_exec = [&](int rep) {
        if (!stream) return exec(rep);
        flcc_result e = cudaEventRecord(e0, stream) == cudaSuccess ? exec(rep) : FLCC_DEVICE_ERROR;
        if (e == FLCC_SUCCESS && cudaEventRecord(e1, stream) != cudaSuccess) e = FLCC_DEVICE_ERROR;
        const flcc_result s = flcc_plan_synchronize(plan);
        return e != FLCC_SUCCESS ? e : s;
    };
#else
    auto timed_exec = exec;
#endif
    for (int i = 0; i < c.warmup && r == FLCC_SUCCESS; ++i) r = timed_exec(i + 1000);
    for (int i = 0; i < c.repeats && r == FLCC_SUCCESS; ++i) {
        const auto s = Clock::now();
        r = timed_exec(i);
        double seconds = seconds_since(s);
#ifdef FLCC_BENCH_CUDA
        float ms = 0;
        if (stream && r == FLCC_SUCCESS) {
            if (cudaEventElapsedTime(&ms, e0, e1) != cudaSuccess) r = FLCC_DEVICE_ERROR;
            seconds = ms * 1e-3;
        }
#endif
        t.push_back(seconds / c.frames);
    }
#ifdef FLCC_BENCH_CUDA
    if (stream) {
        flcc_plan_set_stream(plan, nullptr);
        cudaEventDestroy(e0);
        cudaEventDestroy(e1);
        cudaStreamDestroy(stream);
    }
#endif
    if (r != FLCC_SUCCESS) {
        std::fprintf(stderr, "flcc-bench: exec failed (%s)\n", flcc_result_string(r));
        return 1;
    }
    std::sort(t.begin(), t.end());
    auto dims = [&](const Dims& d) {
        char b[64];
        if (im.dim == 2) std::snprintf(b, sizeof b, "[%d,%d]", d.v[0], d.v[1]);
        else std::snprintf(b, sizeof b, "[%d,%d,%d]", d.v[0], d.v[1], d.v[2]);
        return std::string(b);
    };
    std::printf("{\"bench\":\"flcc\",\"op\":\"%s\",\"dim\":%d,\"image\":%s,\"template\":%s,"
                "\"region\":\"%s\",\"type\":\"%s\",\"frames\":%d,\"platform\":\"%s\","
                "\"memory\":\"%s\",\"timing\":\"%s\",\"requested\":\"%s\",\"method\":\"%s\",\"rigor\":\"%s\",\"threads\":%d,"
                "\"plan_seconds\":%.6g,\"wisdom_import_seconds\":%.6g,"
                "\"seconds\":{\"median\":%.6g,\"min\":%.6g,\"max\":%.6g},"
                "\"repeats\":%d,\"machine\":%s,\"candidates\":%s}\n",
                c.op.c_str(), im.dim, dims(im).c_str(), dims(tp).c_str(), region_name(o.region),
                c.type.c_str(), c.frames, c.platform.c_str(), c.memory.c_str(), c.timing.c_str(), json_escape(method).c_str(),
                flcc_plan_method(plan), c.rigor.c_str(),
                c.threads ? c.threads : int(std::thread::hardware_concurrency()), plan_s,
                c.wisdom_import_s, t[t.size() / 2], t.front(), t.back(), c.repeats, machine.c_str(), candidates(plan).c_str());
    std::fflush(stdout);
#ifdef FLCC_BENCH_CUDA
    if (c.memory == "device") {
        cudaFree(image);
        cudaFree(out);
        for (float* d : device_templ) cudaFree(d);
    }
#endif
    flcc_free(templ);
    flcc_free(host_out);
    flcc_destroy(plan);
    return 0;
}

// Solvers that apply to the problem (forced planning succeeds, ESTIMATE, no timing).
std::vector<std::string> applicable(const Config& c, const Dims& im, const Dims& tp)
{
    std::vector<std::string> names;
    for (int i = 0; i < flcc_solver_count(); ++i) {
        flcc_options o;
        flcc_options_init(&o);
        o.region = c.region == "same" ? FLCC_SAME : c.region == "valid" ? FLCC_VALID : FLCC_FULL;
        o.platform = c.platform == "device" ? FLCC_DEVICE : c.platform == "any" ? FLCC_ANY : FLCC_HOST;
        o.rigor = FLCC_ESTIMATE;
        o.method = flcc_solver_name(i);
        o.threads = c.threads;
        flcc_plan p = nullptr;
        if (flcc_plan_create(&p, c.op == "conv" ? FLCC_CONV : FLCC_LCORR, im.dim,
                             flcc_size{im.v[0], im.v[1], im.v[2]},
                             flcc_size{tp.v[0], tp.v[1], tp.v[2]}, &o) == FLCC_SUCCESS)
            names.push_back(flcc_solver_name(i));
        flcc_destroy(p);
    }
    return names;
}

}  // namespace

int main(int argc, char** argv)
{
    CLI::App app{"flcc-bench: time FLCC convolution and LCC; one JSON line per measurement"};
    Config c;
    std::string images = "256x256", templates = "8";
    bool list = false;
    app.add_option("--op", c.op, "conv or lcorr")->check(CLI::IsMember({"conv", "lcorr"}));
    app.add_option("--image", images, "image sizes, HxW or HxWxD, comma separated");
    app.add_option("--template", templates, "template sizes (N = cube), comma separated");
    app.add_option("--region", c.region, "full, same or valid")->check(CLI::IsMember({"full", "same", "valid"}));
    app.add_option("--type", c.type, "single or stream")->check(CLI::IsMember({"single", "stream"}));
    app.add_option("--frames", c.frames, "frames per exec")->check(CLI::Range(1, 1 << 20));
    app.add_option("--platform", c.platform, "host, device or any")->check(CLI::IsMember({"host", "device", "any"}));
    app.add_option("--method", c.method, "auto, all, or a solver name");
    app.add_option("--memory", c.memory, "where frames live: host (page-locked) or device")
        ->check(CLI::IsMember({"host", "device"}));
    app.add_option("--timing", c.timing,
                   "wall: host clock around each (synchronous) exec; events: CUDA events around "
                   "each exec on a stream bound to the plan, as the GPU peers are timed "
                   "(needs --memory device)")
        ->check(CLI::IsMember({"wall", "events"}));
    app.add_option("--rigor", c.rigor, "measure or estimate")->check(CLI::IsMember({"measure", "estimate"}));
    app.add_option("--repeats", c.repeats, "timed repeats")->check(CLI::Range(1, 100000));
    app.add_option("--warmup", c.warmup, "untimed runs first")->check(CLI::Range(0, 1000));
    app.add_option("--threads", c.threads, "CPU threads (0 = all)")->check(CLI::Range(0, 4096));
    app.add_option("--wisdom", c.wisdom,
                   "import this wisdom file before planning (its time: wisdom_import_seconds)");
    app.add_flag("--list", list, "list the solvers of this build and exit");
    CLI11_PARSE(app, argc, argv);
    if (!c.wisdom.empty()) {
        const auto t0 = Clock::now();
        const flcc_result r = flcc_wisdom_import_file(c.wisdom.c_str());
        c.wisdom_import_s = seconds_since(t0);
        if (r != FLCC_SUCCESS) {
            std::fprintf(stderr, "flcc-bench: wisdom import failed (%s)\n", flcc_result_string(r));
            return 2;
        }
    }

    if (list) {
        for (int i = 0; i < flcc_solver_count(); ++i) std::printf("%s\n", flcc_solver_name(i));
        return 0;
    }
    std::string gpu = "null";
#ifdef FLCC_BENCH_CUDA
    cudaDeviceProp prop;
    int dev = 0;
    if (cudaGetDevice(&dev) == cudaSuccess && cudaGetDeviceProperties(&prop, dev) == cudaSuccess)
        gpu = "\"" + json_escape(prop.name) + "\"";
    else
        cudaGetLastError();
#endif
    if (c.timing == "events" && c.memory != "device") {
        std::fprintf(stderr, "flcc-bench: --timing events needs --memory device\n");
        return 2;
    }
    if (c.memory == "device" && gpu == "null") {
        std::fprintf(stderr, "flcc-bench: --memory device needs a CUDA build and a GPU\n");
        return 2;
    }
    char machine[768];
    std::snprintf(machine, sizeof machine, "{\"cpu\":\"%s\",\"hardware_threads\":%u,\"gpu\":%s}",
                  json_escape(cpu_model()).c_str(), std::thread::hardware_concurrency(), gpu.c_str());

    int failures = 0;
    InputFrames frames;
    for (const std::string& is : split(images, ',')) {
        Dims im;
        if (!parse_dims(is, im) || im.dim == 0) {
            std::fprintf(stderr, "flcc-bench: bad image size '%s'\n", is.c_str());
            return 2;
        }
        for (const std::string& ts : split(templates, ',')) {
            Dims tp;
            if (!parse_dims(ts, tp)) {
                std::fprintf(stderr, "flcc-bench: bad template size '%s'\n", ts.c_str());
                return 2;
            }
            if (tp.dim == 0) {
                tp.dim = im.dim;
                tp.v[1] = tp.v[0];
                tp.v[2] = im.dim == 3 ? tp.v[0] : 1;
            }
            if (tp.dim != im.dim) {
                std::fprintf(stderr, "flcc-bench: template '%s' and image '%s' differ in dimension\n",
                             ts.c_str(), is.c_str());
                return 2;
            }
            const std::vector<std::string> methods =
                c.method == "all" ? applicable(c, im, tp) : std::vector<std::string>{c.method};
            for (const std::string& m : methods) failures += run_one(c, im, tp, m, machine, frames);
        }
    }
    return failures == 0 ? 0 : 1;
}
