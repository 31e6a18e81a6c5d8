// Runs an exec call (flcc_conv_exec, flcc_lcorr_exec) on a plan handle: validates the handle,
// the operation and the pointers, prepares the template when it changed, and runs the frames.
#pragma once

#include "flcc.h"
#include "plan/problem.h"

namespace flcc {

flcc_result execute_plan(flcc_plan handle, Op op, const float* image, const float* templ,
                         float* out, int count);

}  // namespace flcc
