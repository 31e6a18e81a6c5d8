// The host kernels of one instruction set, as a table of plain functions. Each ISA translation
// unit (kernels_baseline.cpp, kernels_avx2.cpp, kernels_avx512.cpp) compiles the same kernel
// sources with its own flags and fills one table; select_kernel_set() picks the best the CPU
// runs, at run time, so the library is correct without -march=native.
#pragma once

#include <cstdint>
#include <limits>

namespace flcc::host {

// Valid correlation of one 2D plane block:
//   out[y*os + x] (+)= sum_{i<th, j<tw} in[(y+i)*is + x + j] * taps[i*tw + j]
// for y < rows, x < cols. rows must be a multiple of KernelSet::row_multiple and cols of
// KernelSet::block_cols; the input must hold rows+th-1 rows of cols+tw-1 readable floats.
// Specialised kernels ignore th/tw (they are compiled in). Returns whether every value it
// stored is finite (checked on the accumulators in registers, almost free).
using CorrelateFn = bool (*)(const float* in, int64_t is, const float* taps, int th, int tw,
                             float* out, int64_t os, int64_t rows, int64_t cols, bool accumulate);

// Statistics of the real (non-padding) image values gathered into a tile.
struct TileStats {
    float vmin = 0, vmax = 0;
    bool finite = true;
    bool integral = true;    // every value an integer
    int64_t count = 0;
};

// The finite values' highest, sum, sum of squares and count (KernelSet::finite_moments).
struct FiniteMoments {
    double top = -std::numeric_limits<double>::infinity();
    double sum = 0, sum2 = 0;
    int64_t count = 0;
};

// One output plane of an LCC tile: window sums of the centred input, and the finalisation
// r = N / sqrt(D) with the zero-variance guard and the clamp, written to out.
struct LccPlaneArgs {
    const float* x = nullptr;     // centred input tile, first plane of this output plane
    int64_t x_row = 0, x_plane = 0;
    const double* z1 = nullptr;   // 3D: sums over t0 planes of x and x^2 (in_rows x z_row)
    const double* z2 = nullptr;
    int64_t z_row = 0;
    float* num = nullptr;         // numerator with the normalised template; becomes r
    int64_t num_row = 0;
    int64_t rows = 0, cols = 0;   // real outputs of this plane
    int64_t t1 = 0, t2 = 0;
    double n = 0;                 // template elements
    double tau_abs = 0;           // guard on n*S2 - S1^2; negative selects exact mode (D <= 0)
    double small_s2 = 0;          // guarded mode: windows the guard zeroes whose S2 lies in
                                  // (0, small_s2) are far smaller than the tile's magnitude, so
                                  // the tile-wide bound overstates their error: recompute them
    double zero_num_d = 0;        // Fourier numerators: a resolvable window whose numerator is
                                  // exactly 0 and whose D / n lies below this is recomputed (its
                                  // true numerator may be anything within the transform's error;
                                  // 0: none)
    float* out = nullptr;         // where the coefficients go (real columns only)
    int64_t out_row = 0;
    double* v1 = nullptr;         // scratch: >= cols + t2 + 2*kDoubles doubles each
    double* v2 = nullptr;
    double* q1 = nullptr;
    double* q2 = nullptr;
    const double* zeros = nullptr;   // a row of zeros as wide as v1
    // Ill-conditioned windows are recomputed from the original image values (see
    // window_sums.h): the normalised template (t0 x t1 x t2; null disables this), the frame,
    // its extent, and the image coordinates of this plane's window (0, 0) (may be padding).
    const float* taps = nullptr;
    double tap_sum = 0;           // sum of taps in double (0 but for rounding)
    int64_t t0 = 1;
    const float* frame = nullptr;
    int64_t image[3] = {0, 0, 0};
    int64_t box[3] = {0, 0, 0};
};

struct KernelSet {
    const char* isa;
    int block_cols;          // column multiple of every CorrelateFn
    int row_multiple;        // row multiple of every CorrelateFn
    int doubles_per_vector;
    CorrelateFn square[33];  // square[n]: n x n template, n in [2, 32]; others null
    CorrelateFn generic;     // any th x tw

    // dst = src - c over n values, accumulating the statistics of src into st.
    void (*copy_centre)(float* dst, const float* src, int64_t n, float c, TileStats& st);
    // dst = (src - c) * scale, computed in double and rounded to float.
    void (*copy_scaled)(float* dst, const float* src, int64_t n, double c, double scale);
    // Sum of n values in double; clears `integral` when some value is not an integer.
    double (*sum)(const float* src, int64_t n, bool& integral);
    // The lowest and highest of n values (NaN left out) into lo and hi, which hold their
    // running values on entry.
    void (*extent)(const float* src, int64_t n, float& lo, float& hi);
    // Sum of the squares of n values in double.
    double (*sum_squares)(const float* src, int64_t n);
    // The peak search's passes over a map, over its finite values: their lowest and highest
    // (running values in lo and hi), and their highest, sums and count (added to m).
    void (*finite_extent)(const float* src, int64_t n, float& lo, float& hi);
    void (*finite_moments)(const float* src, int64_t n, FiniteMoments& m);
    // z = sum over t0 consecutive planes of x (z1) and x^2 (z2), planes of rows x cols floats
    // with strides x_row/x_plane; `advance` moves an existing z from plane p to plane p+1.
    void (*plane_sums_init)(const float* x, int64_t x_row, int64_t x_plane, int64_t t0,
                            int64_t rows, int64_t cols, double* z1, double* z2, int64_t z_row);
    void (*plane_sums_advance)(const float* x, int64_t x_row, int64_t x_plane, int64_t t0,
                               int64_t p, int64_t rows, int64_t cols, double* z1, double* z2,
                               int64_t z_row);
    void (*lcc_plane)(const LccPlaneArgs& a);

    // The Fourier numerator's passes over its transform buffers.
    // dst = src over n floats; sum and squares receive the sum and the sum of squares of src,
    // accumulated in float per vector lane (the background's estimates, not exact sums).
    void (*copy_moments)(float* dst, const float* src, int64_t n, float& sum, float& squares);
    // s *= w over n complex values stored as interleaved (re, im) floats.
    void (*multiply_spectra)(float* s, const float* w, int64_t n);
};

const KernelSet* kernel_set_baseline();
const KernelSet* kernel_set_avx2();     // null when not compiled in
const KernelSet* kernel_set_avx512();   // null when not compiled in

// The best kernel set this CPU runs. The environment variable FLCC_HOST_ISA (baseline, avx2,
// avx512) caps the choice, so tests can cover every code path on one machine.
const KernelSet& select_kernel_set();

// Every kernel set this CPU can run (for tests).
int runnable_kernel_sets(const KernelSet* out[3]);

}  // namespace flcc::host
