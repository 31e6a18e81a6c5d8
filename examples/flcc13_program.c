/* A program written against the FLCC 1.3 manual: it compiles unchanged with <flcc13.h>, as C
 * and as C++. It runs a convolution (STREAM plan, two images) and an LCC (SINGLE plan) through
 * the 1.3 names and prints a checksum of each output; the test suite compares these with the
 * FLCC 2 API on the same data. It also checks two rules of the manual: a SINGLE plan ignores
 * imCount and processes one image, and the destroy functions take the plan's address and set
 * the plan to NULL. It runs on the host, or on the GPU with the argument "device". It exits with
 * 1 when a call fails, 2 when a rule is broken, 3 when "device" finds no usable GPU. */
#include <flcc13.h>

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    const flccPlatform platform = argc > 1 && argv[1][0] == 'd' ? FLCC_DEVICE : FLCC_HOST;
    flccPlan cplan, lplan;
    flccSize imSize, tSize;
    flccResult res;
    float *image, *templat, *out;
    int i, n, m;
    double csum = 0, lsum = 0;
    const float untouched = -12345.0f;

    imSize.h = 64; imSize.w = 48; imSize.d = 1;
    tSize.h = 5; tSize.w = 7; tSize.d = 1;
    n = imSize.h * imSize.w;
    m = (imSize.h + tSize.h - 1) * (imSize.w + tSize.w - 1); /* full region, as in 1.3 */
    image = (float *)flcc_malloc(2 * n * sizeof(float));
    templat = (float *)flcc_malloc(tSize.h * tSize.w * sizeof(float));
    out = (float *)flcc_malloc(2 * m * sizeof(float));
    if (image == NULL || templat == NULL || out == NULL) return 1;
    for (i = 0; i < 2 * n; ++i) image[i] = (float)((i * 37) % 101);
    for (i = 0; i < tSize.h * tSize.w; ++i) templat[i] = (float)((i * 13) % 17);

    res = conv_plan(&cplan, 2, imSize, tSize, FLCC_STREAM, platform);
    if (res == FLCC_NO_DEVICE) return 3;
    if (res != FLCC_SUCCESS) return 1;
    res = conv_exec(cplan, image, templat, out, 2);
    if (res != FLCC_SUCCESS) return 1;
    for (i = 0; i < 2 * m; ++i) csum += out[i] * (double)(i % 13 + 1);
    if (conv_destroy(&cplan) != FLCC_SUCCESS) return 1;
    if (cplan != NULL) return 2;

    res = lcorr_plan(&lplan, 2, imSize, tSize, FLCC_SINGLE, platform);
    if (res != FLCC_SUCCESS) return 1;
    /* SINGLE: imCount is ignored, one image is processed (the second output stays as it is). */
    for (i = 0; i < 2 * m; ++i) out[i] = untouched;
    res = lcorr_exec(lplan, image, templat, out, 2);
    if (res != FLCC_SUCCESS) return 1;
    if (out[m] != untouched || out[2 * m - 1] != untouched) return 2;
    res = lcorr_exec(lplan, image, templat, out, 0);
    if (res != FLCC_SUCCESS) return 2;
    for (i = 0; i < m; ++i) lsum += out[i] * (double)(i % 13 + 1);
    if (lcorr_destroy(&lplan) != FLCC_SUCCESS) return 1;
    if (lplan != NULL) return 2;

    printf("%.6e %.9e\n", csum, lsum);
    flcc_free(image);
    flcc_free(templat);
    flcc_free(out);
    return 0;
}
