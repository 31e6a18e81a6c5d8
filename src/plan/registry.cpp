#include "plan/registry.h"

#include <cstring>

namespace flcc {

const SolverList& all_solvers()
{
    static const SolverList list = [] {
        SolverList l;
        for (const Backend* b : backends()) b->add_solvers(l);
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
