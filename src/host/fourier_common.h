// What the host Fourier solvers share: their cost model and the template's filter.
#pragma once

#include "host/real_fft.h"
#include "plan/problem.h"

#include <algorithm>
#include <cmath>

namespace flcc::host {

// Cost model, seconds per frame: the transforms (an r2c + c2r pair per V log2 V, dearer once a
// box no longer fits the cache), the per-element work around them and the tile pipeline's
// per-row and per-output work. The constants are fitted to FFTW and flcc-bench timings
// (docs/performance.md).
struct FourierCostModel {
    // An r2c + c2r pair, seconds per V log2 V: boxes of up to 2^18 elements, larger 2D boxes,
    // larger 3D boxes.
    double fft_cached = 0.25e-9, fft_large_2d = 0.40e-9, fft_large_3d = 0.28e-9;
    double per_box = 0.7e-9;   // per FFT element: copy in (with the background's sums), product,
                               // copy out
    // The tile pipeline: gathering input boxes (per element of the boxes it fills, and per row
    // in 3D, where rows are short and planes far apart: latency-bound), and per output (window
    // sums and finalisation for LCC, the store for convolution).
    double gather = 0.5e-9, gather_3d = 1.0e-9, gather_row_3d = 60e-9;
    double plane_sums_3d = 0.5e-9;   // 3D LCC: per box plane element, per output plane
    double per_output_lcorr_2d = 1.5e-9, per_output_lcorr_3d = 3.0e-9;
    double per_output_conv = 0.4e-9;
    double fft_thread_efficiency = 0.75;   // FFTW threads: speed-up per thread

    double pair(const Extent& n, int dim) const
    {
        const double v = double(volume(n));
        const double c = v <= double(1 << 18) ? fft_cached : dim == 3 ? fft_large_3d : fft_large_2d;
        return c * v * std::log2(std::max(v, 2.0)) + per_box * v;
    }
};

// The filter of taps t (extent te) for transforms of extent n: the taps zero-padded to n,
// transformed, conjugated and scaled by 1/volume(n) (the inverse transform's normalisation), so
// that a box's product with it is one complex multiply and the inverse transform of the product
// is the circular correlation of the box with the taps. `real` is a buffer of volume(n) floats
// that fft transforms; `filter` receives complex_elems(n) interleaved (re, im) pairs.
void make_filter(const float* taps, const Extent& te, const RealFft& fft, const Extent& n,
                 float* real, float* filter);

// x[c] += base + along[c] over n floats, in double, rounded once: a box's background
// correlation (fourier_accuracy.h) added back to its numerator row.
inline void add_background(float* __restrict x, int64_t n, double base,
                           const double* __restrict along)
{
    for (int64_t c = 0; c < n; ++c) x[c] = float(double(x[c]) + (base + along[c]));
}

}  // namespace flcc::host
