// The child process of test_alloc_failure's memory-limit tests: a fresh process (no worker
// threads yet) that limits its own address space to what it maps now plus the headroom given,
// then calls the library, and exits with a code: the parent checks that it never dies.
//
//   alloc_limit_child threads <MiB>   a plan asking for 64 threads: FLCC_ALLOC_FAILED naming a
//                                     worker thread (no room for a thread's stack), then, the
//                                     limit lifted, the same plan succeeds. Exit 0, else 1-5.
//   alloc_limit_child plan <MiB>      MEASURE-plans and executes an LCC on 4 threads. Exit 0 when
//                                     both succeed, 10 when either returns FLCC_ALLOC_FAILED
//                                     (nothing else allowed: 1-3).
//   alloc_limit_child reserve <MiB>   a small host Fourier plan with less headroom than FFTW's
//                                     planner reserve: FLCC_ALLOC_FAILED naming the reserve,
//                                     then, the limit lifted, success. Exit 0, else 1-5.
//
// Built twice: with FLCC linked statically (FLCC's FFTW allocator in effect), and, as
// alloc_limit_child_fftw_first, with libfftw3f ahead of libflcc in the lookup order (FFTW's
// own allocator in effect: FLCC then only checks that the reserve could be allocated). Each
// says which allocator FFTW uses; exit 77 when it is not the one the build meant.
#include "flcc.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <dlfcn.h>
#include <sys/resource.h>
#include <unistd.h>

extern "C" void* fftwf_malloc(size_t);
extern "C" void fftwf_free(void*);

namespace {

long long mapped_bytes()
{
    FILE* f = std::fopen("/proc/self/statm", "r");
    long long pages = 0;
    if (f != nullptr) {
        if (std::fscanf(f, "%lld", &pages) != 1) pages = 0;
        std::fclose(f);
    }
    return pages * sysconf(_SC_PAGESIZE);
}

bool limit(long long bytes)
{
    rlimit lim{};
    if (getrlimit(RLIMIT_AS, &lim) != 0) return false;
    lim.rlim_cur = bytes < 0 ? lim.rlim_max : rlim_t(bytes);
    return setrlimit(RLIMIT_AS, &lim) == 0;
}

int threads_case()
{
    flcc_options o;
    flcc_options_init(&o);
    o.platform = FLCC_HOST;
    o.method = "host.direct2.k3";
    o.threads = 64;
    flcc_plan plan = reinterpret_cast<flcc_plan>(&o);
    const flcc_result r = flcc_plan_create(&plan, FLCC_CONV, 2, {64, 64, 1}, {3, 3, 1}, &o);
    if (r != FLCC_ALLOC_FAILED || plan != nullptr) {
        std::fprintf(stderr, "threads: %s (%s)\n", flcc_result_string(r), flcc_last_error_detail());
        return 1;
    }
    if (std::strstr(flcc_last_error_detail(), "worker thread") == nullptr) {
        std::fprintf(stderr, "threads: detail \"%s\"\n", flcc_last_error_detail());
        return 2;
    }
    if (!limit(-1)) return 3;
    if (flcc_plan_create(&plan, FLCC_CONV, 2, {64, 64, 1}, {3, 3, 1}, &o) != FLCC_SUCCESS) return 4;
    return flcc_destroy(plan) == FLCC_SUCCESS ? 0 : 5;
}

int plan_case()
{
    const flcc_size image{600, 500, 1}, templ{24, 24, 1};
    flcc_options o;
    flcc_options_init(&o);
    o.platform = FLCC_HOST;
    o.threads = 4;
    flcc_plan plan = nullptr;
    flcc_result r = flcc_plan_create(&plan, FLCC_LCORR, 2, image, templ, &o);
    if (r == FLCC_ALLOC_FAILED) return plan == nullptr ? 10 : 1;
    if (r != FLCC_SUCCESS) {
        std::fprintf(stderr, "plan: %s (%s)\n", flcc_result_string(r), flcc_last_error_detail());
        return 2;
    }
    const size_t n = size_t(image.h) * size_t(image.w);
    const size_t m = size_t(image.h + templ.h - 1) * size_t(image.w + templ.w - 1);
    float* in = static_cast<float*>(std::malloc(n * sizeof(float)));
    float* t = static_cast<float*>(std::malloc(size_t(templ.h * templ.w) * sizeof(float)));
    float* out = static_cast<float*>(std::malloc(m * sizeof(float)));
    if (in == nullptr || t == nullptr || out == nullptr) {   // the caller's own memory: not ours
        flcc_destroy(plan);
        return 0;
    }
    for (size_t i = 0; i < n; ++i) in[i] = float(i % 17);
    for (int i = 0; i < templ.h * templ.w; ++i) t[i] = float(i % 5);
    r = flcc_lcorr_exec(plan, in, t, out, 1);
    flcc_destroy(plan);
    if (r == FLCC_SUCCESS) return 0;
    if (r == FLCC_ALLOC_FAILED) return 10;
    std::fprintf(stderr, "exec: %s (%s)\n", flcc_result_string(r), flcc_last_error_detail());
    return 3;
}

int reserve_case()
{
    flcc_options o;
    flcc_options_init(&o);
    o.platform = FLCC_HOST;
    o.method = "host.fourier2.t64";
    o.threads = 1;
    flcc_plan plan = reinterpret_cast<flcc_plan>(&o);
    const flcc_result r = flcc_plan_create(&plan, FLCC_CONV, 2, {16, 16, 1}, {3, 3, 1}, &o);
    if (r != FLCC_ALLOC_FAILED || plan != nullptr) {
        std::fprintf(stderr, "reserve: %s (%s)\n", flcc_result_string(r), flcc_last_error_detail());
        return 1;
    }
    if (std::strstr(flcc_last_error_detail(), "planner reserve") == nullptr) {
        std::fprintf(stderr, "reserve: detail \"%s\"\n", flcc_last_error_detail());
        return 2;
    }
    if (!limit(-1)) return 3;
    if (flcc_plan_create(&plan, FLCC_CONV, 2, {16, 16, 1}, {3, 3, 1}, &o) != FLCC_SUCCESS) return 4;
    return flcc_destroy(plan) == FLCC_SUCCESS ? 0 : 5;
}

// True when FFTW's kernel allocator, as the dynamic linker resolves it, is libfftw3f's own.
bool fftw_allocator_is_fftws()
{
    void* f = dlsym(RTLD_DEFAULT, "fftwf_kernel_malloc");
    Dl_info info{};
    return f != nullptr && dladdr(f, &info) != 0 && info.dli_fname != nullptr &&
           std::strstr(info.dli_fname, "fftw3f") != nullptr;
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc != 3) return 90;
    // The executable refers to FFTW itself, so that the fftw_first build needs libfftw3f first.
    fftwf_free(fftwf_malloc(16));
#ifdef FLCC_FFTW_FIRST
    if (!fftw_allocator_is_fftws()) return 77;
#else
    if (fftw_allocator_is_fftws()) return 77;
#endif
    if (!limit(mapped_bytes() + std::atoll(argv[2]) * (1ll << 20))) return 91;
    if (std::strcmp(argv[1], "threads") == 0) return threads_case();
    if (std::strcmp(argv[1], "plan") == 0) return plan_case();
    if (std::strcmp(argv[1], "reserve") == 0) return reserve_case();
    return 92;
}
