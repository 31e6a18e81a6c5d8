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
//   A three-point fit gives 0 at the map's edge and when the peak is not the parabola's maximum.
// - quality: the value over the highest finite value at Chebyshev distance more than
//   `exclusion` (the second peak); infinity when that is not positive or there is none.
// - psr: (value - mean) / standard deviation of the finite values at distance more than
//   `exclusion` (the sidelobe); 0 when they have no spread or there are none.
// A flat map (every finite value equal, or none finite) gives one peak at the origin with
// quality 0 and psr 0; peaks not found (fewer than k candidates) have value NaN and position -1.
#pragma once

#include "plan/problem.h"

#include <cstdint>

namespace flcc::host {

enum class Refine { none, parabolic, gaussian, quadratic };

struct MapPeak {
    float value;
    int64_t at[3];       // integer position: plane, row, column
    double refined[3];   // sub-pixel position
    float quality;
    float psr;
};

// Writes k peaks of `map` (extent e) to out[0..k-1]. fit: the quadratic's neighbourhood (odd,
// >= 3). Allocates nothing.
void find_peaks(const float* map, const Extent& e, int k, int exclusion, Refine refine, int fit,
                MapPeak* out);

}  // namespace flcc::host
