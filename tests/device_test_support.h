// Shared helpers of the GPU test programs (test_device_*.cpp): skipping without a usable GPU,
// plans forced to a GPU solver, arrays in device memory, and the LCC check against the float64
// reference.
#pragma once

#include "helpers.h"

#include <catch2/catch.hpp>

#include <cuda_runtime.h>

#include <string>
#include <vector>

namespace dt {

// True (after a WARN saying so) when no usable GPU is present: the test case then returns.
bool skip_without_gpu();

// False in a GPU-only build (FLCC_WITH_HOST=OFF).
bool have_host_solvers();

// Run options forcing GPU solver `name` (which must outlive them).
th::RunOptions device_opts(const std::string& name);

// An LCC output against the float64 reference: within 1e-5, and exactly 0 on every
// zero-variance panel (`flat`).
void check_lcc(const ref::Shape& s, const std::vector<double>& want, const std::vector<bool>& flat,
               const float* out);

template <class T>
struct DeviceArray {
    T* p = nullptr;
    size_t n = 0;
    explicit DeviceArray(size_t count) : n(count) { REQUIRE(cudaMalloc(&p, n * sizeof(T)) == cudaSuccess); }
    DeviceArray(const std::vector<T>& v) : DeviceArray(v.size())
    {
        REQUIRE(cudaMemcpy(p, v.data(), n * sizeof(T), cudaMemcpyHostToDevice) == cudaSuccess);
        // From pageable memory cudaMemcpy may return before its DMA ends, on the legacy stream,
        // which the plans' non-blocking streams do not wait for: the data is on the device only
        // once the legacy stream is done.
        REQUIRE(cudaStreamSynchronize(cudaStreamLegacy) == cudaSuccess);
    }
    ~DeviceArray() { cudaFree(p); }
    std::vector<T> get() const
    {
        std::vector<T> v(n);
        REQUIRE(cudaMemcpy(v.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost) == cudaSuccess);
        return v;
    }
};

// A plan forced to GPU solver `name` for shape s; `resident`: device_resident (device pointers
// only).
flcc_result forced_plan(flcc_plan* p, const std::string& name, flcc_op op, const ref::Shape& s, bool resident = false);

}  // namespace dt
