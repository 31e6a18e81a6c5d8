// The batch entry points of a build without the host Fourier backend: batch plans run on the
// host and filter on FFTW, so such a build refuses them with a reason instead of lacking the
// symbols.
#include "flcc.h"
#include "plan/entry.h"
#include "plan/error.h"

#include <cstring>

using namespace flcc;

extern "C" {

void flcc_batch_init(flcc_batch* b)
{
    if (b != nullptr) std::memset(b, 0, sizeof *b);
}

flcc_result flcc_batch_plan_create(flcc_plan* plan, flcc_op, int, flcc_size, flcc_size,
                                   const flcc_batch*, const flcc_options*)
{
    return entry([&] {
        if (plan != nullptr) *plan = nullptr;
        return fail(FLCC_METHOD_NOT_APPLICABLE,
                    "batch plans need the host solvers and FFTW, which this build leaves out");
    });
}

flcc_result flcc_batch_exec(flcc_plan, const void*, const void*, float*, flcc_peak*, int)
{
    return entry([] { return fail(FLCC_INVALID_PLAN, "this build makes no batch plans"); });
}

flcc_result flcc_batch_pairs(flcc_plan, int*)
{
    return entry([] { return fail(FLCC_INVALID_PLAN, "this build makes no batch plans"); });
}

}  // extern "C"
