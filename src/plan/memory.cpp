#include "flcc.h"
#include "plan/backend.h"
#include "plan/memory.h"

#include <cstdint>
#include <cstdlib>

namespace flcc {

// The device services go to the device backend's runtime; without one, every pointer is host
// memory and nothing is on a device.
bool device_available(int ordinal)
{
    const DeviceRuntime* r = device_runtime();
    return r != nullptr && r->available(ordinal);
}

MemorySpace memory_space(const void* p)
{
    const DeviceRuntime* r = device_runtime();
    return r != nullptr ? r->memory_space(p) : MemorySpace::host;
}

bool copy_to_host(void* dst, const void* src, size_t bytes)
{
    const DeviceRuntime* r = device_runtime();
    return r != nullptr && r->copy_to_host(dst, src, bytes);
}

bool copy_to_device(void* dst, const void* src, size_t bytes)
{
    const DeviceRuntime* r = device_runtime();
    return r != nullptr && r->copy_to_device(dst, src, bytes);
}

void* device_alloc(size_t bytes, int ordinal)
{
    const DeviceRuntime* r = device_runtime();
    return r != nullptr ? r->device_alloc(bytes, ordinal) : nullptr;
}

void device_free(void* p)
{
    const DeviceRuntime* r = device_runtime();
    if (r != nullptr && p != nullptr) r->device_free(p);
}

void* pinned_alloc(size_t bytes)
{
    const DeviceRuntime* r = device_runtime();
    return r != nullptr ? r->pinned_alloc(bytes) : nullptr;
}

void pinned_free(void* p)
{
    const DeviceRuntime* r = device_runtime();
    if (r != nullptr && p != nullptr) r->pinned_free(p);
}

namespace {

// Every block starts with a 64-byte header (keeping the user pointer 64-byte aligned) that
// says how it was allocated, so flcc_free frees either kind.
constexpr size_t kHeader = 64;
constexpr uint64_t kMagic = 0x464c43434d454d31ull;   // "FLCCMEM1"
enum Kind : uint64_t { aligned = 1, pinned = 2 };

struct Header {
    uint64_t magic;
    uint64_t kind;
};

// A tagged block: page-locked when `may_pin` and a device is usable, else aligned.
void* tagged_alloc(size_t bytes, bool may_pin)
{
    if (bytes == 0 || bytes > SIZE_MAX - 2 * kHeader) return nullptr;
    Kind kind = pinned;
    void* base = may_pin ? pinned_alloc(bytes + kHeader) : nullptr;
    if (base == nullptr) {
        kind = aligned;
        base = std::aligned_alloc(kHeader, (bytes + 2 * kHeader - 1) / kHeader * kHeader);
        if (base == nullptr) return nullptr;
    }
    Header* h = static_cast<Header*>(base);
    h->magic = kMagic;
    h->kind = kind;
    return static_cast<char*>(base) + kHeader;
}

}  // namespace

void* host_alloc(size_t bytes) { return tagged_alloc(bytes, false); }

}  // namespace flcc

using namespace flcc;

extern "C" {

void* flcc_malloc(size_t bytes) { return tagged_alloc(bytes, true); }

void flcc_free(void* p)
{
    if (p == nullptr) return;
    void* base = static_cast<char*>(p) - kHeader;
    Header* h = static_cast<Header*>(base);
    if (h->magic != kMagic) return;   // not ours: leak rather than corrupt the heap
    h->magic = 0;
    if (h->kind == pinned)
        pinned_free(base);
    else
        std::free(base);
}

}  // extern "C"
