// Prints a digest (FNV-1a over the output bytes) of every host solver's output for a fixed set
// of problems and data, one line per (problem, data, solver). Two builds compute bit-identical
// results exactly when their digests are equal, so comparing the output of two builds (GCC and
// Clang, plain and sanitized) checks that the compiler does not change a single bit.
//
//   flcc_digest [FFTW_WISDOM_FILE]
//
// FFTW_MEASURE picks FFTW's algorithms by timing, and two algorithms round differently, so the
// Fourier solvers' bits depend on the run unless both runs use the same FFTW wisdom: with a file
// argument, the wisdom is read from the file when it exists and written to it otherwise.
// FLCC_HOST_ISA selects the kernel set as usual; run once per set.
#include "flcc.h"
#include "host/real_fft.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

uint64_t fnv1a(const void* data, size_t bytes)
{
    const unsigned char* p = static_cast<const unsigned char*>(data);
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

size_t elems(int dim, flcc_size s) { return size_t(s.h) * size_t(s.w) * size_t(dim == 3 ? s.d : 1); }

// Data sets: each exercises another path of the window sums (guarded float sums, centring far
// from the mean and its recomputation, exact integer sums, constant panels).
enum Data { uniform, offset, uint16, flat_half, n_data };
const char* data_names[] = {"uniform", "offset1e4", "uint16", "flat_half"};

std::vector<float> make(Data kind, size_t n, uint32_t seed)
{
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    std::normal_distribution<float> g(0.0f, 1.0f);
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) {
        switch (kind) {
        case uniform: v[i] = u(rng); break;
        case offset: v[i] = 1e4f + g(rng); break;
        case uint16: v[i] = float(rng() % 65536); break;
        default: v[i] = i < n / 2 ? 7.0f : u(rng); break;
        }
    }
    return v;
}

struct Case {
    int dim;
    flcc_size image, templ;
};

}  // namespace

int main(int argc, char** argv)
{
    const char* wisdom_path = argc > 1 ? argv[1] : nullptr;
    bool wisdom_read = false;
    if (wisdom_path != nullptr) {
        std::ifstream f(wisdom_path);
        if (f) {
            std::stringstream ss;
            ss << f.rdbuf();
            if (!flcc::host::import_fft_wisdom(ss.str())) {
                std::fprintf(stderr, "flcc_digest: FFTW refused the wisdom in %s\n", wisdom_path);
                return 2;
            }
            wisdom_read = true;
        }
    }

    const std::vector<Case> cases = {
        {2, {150, 131, 1}, {1, 1, 1}},  {2, {150, 131, 1}, {2, 2, 1}},   {2, {150, 131, 1}, {3, 3, 1}},
        {2, {150, 131, 1}, {4, 4, 1}},  {2, {150, 131, 1}, {5, 7, 1}},   {2, {150, 131, 1}, {8, 8, 1}},
        {2, {150, 131, 1}, {13, 13, 1}}, {2, {150, 131, 1}, {16, 16, 1}}, {2, {150, 131, 1}, {17, 3, 1}},
        {2, {150, 131, 1}, {32, 32, 1}}, {2, {70, 300, 1}, {33, 20, 1}},  {2, {9, 11, 1}, {12, 14, 1}},
        {3, {20, 23, 19}, {1, 1, 1}},   {3, {20, 23, 19}, {2, 3, 4}},    {3, {20, 23, 19}, {4, 4, 4}},
        {3, {20, 23, 19}, {7, 5, 3}},   {3, {18, 16, 21}, {10, 10, 10}}, {3, {5, 6, 7}, {6, 8, 5}},
    };
    const int count = 2;
    uint64_t all = 1469598103934665603ull;
    int lines = 0;
    for (const Case& c : cases)
        for (flcc_op op : {FLCC_CONV, FLCC_LCORR})
            for (flcc_region region : {FLCC_FULL, FLCC_SAME, FLCC_VALID}) {
                const size_t in_n = elems(c.dim, c.image), t_n = elems(c.dim, c.templ);
                for (int d = 0; d < n_data; ++d) {
                    if (op == FLCC_CONV && d != uniform && d != uint16) continue;
                    const std::vector<float> image = make(Data(d), in_n * count, 17u * d + 1);
                    const std::vector<float> templ = make(Data(d == flat_half ? uniform : d), t_n, 99u + d);
                    for (int s = 0; s < flcc_solver_count(); ++s) {
                        const char* name = flcc_solver_name(s);
                        if (std::strncmp(name, "host.", 5) != 0) continue;
                        flcc_options o;
                        flcc_options_init(&o);
                        o.platform = FLCC_HOST;
                        o.region = region;
                        o.rigor = FLCC_ESTIMATE;
                        o.threads = 2;
                        o.method = name;
                        flcc_plan plan = nullptr;
                        const flcc_result pr = flcc_plan_create(&plan, op, c.dim, c.image, c.templ, &o);
                        if (pr == FLCC_METHOD_NOT_APPLICABLE || pr == FLCC_INVALID_SIZE) continue;
                        char head[160];
                        std::snprintf(head, sizeof head, "%s %dd %dx%dx%d t%dx%dx%d r%d %s %s",
                                      op == FLCC_CONV ? "conv" : "lcorr", c.dim, c.image.h,
                                      c.image.w, c.image.d, c.templ.h, c.templ.w, c.templ.d,
                                      int(region), data_names[d], name);
                        uint64_t h = 0;
                        flcc_result er = pr;
                        if (pr == FLCC_SUCCESS) {
                            flcc_size os;
                            flcc_plan_output_size(plan, &os);
                            std::vector<float> out(elems(c.dim, os) * count);
                            er = op == FLCC_CONV
                                     ? flcc_conv_exec(plan, image.data(), templ.data(), out.data(), count)
                                     : flcc_lcorr_exec(plan, image.data(), templ.data(), out.data(), count);
                            h = fnv1a(out.data(), out.size() * sizeof(float));
                            flcc_destroy(plan);
                        }
                        std::printf("%s %d %016llx\n", head, int(er), (unsigned long long)h);
                        all = (all ^ h ^ uint64_t(er)) * 1099511628211ull;
                        ++lines;
                    }
                }
            }
    std::printf("total %d %016llx\n", lines, (unsigned long long)all);
    if (wisdom_path != nullptr && !wisdom_read) {
        std::ofstream f(wisdom_path);
        f << flcc::host::export_fft_wisdom();
        if (!f) {
            std::fprintf(stderr, "flcc_digest: cannot write %s\n", wisdom_path);
            return 2;
        }
    }
    return 0;
}
