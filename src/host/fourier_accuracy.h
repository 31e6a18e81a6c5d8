// What keeps the host Fourier LCC numerator within the numerical contract (DESIGN.md section 4).
// The FFT's rounding error in a numerator is relative to the energy of the whole transform, not
// of the window: |dN| <= E = c u sqrt(log2 V) rms(box) (u = 2^-24, c measured), so a window of
// variance sum D gets |dr| <= E / sqrt(D). Three measures:
// - Zero-sum taps: the numerator's invariance to constants (tile centring, the background
//   below) needs the template's taps to sum to 0 once rounded to float.
// - The background. Before the transform, each box loses its additive background
//   b(a, i, c) = m + e0[a] + e1[i] + e2[c] (the means of its planes, rows and columns): the
//   energy of gradients (a uint16 ramp), of steps along an axis (plateaus, panels) and of the
//   padding next to the image then no longer sets the error. The background's correlation with
//   the template is a sum of three 1D correlations with the template's marginals, computed in
//   double and added back after the transform.
// - The a-posteriori check. Windows of small variance next to large values remain (a corner
//   of the full region holding one small image value, tiny templates, structure that is not
//   additive). Once the pipeline has made r = N / sqrt(D), sqrt(D) = |N / r| is known for free:
//   where it is below E / kTargetError the coefficient is recomputed directly, in double.
#pragma once

#include "host/tile_runner.h"
#include "plan/problem.h"

#include <vector>

namespace flcc::host {

// Moves the rounding residual of the taps' sum onto the smallest taps that can take it, so
// that the float taps sum to 0 (or ~1e-12), changing no tap by more than the residual.
// Otherwise a window far from its box's mean (a ramp at a box's edge) carries
// (window mean - box mean) x sum into r.
void make_zero_sum(float* taps, int64_t n);

// Sums of the template along each axis ("marginals": marg[0][a] = sum over rows and columns
// of plane a, ...) and in total, in double: the correlation of a background with the template.
struct TemplateMarginals {
    std::vector<double> marg[3];
    double total = 0;
    void compute(const float* taps, const Extent& t);
};

// The additive background of one box, fitted while the box is copied into the transform buffer,
// subtracted, and correlated with the template. Per-thread scratch, sized for the largest box.
class Background {
public:
    // `ks`: the kernels of the copy (copy_moments).
    Background(const Extent& max_box, const KernelSet& ks);

    // Starts a box of extent `box`.
    void begin(const Extent& box);
    // dst = src for row i of plane a of the box (box[2] floats), accumulating its sums.
    void copy_row(float* dst, const float* src, int64_t a, int64_t i);
    // Fits the background; true when it holds enough of the box's energy to be worth removing.
    bool fit();
    // Energy (sum of squares) of the box as copied.
    double energy() const { return energy_; }
    // real -= background over the box (rows of n[2] floats, n[1] rows per plane); returns the
    // energy of the result. Every value of the background is an exact float (its terms sit on
    // one grid 2^k, their sums below 2^24 units), so the subtraction rounds relative to the
    // residual only.
    double subtract(float* real, const Extent& n) const;
    // The background's correlation with the template at outputs [0, out[a]) per axis, as
    // constant + along[0][q] + along[1][r] + along[2][c] (double).
    void correlate(const TemplateMarginals& t, const Extent& out);
    double constant() const { return constant_; }
    const double* along(int a) const { return along_[a].data(); }

private:
    const KernelSet& ks_;
    Extent box_{};
    double energy_ = 0, constant_ = 0;
    float mean_ = 0;
    std::vector<double> sums_[2];      // per plane, per row index
    AlignedArray<float> col_sums_;     // per column, over the box's rows
    std::vector<float> effect_[3];     // the fitted effects, on the grid
    std::vector<double> along_[3];     // correlate()'s per-axis terms
};

// The bound E on the FFT numerator's error for a transform of fft_volume elements of a box of
// box_volume elements and sum of squares `energy`.
double fft_error_bound(double energy, int64_t box_volume, int64_t fft_volume);

// The a-posteriori rule for a numerator that came out exactly 0, whose |N / r| says nothing:
// its window is recomputed where D / n < (E / kTargetError)^2, the value returned for the bound
// E (LccPlaneArgs::zero_num_d; 0 for E = 0).
double zero_numerator_limit(double bound);

// The a-posteriori check of one LCC tile, after the pipeline stored its coefficients: for
// every output with r != 0 and |N| kTargetError < E |r|, recomputes r directly from the
// original frame, in double around the window's mean. `numerator` holds N with strides
// num_row, num_plane; taps are the normalised template, tap_sum their sum in double; frame and
// out_frame are the whole input and output frames.
void check_lcc_tile(const Problem& p, const TileView& t, const float* numerator, int64_t num_row,
                    int64_t num_plane, double bound, const float* taps, double tap_sum,
                    const float* frame, float* out_frame);

}  // namespace flcc::host
