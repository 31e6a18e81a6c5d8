// The choice among batch runners: the host runner and the GPU engines that run a plan are made
// and the fastest is kept, as the planner keeps the fastest solver.
#pragma once

#include "batch/runner.h"
#include "batch/spec.h"
#include "flcc.h"

#include <memory>
#include <vector>

namespace flcc::batch {

// Of `candidates` (at least one), the runner to keep. FLCC_ESTIMATE and FLCC_WISDOM_ONLY keep
// candidates[estimate] (the callers pass the GPU engine of DeviceRunner::estimated_kind wherever
// one runs: on the workloads of docs/performance.md the engine is 18-130x faster than the host
// runner of a 16-core CPU); the other rigors time an exec of one synthetic frame on each (after
// one untimed; the engines' frames in device memory) and keep the fastest. The timing's template set is forgotten, so that the caller's
// first exec must give one. Returns FLCC_SUCCESS, or the failure of an exec (then the plan
// fails: the same exec would fail the caller's).
flcc_result choose_runner(const Spec& spec, flcc_rigor rigor, std::vector<std::unique_ptr<Runner>> candidates,
                          size_t estimate, std::unique_ptr<Runner>& out);

}  // namespace flcc::batch
