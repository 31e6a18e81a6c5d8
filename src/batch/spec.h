// A batch plan's description (flcc_batch) validated and resolved: the problem of one pair, how
// images and templates pair up, where each comes from in a frame's input, the preprocessing and
// what each frame outputs.
#pragma once

#include "flcc.h"
#include "plan/problem.h"

#include <cstdint>
#include <vector>

namespace flcc::batch {

// One side of the pairs (the images or the templates), as it arrives per frame: a stack of
// `count` arrays of `extent`, or one frame of `frame` that the arrays are cut from at their
// origins (plane, row, column).
struct Source {
    int count = 1;
    flcc_dtype type = FLCC_FLOAT32;
    Extent extent{};
    bool cut = false;
    Extent frame{};
    std::vector<Extent> origins;

    int64_t elem_bytes() const;
    // Input elements of one frame: the frame's when cut, else the stack's.
    int64_t frame_elems() const;
    int64_t frame_bytes() const { return frame_elems() * elem_bytes(); }
};

struct Spec {
    flcc_op op = FLCC_LCORR;   // the caller's operation (XCORR runs as convolution, reversed)
    Problem pair;              // the problem of one pair: one thread, on the host
    flcc_pairing pairing = FLCC_PAIRWISE;
    int pairs = 1;
    Source images, templates;
    bool zero_mean = false, hann = false;
    double bandpass_low = 0, bandpass_high = 0;
    int peaks = 1, exclusion = 2;
    flcc_refine refine = FLCC_REFINE_PARABOLIC;
    int fit_size = 5, upsample = 10;
    bool keep_maps = false, best = false, templ_per_frame = false;
    bool check_finite = true;
    int threads = 1;           // pairs run in parallel on this many threads (host)
    flcc_platform platform = FLCC_ANY;   // the caller's: DEVICE runs the pairs on the GPU
    int device = -1;

    int image_of(int pair) const;
    int templ_of(int pair) const;
    // Maps (and peak lists) per frame: one per pair, or one per image for best_over_templates.
    int maps_per_frame() const { return best ? images.count : pairs; }
    // Floats of `maps` per frame (best_over_templates: the value and the index plane per image).
    int64_t map_floats_per_frame() const;
    bool preprocesses() const { return zero_mean || hann || bandpass_low > 0 || bandpass_high > 0; }
};

// Validates the arguments of flcc_batch_plan_create and resolves them. Returns FLCC_SUCCESS or
// the code of the first invalid argument, with its detail set; allocates nothing on failure but
// what `out` holds.
flcc_result make_spec(Spec& out, int op, int dim, flcc_size image, flcc_size templ,
                      const flcc_batch& b, const flcc_options& o);

}  // namespace flcc::batch
