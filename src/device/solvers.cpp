// The GPU solver family: registers the device solvers compiled into this build.
#include "plan/registry.h"

namespace flcc {

namespace device {
void register_direct_solvers(SolverList& list);
void register_fourier_solvers(SolverList& list);
void register_fourier_planes_solver(SolverList& list);
void register_fourier_rows_solver(SolverList& list);
void register_fourier_slabs_solver(SolverList& list);
}

void register_device_solvers(SolverList& list)
{
    device::register_direct_solvers(list);
    device::register_fourier_solvers(list);
    device::register_fourier_planes_solver(list);
    device::register_fourier_rows_solver(list);
    device::register_fourier_slabs_solver(list);
}

}  // namespace flcc
