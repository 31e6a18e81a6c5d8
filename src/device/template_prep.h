// Template preparation on the GPU, for templates the caller keeps in device memory: compared
// with the template last prepared and, only when it changed, normalised (LCC) or flipped
// (convolution) into the padded tap rows the direct kernels read — one small kernel in stream
// order ahead of the frames, so a device template costs no host round trip. The arithmetic is
// the host's (src/plan/template.cpp): double precision, scaled by the largest magnitude, rounded
// once. (The small 2D direct kernels skip it: each of their blocks prepares the taps itself,
// warp_prepare_taps in kernels/direct.cuh.)
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace flcc::device {

struct TemplatePrep {
    const float* user;   // the caller's template (device memory), n values
    float* last;         // the template last prepared (device memory), n values
    int64_t n;
    int rows, cols;      // the template as rows x cols (cols = its last extent)
    int tap_row;         // padded row length of the taps (>= cols)
    int lcorr;           // 1: normalised zero-mean taps; 0: flipped taps (convolution)
    int force;           // 1: prepare without comparing (the taps came from elsewhere since)
    int check_finite;    // 1: a non-finite value sets *status and prepares nothing
    float* taps;         // rows x tap_row floats
    double* tap_sum;     // their sum
    int* status;         // non-finite flag (see DeviceExecutor::status)
    int* prepared;       // optional: set to 1 when the taps were prepared, else 0 (for kernels
                         // that derive more from the taps, in stream order after this one)
};

// Enqueues the comparison and, when needed, the preparation on `stream`.
cudaError_t enqueue_template_prep(const TemplatePrep& t, cudaStream_t stream);

}  // namespace flcc::device
