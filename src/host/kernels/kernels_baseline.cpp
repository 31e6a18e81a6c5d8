// The host kernels compiled for baseline (flags set per file in CMakeLists.txt).
#define FLCC_ISA_NS baseline
#define FLCC_VECTOR_BYTES 16
#include "host/kernels/kernel_set_impl.h"

namespace flcc::host {

const KernelSet* kernel_set_baseline()
{
    static const KernelSet set = baseline::make_kernel_set("baseline");
    return &set;
}

}  // namespace flcc::host
