// The host backend: the direct solvers on the SIMD kernels, with the kernel set in use (its
// instruction set) in the wisdom signature.
#include "host/kernels/kernel_set.h"
#include "plan/backend.h"

namespace flcc {

void register_host_direct(SolverList& list);   // host/direct_solver.cpp

namespace {

class HostBackend final : public Backend {
public:
    void add_solvers(SolverList& list) const override { register_host_direct(list); }
    std::string signature() const override
    {
        return std::string(" isa=") + host::select_kernel_set().isa;
    }
};

}  // namespace

const Backend& host_backend()
{
    static const HostBackend b;
    return b;
}

}  // namespace flcc
