// Platform ANY for batch plans: the host runner and, where a GPU runs the plan, the GPU engine
// are both made and the faster one is kept, as the planner keeps the faster solver.
#pragma once

#include "batch/runner.h"
#include "batch/spec.h"
#include "flcc.h"

#include <memory>

namespace flcc::batch {

// Of `host` and `device` (null: the engine does not run this plan here), the runner to keep.
// FLCC_ESTIMATE keeps the engine wherever it runs (on the workloads of docs/performance.md it is
// 18-130x faster than the host runner of a 16-core CPU); FLCC_MEASURE times an exec of one
// synthetic frame on each (after one untimed) and keeps the faster. The timing's template set
// is forgotten, so that the caller's first exec must give one. Returns FLCC_SUCCESS, or the
// failure of an exec (then the plan fails: the same exec would fail the caller's).
flcc_result choose_runner(const Spec& spec, flcc_rigor rigor, std::unique_ptr<Runner> host,
                          std::unique_ptr<Runner> device, std::unique_ptr<Runner>& out);

}  // namespace flcc::batch
