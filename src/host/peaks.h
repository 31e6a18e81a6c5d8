// Peaks of correlation maps (DESIGN §7): the k highest maxima of a map with an exclusion radius,
// their sub-pixel positions and their quality measures. The batch plans' host solvers run it on
// their maps, and it is the reference the GPU's fused peak search is tested against.
//
// A map is planes x rows x columns (a 2D map has one plane). For each peak:
// - Search: the highest finite value of the map, then the highest at Chebyshev distance more
//   than `exclusion` from every peak found before, and so on (greedy non-maximum suppression);
//   ties go to the lower row-major index. NaN and infinite values are never peaks.
// - Refinement (offsets added to the integer position, per axis of more than one element):
//     parabolic  the vertex of the parabola through the peak and its two neighbours;
//     gaussian   the vertex of the Gaussian through them (the parabola of their logarithms;
//                the parabola itself where a value is not positive);
//     quadratic  the stationary point of the least-squares quadratic (1, x_i, x_i x_j) over the
//                fit^dim neighbourhood (cut at the map's edges), clamped to it; the integer
//                position when that point is not a maximum; parabolic when the neighbourhood
//                has fewer than 3 positions along an axis.
//     upsampled  the highest value of the map's DFT interpolation (below) on the grid of offsets
//                j / upsample, |j| <= ceil(0.75 upsample), around the integer peak; ties go to
//                the grid point nearest the integer peak (Euclidean), then to the first in
//                (plane, row, column) order. The interpolation is periodic, so a refined
//                position near the map's edge may lie outside [0, n - 1] (by up to the grid's
//                reach).
//   A three-point fit gives 0 at the map's edge and when the peak is not the parabola's maximum.
// - DFT interpolation: m(t) = sum_n m[n] prod_axes K_N(t_axis - n_axis), N the map's extent along
//   the axis and K_N the real Dirichlet kernel, the inverse DFT of the map's DFT evaluated off
//   the grid with the Nyquist term of an even N halved (so that m(t) is real):
//     odd N   K_N(x) = sin(pi x) / (N sin(pi x / N))
//     even N  K_N(x) = sin(pi x) cot(pi x / N) / N
//   both 1 at multiples of N and 0 at the other integers, so m(t) is the map at integer t.
//   Non-finite map values count as 0. It is evaluated separably in double: the columns are
//   contracted with a G x N kernel matrix for every row of the map, then the rows, then the
//   planes (G = 2 ceil(0.75 upsample) + 1 grid points along an axis of more than one element, 1
//   along the others): G volume + G^2 planes rows + G^3 planes multiply-adds per peak. The
//   caller provides the scratch, upsample_scratch_doubles(e, upsample) doubles (a batch plan's
//   worker keeps one per thread); with less, the peak keeps its integer position.
// - quality: the value over the highest finite value at Chebyshev distance more than
//   `exclusion` (the second peak); infinity when that is not positive or there is none.
// - psr: (value - mean) / standard deviation of the finite values at distance more than
//   `exclusion` (the sidelobe); 0 when they have no spread or there are none.
// A flat map (every finite value equal, or none finite) gives one peak at PeakSearch::flat_at
// (integer and refined position: the batch plan's zero-displacement position, or the origin
// when its region lacks it)
// with quality 0 and psr 0; peaks not found (fewer than k candidates) have value NaN and
// position -1.
#pragma once

#include "plan/problem.h"

#include <cstdint>

namespace flcc::host {

enum class Refine { none, parabolic, gaussian, quadratic, upsampled };

struct MapPeak {
    float value;
    int64_t at[3];       // integer position: plane, row, column
    double refined[3];   // sub-pixel position
    float quality;
    float psr;
};

// What find_peaks looks for and how it refines it.
struct PeakSearch {
    int k = 1;                    // peaks to find (out holds k)
    int exclusion = 2;            // Chebyshev radius between peaks, >= 0
    Refine refine = Refine::parabolic;
    int fit = 5;                  // quadratic: the neighbourhood, odd, >= 3
    int upsample = 10;            // upsampled: the grid's factor, >= 1 (the batch API: 2 to 1000)
    int64_t flat_at[3] = {0, 0, 0};   // the position of a flat map's peak
    double* scratch = nullptr;    // upsampled: upsample_scratch_doubles(e, upsample) doubles
    int64_t scratch_doubles = 0;
};

// The scratch the upsampled refinement of a map of extent e needs, in doubles: the kernel
// matrices (G x N per axis) and the partial contractions (planes x rows x G, planes x G).
int64_t upsample_scratch_doubles(const Extent& e, int upsample);

// The real Dirichlet kernel K_n(x) of the DFT interpolation (above); exactly 1 at multiples of
// n and exactly 0 at the other integers.
double dft_kernel(int64_t n, double x);

// The upsampled grid of a map of extent e: G[a] points along axis a, at offsets
// (first[a] + g) / upsample from the integer peak.
struct UpsampledGrid {
    int64_t G[3], first[3];
};
UpsampledGrid grid_shape(const Extent& e, int upsample);
// The offset (in grid steps) along `axis` of grid point `index` ((g0 G1 + g1) G2 + g2).
int64_t grid_offset(const UpsampledGrid& g, int64_t index, int axis);

// The DFT interpolation of `map` on the upsampled grid around `at`, into values (G0 G1 G2
// doubles); false (nothing written) when the scratch, upsample_scratch_doubles(e, upsample), is
// short. reuse_kernels: the scratch still holds the kernel matrices of the previous call with
// the same e, at and upsample (several maps interpolated at one place). Allocates nothing.
bool upsampled_values(const float* map, const Extent& e, const int64_t at[3], int upsample,
                      double* scratch, int64_t scratch_doubles, double* values,
                      bool reuse_kernels = false);

// The grid point of highest value, with the tie rule of `upsampled` above.
int64_t upsampled_grid_argmax(const UpsampledGrid& g, const double* values);

// Refines p (value and integer position set) on `map` (extent e) by s.refine, as find_peaks
// does; UPSAMPLED, which needs the whole map, leaves the integer position. The map may be the
// peak's neighbourhood cut from a larger map, max(1, s.fit / 2) on every side that map has (cut
// at its edges): the fits then see what they see on the larger map.
void refine_peak(const float* map, const Extent& e, const PeakSearch& s, MapPeak& p);

// Writes s.k peaks of `map` (extent e) to out[0..s.k-1]. Allocates nothing.
void find_peaks(const float* map, const Extent& e, const PeakSearch& s, MapPeak* out);

}  // namespace flcc::host
