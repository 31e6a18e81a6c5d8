// The seam between the plan layer and the code that computes. A backend is one family of
// platforms built into the library (the host kernels, FFTW, CUDA). Each offers one Backend
// object: its solvers, its part of the configuration signature that wisdom carries, the wisdom
// it keeps itself (FFTW's), and, for a device backend, the device's runtime services. The plan
// layer knows backends through this interface alone.
#pragma once

#include "plan/batch_engine.h"
#include "plan/memory.h"
#include "plan/solver.h"

#include <cstddef>
#include <string>
#include <vector>

namespace flcc {

using SolverList = std::vector<const Solver*>;

// The runtime services of a device backend: which devices are usable, where a pointer lives,
// copies, device memory and page-locked host memory. Every call answers "no" (false, nullptr,
// host) rather than fail when no device is usable, and leaves no error pending in the runtime.
class DeviceRuntime {
public:
    virtual bool available(int ordinal) const = 0;   // -1: the current device
    virtual MemorySpace memory_space(const void* p) const = 0;
    virtual bool copy_to_host(void* dst, const void* device_src, size_t bytes) const = 0;
    virtual bool copy_to_device(void* device_dst, const void* src, size_t bytes) const = 0;
    virtual void* device_alloc(size_t bytes, int ordinal) const = 0;
    virtual void device_free(void* p) const = 0;
    virtual void* pinned_alloc(size_t bytes) const = 0;
    virtual void pinned_free(void* p) const = 0;

protected:
    ~DeviceRuntime() = default;
};

class Backend {
public:
    // Its solvers, in the registry's order (direct before Fourier).
    virtual void add_solvers(SolverList& list) const = 0;

    // Its part of the wisdom signature, with a leading space (" isa=avx2"), or "": what makes
    // a decision portable besides the solver names (an instruction set, a GPU model).
    virtual std::string signature() const { return std::string(); }

    // Wisdom it keeps itself, in a section of the wisdom text named wisdom_section() (nullptr:
    // none). check_wisdom says why a section's text cannot be imported ("" when it can);
    // imported text is read at once (import_wisdom, false when refused) or when next needed
    // (defer_wisdom, for a wisdom file read at the first plan).
    virtual const char* wisdom_section() const { return nullptr; }
    virtual std::string export_wisdom() const { return std::string(); }
    virtual std::string check_wisdom(const std::string&) const { return "not supported"; }
    virtual bool import_wisdom(const std::string&) const { return false; }
    virtual void defer_wisdom(const std::string&) const {}
    virtual void forget_wisdom() const {}

    // The device runtime of a device backend; nullptr for host backends.
    virtual const DeviceRuntime* device_runtime() const { return nullptr; }

    // A device backend's engine for batch plans; FLCC_METHOD_NOT_APPLICABLE when it has none
    // or the spec is beyond it.
    virtual flcc_result make_batch_engine(const BatchEngineSpec&, std::unique_ptr<BatchEngine>&) const
    {
        return FLCC_METHOD_NOT_APPLICABLE;
    }

protected:
    ~Backend() = default;
};

// The backends of this build that are present in this process, in a fixed order (host, FFTW,
// CUDA). A backend built as a separate module (CUDA in the shared library) is loaded by the
// first call; when it cannot be loaded (no CUDA libraries on the machine), it is absent.
const std::vector<const Backend*>& backends();

// The device runtime of the backends present, or nullptr when none has one.
const DeviceRuntime* device_runtime();

// True when a solver of this name belongs to a backend that this build has but that could not
// be loaded (a "device." solver without the CUDA module): such a method needs a device.
bool solver_of_missing_backend(const char* name);

}  // namespace flcc
