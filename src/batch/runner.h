// What the batch entry points (api.cpp) ask of a batch plan's runner, wherever it runs: the host
// runner (host_runner.h) or the device runner (device_runner.h).
#pragma once

#include "batch/spec.h"
#include "flcc.h"
#include "plan/plan.h"

namespace flcc::batch {

class Runner : public BatchRunner {
public:
    virtual const Spec& spec() const = 0;
    // Whether a template set was prepared (an exec may then pass templs = NULL).
    virtual bool templates_ready() const = 0;
    // Whether run takes pointers to device memory as they are; else the entry point stages
    // them through the host.
    virtual bool takes_device_pointers() const = 0;
    // Runs `frames` frames (flcc_batch_exec), the arguments checked and sized for the plan.
    virtual flcc_result run(const void* images, const void* templs, float* maps, flcc_peak* peaks,
                            int frames) = 0;
    // Drops the prepared template set: the next exec must give one (templs = NULL fails), and
    // prepares it whatever its value.
    virtual void forget_templates() = 0;
};

}  // namespace flcc::batch
