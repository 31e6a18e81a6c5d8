// The GPU solver family: registers the device solvers compiled into this build.
#include "plan/registry.h"

namespace flcc {

void register_device_solvers(SolverList&)
{
    // The GPU solvers (generated direct kernels, cuFFT) register here as they are built.
}

}  // namespace flcc
