// The device runner of batch plans: the device backend's engine (plan/batch_engine.h) runs the
// frames where the data is; this side compares template sets by value, refines each peak from
// the map values the engine kept around it (host/peaks.h's fits, the same as on the host) and
// writes flcc_peak.
#pragma once

#include "batch/runner.h"
#include "host/peaks.h"
#include "plan/batch_engine.h"

#include <memory>
#include <vector>

namespace flcc::batch {

class DeviceRunner final : public Runner {
public:
    // The engine of `kind`: FLCC_METHOD_NOT_APPLICABLE (with the reason) for what it does not
    // run, FLCC_NO_DEVICE without a usable GPU.
    static flcc_result make(const Spec& spec, EngineKind kind, std::unique_ptr<DeviceRunner>& out);

    const Spec& spec() const override { return spec_; }
    bool templates_ready() const override { return templ_ready_; }
    bool takes_device_pointers() const override { return true; }
    const char* method() const override { return engine_->name(); }
    // Host or device pointers.
    flcc_result run(const void* images, const void* templs, float* maps, flcc_peak* peaks,
                    int frames) override;
    void forget_templates() override
    {
        templ_ready_ = false;
        templ_input_.clear();
    }

    // True, with its kind, when `method` names an engine (plan/batch_engine.h's engine_name).
    static bool engine_named(const char* method, EngineKind& kind);
    // The kind FLCC_ESTIMATE takes: direct where a pair's products are few per element of the
    // Fourier form's box (each box element costs the transforms and passes of that form, each
    // product one fused multiply-add in shared memory).
    static EngineKind estimated_kind(const Spec& spec);

private:
    class Sink;
    explicit DeviceRunner(const Spec& spec) : spec_(spec) {}
    flcc_result prepare_templates(const void* set);

    Spec spec_;
    std::unique_ptr<BatchEngine> engine_;
    host::PeakSearch search_;
    std::vector<unsigned char> templ_input_;   // the template set last prepared, as given
    bool templ_ready_ = false;
};

}  // namespace flcc::batch
