#include "flcc.h"
#include "plan/memory.h"

#include <cstdint>
#include <cstdlib>

namespace flcc {

#ifndef FLCC_HAVE_CUDA
void* pinned_alloc(size_t) { return nullptr; }
void pinned_free(void*) {}
MemorySpace memory_space(const void*) { return MemorySpace::host; }
bool copy_to_host(void*, const void*, size_t) { return false; }
bool copy_to_device(void*, const void*, size_t) { return false; }
void* device_alloc(size_t, int) { return nullptr; }
void device_free(void*) {}
#endif

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
