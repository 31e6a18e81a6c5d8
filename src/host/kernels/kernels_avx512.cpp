// The host kernels compiled for avx512 (flags set per file in CMakeLists.txt).
#define FLCC_ISA_NS avx512
#define FLCC_VECTOR_BYTES 64
#include "host/kernels/kernel_set_impl.h"

namespace flcc::host {

const KernelSet* kernel_set_avx512()
{
    static const KernelSet set = avx512::make_kernel_set("avx512");
    return &set;
}

}  // namespace flcc::host
