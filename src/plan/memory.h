// Host memory for users (flcc_malloc) and for the wisdom text. Page-locked allocation comes from
// the device module when the build has CUDA and a device is usable.
#pragma once

#include <cstddef>

namespace flcc {

// Page-locked host memory, or nullptr when no usable device (or no CUDA in this build).
void* pinned_alloc(size_t bytes);
void pinned_free(void* p);

}  // namespace flcc
