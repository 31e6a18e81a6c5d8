/* The cost models of a build, printed: for a grid of 2D and 3D problems (LCC and convolution, FULL/SAME/VALID,
 * SINGLE and STREAM), creates ESTIMATE plans and prints every candidate's name and estimate
 * (%.17g), so two builds' cost models and candidate lists can be compared byte for byte.
 *
 *   cc -O2 -o estimates_dump estimates_dump.c -Iinclude -Lbuild -lflcc -Wl,-rpath,$PWD/build
 *   ./estimates_dump [host|device] [threads] [wisdom-file]
 *
 * bench/ab/ab_compare.sh runs it against two builds and compares the outputs.
 *
 * platform: host (default) or device. threads: the plan's CPU threads (default 2; estimates of
 * host solvers depend on it). wisdom-file: FFTW wisdom read when it exists and written at the
 * end (ESTIMATE plans still make the chosen executor, and host Fourier executors plan their
 * large transforms with FFTW_MEASURE: a second run with the same file is much faster; ESTIMATE
 * records no planner decisions, so the file does not change what is listed). */
#include "flcc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char* op_name[] = {"conv", "lcorr"};
static const char* region_name[] = {"full", "same", "valid"};
static const char* type_name[] = {"single", "stream"};

static void dump(flcc_op op, int dim, flcc_size image, flcc_size templ, flcc_region region,
                 flcc_type type, flcc_platform platform, int threads)
{
    flcc_options o;
    flcc_options_init(&o);
    o.rigor = FLCC_ESTIMATE;
    o.platform = platform;
    o.region = region;
    o.type = type;
    o.threads = threads;
    flcc_plan plan = NULL;
    const flcc_result r = flcc_plan_create(&plan, op, dim, image, templ, &o);
    printf("%s %dd image %dx%dx%d templ %dx%dx%d %s %s:", op_name[op], dim, image.h, image.w,
           dim == 3 ? image.d : 1, templ.h, templ.w, dim == 3 ? templ.d : 1,
           region_name[region], type_name[type]);
    if (r != FLCC_SUCCESS) {
        printf(" result %d\n", (int)r);
        return;
    }
    printf(" method %s\n", flcc_plan_method(plan));
    const int n = flcc_plan_candidate_count(plan);
    for (int i = 0; i < n; ++i) {
        const char* name = NULL;
        double seconds = 0;
        flcc_plan_candidate(plan, i, &name, &seconds);
        printf("  %s %.17g\n", name, seconds);
    }
    flcc_destroy(plan);
    fflush(stdout);
}

int main(int argc, char** argv)
{
    const flcc_platform platform =
        argc > 1 && strcmp(argv[1], "device") == 0 ? FLCC_DEVICE : FLCC_HOST;
    const int threads = argc > 2 ? atoi(argv[2]) : 2;
    const char* wisdom = argc > 3 ? argv[3] : NULL;
    if (wisdom != NULL) {
        FILE* f = fopen(wisdom, "r");
        if (f != NULL) {
            fclose(f);
            if (flcc_wisdom_import_file(wisdom) != FLCC_SUCCESS) fprintf(stderr, "wisdom import failed\n");
        }
    }
    static const int t2[] = {2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 24, 31, 32, 33, 40};
    static const int s2[] = {64, 100, 256, 500, 1024, 2048};
    static const int t3[] = {2, 3, 4, 5, 7, 8, 9, 10, 11, 12};
    static const int s3[] = {16, 33, 64, 100, 256};
    for (int op = 0; op < 2; ++op)
        for (int region = 0; region < 3; ++region)
            for (int type = 0; type < 2; ++type) {
                for (size_t i = 0; i < sizeof s2 / sizeof *s2; ++i)
                    for (size_t j = 0; j < sizeof t2 / sizeof *t2; ++j) {
                        const flcc_size image = {s2[i], s2[i] + s2[i] / 4, 1};
                        const flcc_size templ = {t2[j], t2[j], 1};
                        dump((flcc_op)op, 2, image, templ, (flcc_region)region, (flcc_type)type,
                             platform, threads);
                        /* a non-square template too */
                        const flcc_size rect = {t2[j], t2[j] / 2 + 1, 1};
                        dump((flcc_op)op, 2, image, rect, (flcc_region)region, (flcc_type)type,
                             platform, threads);
                    }
                for (size_t i = 0; i < sizeof s3 / sizeof *s3; ++i)
                    for (size_t j = 0; j < sizeof t3 / sizeof *t3; ++j) {
                        const flcc_size image = {s3[i], s3[i], s3[i] / 2 + 8};
                        const flcc_size templ = {t3[j], t3[j], t3[j]};
                        dump((flcc_op)op, 3, image, templ, (flcc_region)region, (flcc_type)type,
                             platform, threads);
                        const flcc_size rect = {t3[j], t3[j] / 2 + 1, t3[j]};
                        dump((flcc_op)op, 3, image, rect, (flcc_region)region, (flcc_type)type,
                             platform, threads);
                    }
            }
    if (wisdom != NULL && flcc_wisdom_export_file(wisdom) != FLCC_SUCCESS)
        fprintf(stderr, "wisdom export failed\n");
    return 0;
}
