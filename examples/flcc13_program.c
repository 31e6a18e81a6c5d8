/* A program written against the FLCC 1.3 interface: it compiles unchanged with <flcc13.h>.
 * It runs a convolution and an LCC through the 1.3 names and prints a checksum of each output;
 * the test suite compares these with the FLCC 2 API on the same data. */
#include <flcc13.h>

#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    flccPlan cplan, lplan;
    flccSize imSize, tSize;
    flccResult res;
    float *image, *templat, *out;
    int i, n, m;
    double csum = 0, lsum = 0;

    imSize.h = 64; imSize.w = 48; imSize.d = 1;
    tSize.h = 5; tSize.w = 7; tSize.d = 1;
    n = imSize.h * imSize.w;
    m = (imSize.h + tSize.h - 1) * (imSize.w + tSize.w - 1); /* full region, as in 1.3 */
    image = (float *)flcc_malloc(2 * n * sizeof(float));
    templat = (float *)flcc_malloc(tSize.h * tSize.w * sizeof(float));
    out = (float *)flcc_malloc(2 * m * sizeof(float));
    for (i = 0; i < 2 * n; ++i) image[i] = (float)((i * 37) % 101);
    for (i = 0; i < tSize.h * tSize.w; ++i) templat[i] = (float)((i * 13) % 17);

    res = conv_plan(&cplan, 2, imSize, tSize, FLCC_STREAM, FLCC_HOST);
    if (res != FLCC_SUCCESS) return 1;
    res = conv_exec(cplan, image, templat, out, 2);
    if (res != FLCC_SUCCESS) return 1;
    for (i = 0; i < 2 * m; ++i) csum += out[i] * (double)(i % 13 + 1);
    conv_destroy(cplan);

    res = lcorr_plan(&lplan, 2, imSize, tSize, FLCC_SINGLE, FLCC_HOST);
    if (res != FLCC_SUCCESS) return 1;
    res = lcorr_exec(lplan, image, templat, out, 1);
    if (res != FLCC_SUCCESS) return 1;
    for (i = 0; i < m; ++i) lsum += out[i] * (double)(i % 13 + 1);
    lcorr_destroy(lplan);

    printf("%.6e %.9e\n", csum, lsum);
    flcc_free(image);
    flcc_free(templat);
    flcc_free(out);
    return 0;
}
