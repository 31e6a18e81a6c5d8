// The CUDA runtime as the plan layer's DeviceRuntime (plan/backend.h).
#pragma once

#include "plan/backend.h"

#include <string>

namespace flcc::device {

class CudaRuntime final : public DeviceRuntime {
public:
    bool available(int ordinal) const override;
    MemorySpace memory_space(const void* p) const override;
    bool copy_to_host(void* dst, const void* device_src, size_t bytes) const override;
    bool copy_to_device(void* device_dst, const void* src, size_t bytes) const override;
    void* device_alloc(size_t bytes, int ordinal) const override;
    void device_free(void* p) const override;
    void* pinned_alloc(size_t bytes) const override;
    void pinned_free(void* p) const override;
};

// " gpu=<name> sm<NN>" for the current device, "" when none can be queried: the GPU part of
// the wisdom signature.
std::string gpu_signature();

}  // namespace flcc::device
