/*
 * flcc13.h - the FLCC 1.3 interface on top of FLCC 2.
 *
 * A program written for FLCC 1.3 compiles unchanged with `#include <flcc13.h>` and links
 * against libflcc. The 1.3 names map onto the new API: plans are created for the FULL region
 * with FLCC_MEASURE and all hardware threads, as in 1.3.
 */
#ifndef FLCC13_H
#define FLCC13_H

#include "flcc.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef flcc_plan flccPlan;
typedef flcc_size flccSize;
typedef flcc_type flccType;
typedef flcc_platform flccPlatform;
typedef flcc_result flccResult;

/* The result values keep their names and numbers (FLCC_SUCCESS ... FLCC_EXEC_FAILED). */

static inline flccResult conv_plan(flccPlan *plan, int dim, flccSize imSize, flccSize tSize,
                                   flccType type, flccPlatform platform)
{
    return flcc_conv_plan(plan, dim, imSize, tSize, type, platform);
}

static inline flccResult lcorr_plan(flccPlan *plan, int dim, flccSize imSize, flccSize tSize,
                                    flccType type, flccPlatform platform)
{
    return flcc_lcorr_plan(plan, dim, imSize, tSize, type, platform);
}

static inline flccResult conv_exec(flccPlan plan, const float *image, const float *templat,
                                   float *out, int imCount)
{
    return flcc_conv_exec(plan, image, templat, out, imCount);
}

static inline flccResult lcorr_exec(flccPlan plan, const float *image, const float *templat,
                                    float *out, int imCount)
{
    return flcc_lcorr_exec(plan, image, templat, out, imCount);
}

static inline flccResult conv_destroy(flccPlan plan) { return flcc_destroy(plan); }
static inline flccResult lcorr_destroy(flccPlan plan) { return flcc_destroy(plan); }

#ifdef __cplusplus
}
#endif

#endif /* FLCC13_H */
