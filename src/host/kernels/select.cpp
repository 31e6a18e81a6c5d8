#include "host/kernels/kernel_set.h"

#include <cstdlib>
#include <cstring>

namespace flcc::host {

namespace {

// 0 = baseline, 1 = AVX2 + FMA, 2 = AVX-512 (F, VL, DQ, BW).
int cpu_level()
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw"))
        return 2;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return 1;
#endif
    return 0;
}

int env_cap()
{
    const char* e = std::getenv("FLCC_HOST_ISA");
    if (e == nullptr) return 2;
    if (std::strcmp(e, "baseline") == 0) return 0;
    if (std::strcmp(e, "avx2") == 0) return 1;
    return 2;
}

}  // namespace

int runnable_kernel_sets(const KernelSet* out[3])
{
    const int level = cpu_level();
    int n = 0;
    out[n++] = kernel_set_baseline();
    if (level >= 1 && kernel_set_avx2()) out[n++] = kernel_set_avx2();
    if (level >= 2 && kernel_set_avx512()) out[n++] = kernel_set_avx512();
    return n;
}

const KernelSet& select_kernel_set()
{
    static const KernelSet* chosen = [] {
        const KernelSet* sets[3];
        const int n = runnable_kernel_sets(sets);
        const int cap = env_cap();
        return sets[(n - 1) < cap ? n - 1 : cap];
    }();
    return *chosen;
}

}  // namespace flcc::host
