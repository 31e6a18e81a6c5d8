// The host kernels compiled for avx2 (flags set per file in CMakeLists.txt).
#define FLCC_ISA_NS avx2
#define FLCC_VECTOR_BYTES 32
#include "host/kernels/kernel_set_impl.h"

namespace flcc::host {

const KernelSet* kernel_set_avx2()
{
    static const KernelSet set = avx2::make_kernel_set("avx2");
    return &set;
}

}  // namespace flcc::host
