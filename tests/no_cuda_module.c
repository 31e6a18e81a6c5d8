/* Run with a libflcc.so whose CUDA backend module cannot be loaded (scripts: no_cuda_module.sh):
 * the library loads, lists no GPU solver, plans and executes on the host, and DEVICE plans (by
 * platform or by a forced GPU method) report FLCC_NO_DEVICE. Exit status 0 when all hold. */
#include "flcc.h"

#include <stdio.h>
#include <string.h>

static int failures = 0;

static void check(int ok, const char* what)
{
    if (!ok) {
        fprintf(stderr, "no_cuda_module: FAILED: %s (%s)\n", what, flcc_last_error_detail());
        ++failures;
    }
}

int main(void)
{
    for (int i = 0; i < flcc_solver_count(); ++i)
        check(strncmp(flcc_solver_name(i), "device.", 7) != 0, "no GPU solver is listed");
    check(flcc_solver_count() > 0, "host solvers are listed");

    flcc_size image = {40, 30, 1}, templ = {5, 4, 1};
    flcc_options o;
    flcc_options_init(&o);
    o.rigor = FLCC_ESTIMATE;
    flcc_plan plan = NULL;
    check(flcc_plan_create(&plan, FLCC_LCORR, 2, image, templ, &o) == FLCC_SUCCESS,
          "an ANY plan is made on the host");
    if (plan != NULL) {
        check(strncmp(flcc_plan_method(plan), "host.", 5) == 0, "its solver is a host solver");
        float in[40 * 30], t[5 * 4], out[44 * 33];
        for (int i = 0; i < 40 * 30; ++i) in[i] = (float)((i * 37) % 11);
        for (int i = 0; i < 5 * 4; ++i) t[i] = (float)((i * 7) % 5);
        check(flcc_lcorr_exec(plan, in, t, out, 1) == FLCC_SUCCESS, "it executes");
        flcc_destroy(plan);
    }

    o.platform = FLCC_DEVICE;
    plan = NULL;
    check(flcc_plan_create(&plan, FLCC_LCORR, 2, image, templ, &o) == FLCC_NO_DEVICE,
          "a DEVICE plan reports FLCC_NO_DEVICE");
    o.platform = FLCC_ANY;
    o.method = "device.direct2.k4";
    check(flcc_plan_create(&plan, FLCC_LCORR, 2, image, templ, &o) == FLCC_NO_DEVICE,
          "a forced GPU method reports FLCC_NO_DEVICE");
    o.method = "device.no-such-solver";
    check(flcc_plan_create(&plan, FLCC_LCORR, 2, image, templ, &o) == FLCC_NO_DEVICE,
          "any device.* method reports FLCC_NO_DEVICE");
    if (failures == 0) printf("no_cuda_module: passed\n");
    return failures == 0 ? 0 : 1;
}
