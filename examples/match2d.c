/* 2D template matching in C: find where a template cut from an image lies, with LCC.
 * Exits 0 when the peak is at the template's true position. */
#include <flcc.h>

#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    const flcc_size image = {480, 640, 1}, templ = {21, 17, 1};
    const int ty = 300, tx = 411; /* where the template is cut from */
    float *img = flcc_malloc(sizeof(float) * 480 * 640);
    float *t = flcc_malloc(sizeof(float) * 21 * 17);
    flcc_options opts;
    flcc_plan plan;
    flcc_size os;
    float *out;
    int y, x, best = 0, found;
    flcc_result r;

    srand(7);
    for (y = 0; y < 480 * 640; ++y) img[y] = (float)(rand() % 4096);
    for (y = 0; y < 21; ++y)
        for (x = 0; x < 17; ++x) t[y * 17 + x] = 2.0f * img[(ty + y) * 640 + tx + x] + 5.0f;

    flcc_options_init(&opts);
    opts.region = FLCC_VALID; /* output (y, x) = template placed at image (y, x) */
    r = flcc_plan_create(&plan, FLCC_LCORR, 2, image, templ, &opts);
    if (r != FLCC_SUCCESS) {
        fprintf(stderr, "plan: %s\n", flcc_result_string(r));
        return 1;
    }
    flcc_plan_output_size(plan, &os);
    out = flcc_malloc(sizeof(float) * os.h * os.w);
    r = flcc_lcorr_exec(plan, img, t, out, 1);
    if (r != FLCC_SUCCESS) {
        fprintf(stderr, "exec: %s\n", flcc_result_string(r));
        return 1;
    }
    for (y = 1; y < os.h * os.w; ++y)
        if (out[y] > out[best]) best = y;
    printf("method %s: peak r = %.6f at (%d, %d), expected (%d, %d)\n", flcc_plan_method(plan),
           out[best], best / os.w, best % os.w, ty, tx);
    found = best / os.w == ty && best % os.w == tx && out[best] > 0.99999f;
    flcc_destroy(plan);
    flcc_free(img);
    flcc_free(t);
    flcc_free(out);
    return found ? 0 : 1;
}
