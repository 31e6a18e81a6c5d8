/* C wrappers that take the public enums as int (see enum_from_c.c). */
#ifndef FLCC_TESTS_ENUM_FROM_C_H
#define FLCC_TESTS_ENUM_FROM_C_H

#include "flcc.h"

#ifdef __cplusplus
extern "C" {
#endif

flcc_result c_plan_create(flcc_plan *plan, int op, int dim, flcc_size image, flcc_size templ,
                          const flcc_options *opts);
flcc_result c_conv_plan(flcc_plan *plan, int dim, flcc_size image, flcc_size templ, int type,
                        int platform);
flcc_result c_lcorr_plan(flcc_plan *plan, int dim, flcc_size image, flcc_size templ, int type,
                         int platform);
const char *c_result_string(int code);

#ifdef __cplusplus
}
#endif

#endif
