// Introspection of the host Fourier solvers (see fourier_solver.cpp).
#pragma once

#include <cstdint>

namespace flcc::host {

// How many times any Fourier executor of this process has transformed a template (one
// Executor::set_template call each). Tests use it to check that frames with an unchanged
// template do no template work.
int64_t fourier_template_preparations();

}  // namespace flcc::host
