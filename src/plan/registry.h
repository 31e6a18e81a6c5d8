// The solver registry: one table of every solver of the backends present (plan/backend.h),
// like FFTW's solvtab.
#pragma once

#include "plan/backend.h"

namespace flcc {

// Every solver present, in a fixed order (host before device, direct before Fourier).
const SolverList& all_solvers();

// The solver with this name, or nullptr.
const Solver* find_solver(const char* name);

}  // namespace flcc
