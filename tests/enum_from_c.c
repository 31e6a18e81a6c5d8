/* Calls the C API with enum arguments out of their enumerators' range, as a C program may: C
 * gives an enum type every value of its underlying integer type, C++ does not (converting such
 * a value to the enum in C++ is undefined behaviour), so the C++ tests pass them through here. */
#include "enum_from_c.h"

flcc_result c_plan_create(flcc_plan *plan, int op, int dim, flcc_size image, flcc_size templ,
                          const flcc_options *opts)
{
    return flcc_plan_create(plan, (flcc_op)op, dim, image, templ, opts);
}

flcc_result c_conv_plan(flcc_plan *plan, int dim, flcc_size image, flcc_size templ, int type,
                        int platform)
{
    return flcc_conv_plan(plan, dim, image, templ, (flcc_type)type, (flcc_platform)platform);
}

flcc_result c_lcorr_plan(flcc_plan *plan, int dim, flcc_size image, flcc_size templ, int type,
                         int platform)
{
    return flcc_lcorr_plan(plan, dim, image, templ, (flcc_type)type, (flcc_platform)platform);
}

const char *c_result_string(int code) { return flcc_result_string((flcc_result)code); }
