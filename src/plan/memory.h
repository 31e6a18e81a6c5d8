// Memory as the plan layer sees it: host memory for users (flcc_malloc) and the wisdom text, and
// the few device services the plan layer needs (is a device usable, telling pointers apart,
// staging copies). A device backend's runtime answers them (plan/backend.h); without one, no
// device is usable and every pointer is host memory.
#pragma once

#include <cstddef>

namespace flcc {

enum class MemorySpace { host, device };

// True when a device with this ordinal (-1: the current one) is usable.
bool device_available(int ordinal);

// Where `p` points. Host includes page-locked host memory.
MemorySpace memory_space(const void* p);

// Copies between host and device memory; false when the copy failed.
bool copy_to_host(void* dst, const void* device_src, size_t bytes);
bool copy_to_device(void* device_dst, const void* src, size_t bytes);

// Device memory on `ordinal` (-1: current device); nullptr when it cannot be had.
void* device_alloc(size_t bytes, int ordinal);
void device_free(void* p);

// A block that flcc_free frees, in ordinary (never page-locked) host memory: for the library's
// own results, such as the wisdom text, whose allocation must not go through the CUDA driver.
void* host_alloc(size_t bytes);

// Page-locked host memory, or nullptr when no usable device (or no CUDA in this build).
void* pinned_alloc(size_t bytes);
void pinned_free(void* p);

}  // namespace flcc
