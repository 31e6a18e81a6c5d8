// The CUDA backend: the GPU solver families, the batch plans' engine, the GPU model in the
// wisdom signature, and the CUDA runtime services. The static library links it in (cuda_backend); the shared library
// loads it from the module libflcc_cuda.so (flcc_cuda_backend), so that a machine without
// CUDA's libraries can still load the library and plan on the host.
#include "device/runtime.h"
#include "plan/backend.h"

#include <cstring>

namespace flcc {

namespace device {
void register_direct_solvers(SolverList& list);
void register_fourier_solvers(SolverList& list);
void register_fourier_box_solver(SolverList& list);
void register_fourier_planes_solver(SolverList& list);
void register_fourier_rows_solver(SolverList& list);
void register_fourier_slabs_solver(SolverList& list);
flcc_result make_batch_engine(const BatchEngineSpec& s, std::unique_ptr<BatchEngine>& out);

namespace {

class CudaBackend final : public Backend {
public:
    void add_solvers(SolverList& list) const override
    {
        register_direct_solvers(list);
        register_fourier_solvers(list);
        register_fourier_box_solver(list);
        register_fourier_planes_solver(list);
        register_fourier_rows_solver(list);
        register_fourier_slabs_solver(list);
    }
    std::string signature() const override { return gpu_signature(); }
    const DeviceRuntime* device_runtime() const override { return &runtime_; }
    flcc_result make_batch_engine(const BatchEngineSpec& s,
                                  std::unique_ptr<BatchEngine>& out) const override
    {
        return device::make_batch_engine(s, out);
    }

private:
    CudaRuntime runtime_;
};

}  // namespace
}  // namespace device

const Backend& cuda_backend()
{
    static const device::CudaBackend b;
    return b;
}

}  // namespace flcc

// The module's entry point: the backend, when the module was built with the loading library's
// version (a module from another build is refused: the two share C++ types).
extern "C" __attribute__((visibility("default"))) const flcc::Backend* flcc_cuda_backend(
    const char* version)
{
    if (version == nullptr || std::strcmp(version, FLCC_VERSION_STRING) != 0) return nullptr;
    return &flcc::cuda_backend();
}
