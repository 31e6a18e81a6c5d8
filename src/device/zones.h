// Host-side geometry of the GPU tile kernels: zone rectangles and the guard factor.
#pragma once

#include "device/kernels/tile_params.h"
#include "plan/problem.h"

namespace flcc::device {

// Fills p.rects/p.nrects for output tiles `ot` (planes, rows, cols); returns the total block
// count (blockIdx.x range). See tile_params.h for what the rectangles are.
int make_zones(const Problem& problem, const int ot[3], TileParams& p);

// Rounding bound F of the window sums of one tile (units of u * max|x|^2), from the operation
// counts along the running-sum paths of the tile kernels: plane sums over t0 and up to ot[0]
// steps, horizontal sums over t2 and up to ot[2] steps, vertical over t1 and up to ot[1] steps;
// doubled for safety. The host's equivalent is TileRunner::guard_factor.
double guard_factor(const Extent& templ, const int ot[3]);

// Fills the extents of p from the problem.
void fill_extents(const Problem& problem, TileParams& p);

}  // namespace flcc::device
