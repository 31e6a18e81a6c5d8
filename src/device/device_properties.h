// The properties of a CUDA device that plans and estimates read, queried once per device:
// applicability checks and estimates run for every candidate of every plan, and each runtime
// attribute query costs a call into the driver.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <map>
#include <mutex>

namespace flcc::device {

struct DeviceProperties {
    int multiprocessors = 1;           // streaming multiprocessors
    size_t shared_optin = 48 * 1024;   // shared memory a block may opt in to, in bytes
};

// `ordinal`'s properties (-1: the current device). A device that cannot be queried gets the
// defaults above, uncached, and the runtime's error is cleared.
inline DeviceProperties device_properties(int ordinal)
{
    static std::mutex mutex;
    static std::map<int, DeviceProperties> known;
    if (ordinal < 0 && cudaGetDevice(&ordinal) != cudaSuccess) {
        cudaGetLastError();
        return {};
    }
    std::lock_guard<std::mutex> lock(mutex);
    const auto it = known.find(ordinal);
    if (it != known.end()) return it->second;
    DeviceProperties d;
    int sms = 0, shared = 0;
    if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ordinal) != cudaSuccess ||
        cudaDeviceGetAttribute(&shared, cudaDevAttrMaxSharedMemoryPerBlockOptin, ordinal) != cudaSuccess ||
        sms < 1 || shared < 1) {
        cudaGetLastError();
        return d;
    }
    d.multiprocessors = sms;
    d.shared_optin = size_t(shared);
    known.emplace(ordinal, d);
    return d;
}

}  // namespace flcc::device
