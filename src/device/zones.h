// Host-side geometry of the GPU tile kernels: zone rectangles and the guard factor.
#pragma once

#include "device/kernels/tile_params.h"
#include "plan/problem.h"

namespace flcc::device {

// Fills p.rects/p.nrects for output tiles `ot` (planes, rows, cols); returns the total block
// count (blockIdx.x range). See tile_params.h for what the rectangles are.
int make_zones(const Problem& problem, const int ot[3], TileParams& p);

// Rounding bound F of the window sums of one tile of ot (planes, rows, cols) outputs
// (geometry::tile_kernel_guard).
double guard_factor(const Extent& templ, const int ot[3]);

// Fills the extents of p from the problem.
void fill_extents(const Problem& problem, TileParams& p);

}  // namespace flcc::device
