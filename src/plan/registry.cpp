#include "plan/registry.h"

#include <cstring>

namespace flcc {

const SolverList& all_solvers()
{
    static const SolverList list = [] {
        SolverList l;
#ifdef FLCC_HAVE_HOST
        register_host_direct(l);
#ifdef FLCC_HAVE_FFTW
        register_host_fourier(l);
#endif
#endif
#ifdef FLCC_HAVE_CUDA
        register_device_solvers(l);
#endif
        return l;
    }();
    return list;
}

const Solver* find_solver(const char* name)
{
    for (const Solver* s : all_solvers())
        if (std::strcmp(s->name(), name) == 0) return s;
    return nullptr;
}

}  // namespace flcc
