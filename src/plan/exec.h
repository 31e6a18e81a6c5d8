// Runs an exec call (flcc_conv_exec, flcc_lcorr_exec, flcc_xcorr_exec; `op` says which) on a
// plan handle: validates the handle, the operation and the pointers, prepares the template when
// it changed, and runs the frames.
#pragma once

#include "flcc.h"
#include "plan/problem.h"

namespace flcc {

flcc_result execute_plan(flcc_plan handle, flcc_op op, const float* image, const float* templ,
                         float* out, int count);

}  // namespace flcc
