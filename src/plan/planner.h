// The planner: picks the solver of a plan. A forced method is looked up by name; ESTIMATE takes
// the cheapest by the solvers' cost models; MEASURE times the applicable solvers on
// planner-owned random data (cheapest estimate first, skipping hopeless ones) and keeps the
// fastest executor it built. Every candidate's time is recorded on the plan.
#pragma once

#include "flcc.h"
#include "plan/plan.h"

namespace flcc {

flcc_result plan_solver(flcc_plan_s& plan, const flcc_options& opts);

}  // namespace flcc
