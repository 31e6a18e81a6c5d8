/* Links against an installed FLCC (CMake package or pkg-config) and runs one small LCC. */
#include <flcc.h>

#include <stdio.h>

int main(void)
{
    const flcc_size image = {32, 32, 1}, templ = {4, 4, 1};
    float img[32 * 32], t[16], out[35 * 35];
    flcc_plan plan;
    flcc_result r;
    int i;
    for (i = 0; i < 32 * 32; ++i) img[i] = (float)((i * 7919) % 257);
    for (i = 0; i < 16; ++i) t[i] = img[5 * 32 + 9 + (i / 4) * 32 + i % 4];
    r = flcc_lcorr_plan(&plan, 2, image, templ, FLCC_SINGLE, FLCC_ANY);
    if (r == FLCC_SUCCESS) r = flcc_lcorr_exec(plan, img, t, out, 1);
    flcc_destroy(plan);
    /* full region: the match at image (5, 9) is output (5 + 3, 9 + 3) */
    printf("FLCC %d: %s, r at the match = %.5f\n", flcc_version(), flcc_result_string(r), out[8 * 35 + 12]);
    return r == FLCC_SUCCESS && out[8 * 35 + 12] > 0.9999f ? 0 : 1;
}
