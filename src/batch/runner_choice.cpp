#include "batch/runner_choice.h"

#include "plan/error.h"
#include "plan/memory.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <vector>

namespace flcc::batch {

namespace {

// One frame of a side's input, finite and varied (a fixed xorshift sequence): float32 values in
// [0, 1), integers of the type's whole range.
std::vector<unsigned char> synthetic_frame(const Source& s, uint64_t seed)
{
    std::vector<unsigned char> bytes(size_t(s.frame_bytes()));
    uint64_t x = seed;
    const auto next = [&x] {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        return x;
    };
    if (s.type == FLCC_FLOAT32) {
        for (size_t i = 0; i + sizeof(float) <= bytes.size(); i += sizeof(float)) {
            const float v = float(next() >> 40) * 0x1p-24f;
            std::memcpy(bytes.data() + i, &v, sizeof v);
        }
    } else {
        for (unsigned char& b : bytes) b = static_cast<unsigned char>(next() >> 56);
    }
    return bytes;
}

// Seconds of one exec of one frame: the median of three, after one untimed.
flcc_result time_runner(Runner& r, const void* images, const void* templs, double& seconds)
{
    const Spec& s = r.spec();
    std::vector<float> maps(s.keep_maps ? size_t(s.map_floats_per_frame()) : 0);
    std::vector<flcc_peak> peaks(size_t(s.maps_per_frame()) * size_t(std::max(s.peaks, 0)));
    double t[3];
    for (int k = -1; k < 3; ++k) {
        const auto start = std::chrono::steady_clock::now();
        const flcc_result res = r.run(images, templs, maps.empty() ? nullptr : maps.data(),
                                      peaks.empty() ? nullptr : peaks.data(), 1);
        if (res != FLCC_SUCCESS) return res;
        if (k >= 0) t[k] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    std::sort(t, t + 3);
    seconds = t[1];
    return FLCC_SUCCESS;
}

// A device copy of a host array (null when it cannot be had), freed with the object.
class DeviceCopy {
public:
    DeviceCopy(const std::vector<unsigned char>& v, int device) : p_(device_alloc(v.size(), device))
    {
        if (p_ != nullptr && !copy_to_device(p_, v.data(), v.size())) {
            device_free(p_);
            p_ = nullptr;
        }
    }
    ~DeviceCopy() { device_free(p_); }
    DeviceCopy(const DeviceCopy&) = delete;
    DeviceCopy& operator=(const DeviceCopy&) = delete;
    const void* get() const { return p_; }

private:
    void* p_;
};

}  // namespace

flcc_result choose_runner(const Spec& spec, flcc_rigor rigor, std::vector<std::unique_ptr<Runner>> candidates,
                          size_t estimate, std::unique_ptr<Runner>& out)
{
    if (candidates.size() == 1 || rigor == FLCC_ESTIMATE || rigor == FLCC_WISDOM_ONLY) {
        out = std::move(candidates[candidates.size() == 1 ? 0 : estimate]);
        return FLCC_SUCCESS;
    }
    const std::vector<unsigned char> images = synthetic_frame(spec.images, 0x9E3779B97F4A7C15ull);
    const std::vector<unsigned char> templs = synthetic_frame(spec.templates, 0xD1B54A32D192ED03ull);
    // The GPU engines are timed on device-resident frames: they differ in their compute, which
    // an upload from pageable memory (the same for each) would bury in its own variation.
    std::unique_ptr<DeviceCopy> device_images, device_templs;
    for (const auto& c : candidates)
        if (c->takes_device_pointers() && device_images == nullptr) {
            device_images = std::make_unique<DeviceCopy>(images, spec.device);
            device_templs = std::make_unique<DeviceCopy>(templs, spec.device);
        }
    const bool resident = device_images != nullptr && device_images->get() != nullptr &&
                          device_templs->get() != nullptr;
    size_t best = 0;
    double best_seconds = 0;
    for (size_t i = 0; i < candidates.size(); ++i) {
        double seconds = 0;
        const bool on_device = resident && candidates[i]->takes_device_pointers();
        const flcc_result r = time_runner(*candidates[i], on_device ? device_images->get() : images.data(),
                                          on_device ? device_templs->get() : templs.data(), seconds);
        if (r != FLCC_SUCCESS) return fail(r, "timing the batch runners failed");
        if (i == 0 || seconds < best_seconds) best = i, best_seconds = seconds;
    }
    out = std::move(candidates[best]);
    out->forget_templates();
    return FLCC_SUCCESS;
}

}  // namespace flcc::batch
