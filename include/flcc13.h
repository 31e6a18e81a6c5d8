/*
 * flcc13.h - the FLCC 1.3 interface on top of FLCC 2.
 *
 * A program written for FLCC 1.3 compiles unchanged with `#include <flcc13.h>`, as C and as
 * C++, and links against libflcc. The 1.3 names map onto the new API with the 1.3 manual's
 * signatures and semantics: plans are created for the FULL region with FLCC_MEASURE and all
 * hardware threads; on a SINGLE plan the exec functions ignore imCount and process one image;
 * conv_destroy and lcorr_destroy take a pointer to the plan, destroy it and set it to NULL.
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

/* 1.3: imCount counts the images of a STREAM plan; a SINGLE plan processes one image. */
static inline int flcc13_image_count(flccPlan plan, int imCount)
{
    flcc_type type = FLCC_STREAM;
    if (flcc_plan_type(plan, &type) == FLCC_SUCCESS && type == FLCC_SINGLE) return 1;
    return imCount;
}

static inline flccResult conv_exec(flccPlan plan, const float *image, const float *templat,
                                   float *out, int imCount)
{
    return flcc_conv_exec(plan, image, templat, out, flcc13_image_count(plan, imCount));
}

static inline flccResult lcorr_exec(flccPlan plan, const float *image, const float *templat,
                                    float *out, int imCount)
{
    return flcc_lcorr_exec(plan, image, templat, out, flcc13_image_count(plan, imCount));
}

/* 1.3: destroys *plan and sets it to NULL; a NULL plan pointer is FLCC_INVALID_PLAN. */
static inline flccResult flcc13_destroy(flccPlan *plan)
{
    flccResult r;
    if (plan == NULL) return FLCC_INVALID_PLAN;
    r = flcc_destroy(*plan);
    *plan = NULL;
    return r;
}

static inline flccResult conv_destroy(flccPlan *plan) { return flcc13_destroy(plan); }
static inline flccResult lcorr_destroy(flccPlan *plan) { return flcc13_destroy(plan); }

#ifdef __cplusplus
}
#endif

#endif /* FLCC13_H */
