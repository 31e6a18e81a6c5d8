/* A stream of frames through one plan: the template is prepared once, every frame reuses it.
 * Frames are stored back to back; so are the outputs. Exits 0 when each frame's peak moves
 * with the planted pattern. */
#include <flcc.h>

#include <stdio.h>
#include <stdlib.h>

#define FRAMES 8
#define H 200
#define W 300
#define K 12

int main(void)
{
    const flcc_size image = {H, W, 1}, templ = {K, K, 1};
    float *frames = flcc_malloc(sizeof(float) * FRAMES * H * W);
    float t[K * K];
    flcc_options opts;
    flcc_plan plan;
    flcc_size os;
    float *out;
    int f, i, ok = 1;

    srand(11);
    for (i = 0; i < K * K; ++i) t[i] = (float)(rand() % 1000);
    for (i = 0; i < FRAMES * H * W; ++i) frames[i] = (float)(rand() % 1000);
    for (f = 0; f < FRAMES; ++f) /* the pattern drifts 10 columns per frame */
        for (i = 0; i < K * K; ++i) frames[f * H * W + (50 + i / K) * W + 20 + 10 * f + i % K] = t[i];

    flcc_options_init(&opts);
    opts.type = FLCC_STREAM; /* plan for the per-frame steady state */
    opts.region = FLCC_VALID;
    if (flcc_plan_create(&plan, FLCC_LCORR, 2, image, templ, &opts) != FLCC_SUCCESS) return 1;
    flcc_plan_output_size(plan, &os);
    out = flcc_malloc(sizeof(float) * FRAMES * os.h * os.w);
    if (flcc_lcorr_exec(plan, frames, t, out, FRAMES) != FLCC_SUCCESS) return 1;
    for (f = 0; f < FRAMES; ++f) {
        const float *r = out + (size_t)f * os.h * os.w;
        int best = 0;
        for (i = 1; i < os.h * os.w; ++i)
            if (r[i] > r[best]) best = i;
        printf("frame %d: peak at (%d, %d)\n", f, best / os.w, best % os.w);
        ok &= best / os.w == 50 && best % os.w == 20 + 10 * f;
    }
    printf("method %s\n", flcc_plan_method(plan));
    flcc_destroy(plan);
    flcc_free(frames);
    flcc_free(out);
    return ok ? 0 : 1;
}
