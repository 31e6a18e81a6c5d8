// npp_bench: times NPP's normalised cross-correlation (nppiCrossCorr{Full,Same,Valid}_NormLevel,
// 32f C1, = LCC / TM_CCOEFF_NORMED) on device-resident data; one JSON line per measurement in
// flcc-bench's schema ("bench":"npp.CrossCorrFull_NormLevel_32f", ...).
//
//   npp_bench --image 2000x2000 --template 4,8,16,32 --region full,valid --repeats 20 --check
//
// Build (bench/run_gpu.sh does it):
//   nvcc -O2 -std=c++17 -arch=sm_90 bench/gpu/npp_bench.cpp -o npp_bench -lnppist -lnppc
// (the image-proximity functions are in libnppist, the stream-context helpers in libnppc).
//
// Inputs are flcc-bench's (std::mt19937(1), uniform [0, 1), image first, then the template),
// copied once to pitched device memory. The scratch buffer is sized by
// nppi{Full,Same,Valid}NormLevelGetBufferHostSize_32f_C1R_Ctx and allocated once, outside the
// timed region, as a user of NPP would. Each repeat is one NPP call between two CUDA events on
// a non-default stream; the median over --repeats after --warmup calls is reported. NPP keeps no
// template state, so SINGLE and STREAM are the same thing here: type is "single". --timing wall
// times each call and a cudaStreamSynchronize on the host clock instead (what a caller that waits
// for each result sees; "timing" in the JSON says which).
//
// --check compares sampled output positions (interior and border) with a double-precision
// reference computed on the host with FLCC's semantics (zero-padded image, the padded zeros
// being data, in the full/same regions) and records the largest differences: it shows whether
// the NPP and FLCC regions are the same, it does not stop the run.
#include "../bench_common.h"

#include <cuda_runtime.h>
#include <npp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
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

#define CUDA_OK(x)                                                                                \
    do {                                                                                          \
        cudaError_t e_ = (x);                                                                     \
        if (e_ != cudaSuccess) {                                                                  \
            std::fprintf(stderr, "npp_bench: %s failed: %s (%s:%d)\n", #x, cudaGetErrorString(e_), \
                         __FILE__, __LINE__);                                                     \
            std::exit(1);                                                                         \
        }                                                                                         \
    } while (0)

#define NPP_OK(x)                                                                                 \
    do {                                                                                          \
        NppStatus s_ = (x);                                                                       \
        if (s_ != NPP_SUCCESS) {                                                                  \
            std::fprintf(stderr, "npp_bench: %s failed: NppStatus %d (%s:%d)\n", #x, int(s_),      \
                         __FILE__, __LINE__);                                                     \
            std::exit(1);                                                                         \
        }                                                                                         \
    } while (0)

// "2000x2000" -> {h, w}; "16" -> {16, 16}
bool parse_hw(const std::string& s, int& h, int& w)
{
    const auto p = split(s, 'x');
    if (p.empty() || p.size() > 2) return false;
    h = std::atoi(p[0].c_str());
    w = p.size() == 2 ? std::atoi(p[1].c_str()) : h;
    return h > 0 && w > 0;
}

// The buffer-size queries took `int*` in older NPP releases and take `size_t*` in newer ones:
// deduce the type from the function itself so this compiles against either.
template <typename T>
NppStatus buffer_size(NppStatus (*fn)(NppiSize, T*, NppStreamContext), NppiSize roi,
                      NppStreamContext ctx, size_t* out)
{
    T v = 0;
    const NppStatus s = fn(roi, &v, ctx);
    *out = size_t(v);
    return s;
}

NppStreamContext make_context(cudaStream_t stream)
{
    NppStreamContext c;
    std::memset(&c, 0, sizeof c);   // fields added by later NPP releases stay zero
    int dev = 0;
    CUDA_OK(cudaGetDevice(&dev));
    c.hStream = stream;
    c.nCudaDeviceId = dev;
    CUDA_OK(cudaDeviceGetAttribute(&c.nMultiProcessorCount, cudaDevAttrMultiProcessorCount, dev));
    CUDA_OK(cudaDeviceGetAttribute(&c.nMaxThreadsPerMultiProcessor,
                                   cudaDevAttrMaxThreadsPerMultiProcessor, dev));
    CUDA_OK(cudaDeviceGetAttribute(&c.nMaxThreadsPerBlock, cudaDevAttrMaxThreadsPerBlock, dev));
    int smem = 0;
    CUDA_OK(cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlock, dev));
    c.nSharedMemPerBlock = size_t(smem);
    CUDA_OK(cudaDeviceGetAttribute(&c.nCudaDevAttrComputeCapabilityMajor,
                                   cudaDevAttrComputeCapabilityMajor, dev));
    CUDA_OK(cudaDeviceGetAttribute(&c.nCudaDevAttrComputeCapabilityMinor,
                                   cudaDevAttrComputeCapabilityMinor, dev));
    CUDA_OK(cudaStreamGetFlags(stream, &c.nStreamFlags));
    return c;
}

// FLCC's LCC at output (i, j) of the full region, in double: template origin at image
// (i - (th-1), j - (tw-1)), image zero outside, the padded zeros being data.
double lcc_full_ref(const std::vector<float>& S, int h, int w, const std::vector<float>& T, int th,
                    int tw, int i, int j)
{
    const double n = double(th) * tw;
    double tm = 0;
    for (float v : T) tm += v;
    tm /= n;
    double s1 = 0, s2 = 0, st = 0, tt = 0;
    for (int a = 0; a < th; ++a)
        for (int b = 0; b < tw; ++b) {
            const int y = i - (th - 1) + a, x = j - (tw - 1) + b;
            const double s = (y >= 0 && y < h && x >= 0 && x < w) ? S[size_t(y) * w + x] : 0.0;
            const double t = T[size_t(a) * tw + b] - tm;
            s1 += s;
            s2 += s * s;
            st += s * t;
            tt += t * t;
        }
    const double var = s2 - s1 * s1 / n;
    return (var <= 0 || tt <= 0) ? 0.0 : st / std::sqrt(var * tt);
}

struct Region {
    const char* name;   // full, same, valid
    const char* npp;    // the NPP function's name, for the JSON
};

}  // namespace

int main(int argc, char** argv)
{
    std::string images = "2000x2000", templates = "4,8,16,32", regions = "full,valid";
    int repeats = 20, warmup = 3;
    bool check = false, wall = false;
    for (int i = 1; i < argc; ++i) {
        const std::string k = argv[i];
        auto val = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "npp_bench: %s needs a value\n", k.c_str());
                std::exit(2);
            }
            return argv[++i];
        };
        if (k == "--image") images = val();
        else if (k == "--template") templates = val();
        else if (k == "--region") regions = val();
        else if (k == "--repeats") repeats = std::max(1, std::atoi(val().c_str()));
        else if (k == "--warmup") warmup = std::max(0, std::atoi(val().c_str()));
        else if (k == "--check") check = true;
        else if (k == "--timing") {
            const std::string v = val();
            if (v != "events" && v != "wall") {
                std::fprintf(stderr, "npp_bench: --timing events or wall\n");
                return 2;
            }
            wall = v == "wall";
        }
        else {
            std::fprintf(stderr,
                         "usage: npp_bench [--image HxW,..] [--template T|HxW,..] "
                         "[--region full,same,valid] [--repeats N] [--warmup N] [--timing events|wall] "
                         "[--check]\n");
            return k == "--help" || k == "-h" ? 0 : 2;
        }
    }

    int dev = 0;
    CUDA_OK(cudaGetDevice(&dev));
    cudaDeviceProp prop;
    CUDA_OK(cudaGetDeviceProperties(&prop, dev));
    int rt = 0, drv = 0;
    CUDA_OK(cudaRuntimeGetVersion(&rt));
    CUDA_OK(cudaDriverGetVersion(&drv));
    const NppLibraryVersion* nv = nppGetLibVersion();
    char machine[1024], versions[256];
    std::snprintf(machine, sizeof machine,
                  "{\"cpu\":\"%s\",\"hardware_threads\":%u,\"gpu\":\"%s\"}",
                  json_escape(cpu_model()).c_str(), std::thread::hardware_concurrency(),
                  json_escape(prop.name).c_str());
    std::snprintf(versions, sizeof versions,
                  "{\"npp\":\"%d.%d.%d\",\"cuda_runtime\":%d,\"cuda_driver\":%d}", nv->major,
                  nv->minor, nv->build, rt, drv);

    cudaStream_t stream;
    CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    const NppStreamContext ctx = make_context(stream);
    cudaEvent_t e0, e1;
    CUDA_OK(cudaEventCreate(&e0));
    CUDA_OK(cudaEventCreate(&e1));

    int failures = 0;
    for (const std::string& is : split(images, ',')) {
        int h, w;
        if (!parse_hw(is, h, w)) {
            std::fprintf(stderr, "npp_bench: bad image size '%s'\n", is.c_str());
            return 2;
        }
        for (const std::string& ts : split(templates, ',')) {
            int th, tw;
            if (!parse_hw(ts, th, tw)) {
                std::fprintf(stderr, "npp_bench: bad template size '%s'\n", ts.c_str());
                return 2;
            }
            // flcc-bench's inputs: image first, then the template, one generator
            std::mt19937 rng(1);
            std::uniform_real_distribution<float> u(0.f, 1.f);
            std::vector<float> S(size_t(h) * w), T(size_t(th) * tw);
            for (float& v : S) v = u(rng);
            for (float& v : T) v = u(rng);

            float *dS, *dT, *dO;
            size_t pS, pT, pO;
            const int oh_max = h + th - 1, ow_max = w + tw - 1;   // the full output, largest
            CUDA_OK(cudaMallocPitch(reinterpret_cast<void**>(&dS), &pS, size_t(w) * 4, h));
            CUDA_OK(cudaMallocPitch(reinterpret_cast<void**>(&dT), &pT, size_t(tw) * 4, th));
            CUDA_OK(cudaMallocPitch(reinterpret_cast<void**>(&dO), &pO, size_t(ow_max) * 4, oh_max));
            CUDA_OK(cudaMemcpy2D(dS, pS, S.data(), size_t(w) * 4, size_t(w) * 4, h,
                                 cudaMemcpyHostToDevice));
            CUDA_OK(cudaMemcpy2D(dT, pT, T.data(), size_t(tw) * 4, size_t(tw) * 4, th,
                                 cudaMemcpyHostToDevice));
            const NppiSize src{w, h}, tpl{tw, th};

            for (const std::string& rs : split(regions, ',')) {
                int oh, ow, oy;   // output extent and its offset into the full region
                size_t scratch_bytes = 0, alt = 0;
                Region reg;
                // Which ROI the size query wants is not spelled out by NPP's documentation
                // (source or destination): ask for both and keep the larger.
                if (rs == "full") {
                    reg = {"full", "nppiCrossCorrFull_NormLevel_32f_C1R_Ctx"};
                    oh = h + th - 1, ow = w + tw - 1, oy = 0;
                    NPP_OK(buffer_size(nppiFullNormLevelGetBufferHostSize_32f_C1R_Ctx, src, ctx, &scratch_bytes));
                    NPP_OK(buffer_size(nppiFullNormLevelGetBufferHostSize_32f_C1R_Ctx, NppiSize{ow, oh}, ctx, &alt));
                } else if (rs == "same") {
                    reg = {"same", "nppiCrossCorrSame_NormLevel_32f_C1R_Ctx"};
                    oh = h, ow = w, oy = -1;
                    NPP_OK(buffer_size(nppiSameNormLevelGetBufferHostSize_32f_C1R_Ctx, src, ctx, &scratch_bytes));
                    alt = scratch_bytes;
                } else if (rs == "valid") {
                    reg = {"valid", "nppiCrossCorrValid_NormLevel_32f_C1R_Ctx"};
                    if (th > h || tw > w) continue;
                    oh = h - th + 1, ow = w - tw + 1, oy = th - 1;
                    NPP_OK(buffer_size(nppiValidNormLevelGetBufferHostSize_32f_C1R_Ctx, src, ctx, &scratch_bytes));
                    NPP_OK(buffer_size(nppiValidNormLevelGetBufferHostSize_32f_C1R_Ctx, NppiSize{ow, oh}, ctx, &alt));
                } else {
                    std::fprintf(stderr, "npp_bench: bad region '%s'\n", rs.c_str());
                    return 2;
                }
                scratch_bytes = std::max(scratch_bytes, alt);
                Npp8u* scratch = nullptr;
                if (scratch_bytes) CUDA_OK(cudaMalloc(&scratch, scratch_bytes));

                auto call = [&]() -> NppStatus {
                    if (rs == "full")
                        return nppiCrossCorrFull_NormLevel_32f_C1R_Ctx(dS, int(pS), src, dT, int(pT), tpl, dO, int(pO), scratch, ctx);
                    if (rs == "same")
                        return nppiCrossCorrSame_NormLevel_32f_C1R_Ctx(dS, int(pS), src, dT, int(pT), tpl, dO, int(pO), scratch, ctx);
                    return nppiCrossCorrValid_NormLevel_32f_C1R_Ctx(dS, int(pS), src, dT, int(pT), tpl, dO, int(pO), scratch, ctx);
                };
                NppStatus st = NPP_SUCCESS;
                for (int i = 0; i < warmup && st == NPP_SUCCESS; ++i) st = call();
                CUDA_OK(cudaStreamSynchronize(stream));
                std::vector<double> t;
                for (int i = 0; i < repeats && st == NPP_SUCCESS; ++i) {
                    if (wall) {   // what a caller that waits for each result sees
                        const auto s = std::chrono::steady_clock::now();
                        st = call();
                        CUDA_OK(cudaStreamSynchronize(stream));
                        t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - s).count());
                        continue;
                    }
                    CUDA_OK(cudaEventRecord(e0, stream));
                    st = call();
                    CUDA_OK(cudaEventRecord(e1, stream));
                    CUDA_OK(cudaEventSynchronize(e1));
                    float ms = 0;
                    CUDA_OK(cudaEventElapsedTime(&ms, e0, e1));
                    t.push_back(ms * 1e-3);
                }
                if (st != NPP_SUCCESS) {
                    std::fprintf(stderr, "npp_bench: %s failed: NppStatus %d for %dx%d * %dx%d\n",
                                 reg.npp, int(st), h, w, th, tw);
                    ++failures;
                    if (scratch) cudaFree(scratch);
                    continue;
                }
                std::sort(t.begin(), t.end());

                std::string check_json;
                if (check) {
                    // same region: NPP centres the template at floor(T/2) (its documentation's
                    // anchor); FLCC's 'same' starts at full index floor((T-1)/2). Both are
                    // tried: the JSON says which offset matches.
                    std::vector<float> O(size_t(oh) * ow);
                    CUDA_OK(cudaMemcpy2D(O.data(), size_t(ow) * 4, dO, pO, size_t(ow) * 4, oh,
                                         cudaMemcpyDeviceToHost));
                    std::mt19937 pick(7);
                    std::vector<std::pair<int, int>> pts;
                    for (int k = 0; k < 200; ++k)
                        pts.push_back({int(pick() % unsigned(oh)), int(pick() % unsigned(ow))});
                    for (int k = 0; k < std::min(oh, ow); k += std::max(1, std::min(oh, ow) / 16))
                        pts.push_back({k, 0}), pts.push_back({0, k}), pts.push_back({oh - 1, k});
                    char b[256];
                    auto err_at = [&](int offy, int offx, bool border) {
                        double m = 0;
                        for (auto [i, j] : pts) {
                            const bool is_border = i < th || j < tw || i >= oh - th || j >= ow - tw;
                            if (is_border != border) continue;
                            const double r = lcc_full_ref(S, h, w, T, th, tw, i + offy, j + offx);
                            m = std::max(m, std::fabs(double(O[size_t(i) * ow + j]) - r));
                        }
                        return m;
                    };
                    if (oy >= 0) {
                        const int ox = rs == "valid" ? tw - 1 : 0;
                        std::snprintf(b, sizeof b,
                                      ",\"check\":{\"max_abs_diff_interior\":%.3g,"
                                      "\"max_abs_diff_border\":%.3g}",
                                      err_at(oy, ox, false), err_at(oy, ox, true));
                    } else {
                        std::snprintf(b, sizeof b,
                                      ",\"check\":{\"flcc_same_offset\":%.3g,\"centre_offset\":%.3g}",
                                      std::max(err_at((th - 1) / 2, (tw - 1) / 2, false), err_at((th - 1) / 2, (tw - 1) / 2, true)),
                                      std::max(err_at(th / 2, tw / 2, false), err_at(th / 2, tw / 2, true)));
                    }
                    check_json = b;
                }
                const double med = t[t.size() / 2];
                std::printf("{\"bench\":\"npp.CrossCorr%s_NormLevel_32f\",\"op\":\"lcorr\",\"dim\":2,"
                            "\"image\":[%d,%d],\"template\":[%d,%d],\"region\":\"%s\","
                            "\"type\":\"single\",\"frames\":1,\"platform\":\"device\","
                            "\"requested\":\"npp\",\"method\":\"%s\",\"rigor\":\"n/a\",\"threads\":0,"
                            "\"plan_seconds\":0,\"seconds\":{\"median\":%.6g,\"min\":%.6g,\"max\":%.6g},"
                            "\"repeats\":%d,\"timing\":\"%s\",\"scratch_bytes\":%zu,\"data\":\"device-resident\","
                            "\"machine\":%s,\"versions\":%s%s}\n",
                            rs == "full" ? "Full" : rs == "same" ? "Same" : "Valid", h, w, th, tw,
                            reg.name, reg.npp, med, t.front(), t.back(), repeats, wall ? "wall" : "events", scratch_bytes,
                            machine, versions, check_json.c_str());
                std::fflush(stdout);
                if (scratch) CUDA_OK(cudaFree(scratch));
            }
            CUDA_OK(cudaFree(dS));
            CUDA_OK(cudaFree(dT));
            CUDA_OK(cudaFree(dO));
        }
    }
    CUDA_OK(cudaEventDestroy(e0));
    CUDA_OK(cudaEventDestroy(e1));
    CUDA_OK(cudaStreamDestroy(stream));
    return failures ? 1 : 0;
}
