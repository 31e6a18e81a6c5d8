// The solver registry: one table of every solver compiled into this build, assembled from the
// solver families (each family exports one register function, like FFTW's solvtab).
#pragma once

#include "plan/solver.h"

#include <vector>

namespace flcc {

using SolverList = std::vector<const Solver*>;

// Every solver of this build, in a fixed order (host before device, direct before Fourier).
const SolverList& all_solvers();

// The solver with this name, or nullptr.
const Solver* find_solver(const char* name);

// Family register functions (defined by the families compiled into this build).
void register_host_direct(SolverList& list);
void register_host_fourier(SolverList& list);
void register_device_solvers(SolverList& list);

}  // namespace flcc
