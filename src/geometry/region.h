// The output region along one axis (flcc_region): its extent, and the padding that places the
// template's first element of output i at image index i - pad. FULL is every overlap of image
// and template, SAME the image's extent (the template's centre, rounded down for even sizes,
// over each image element, as scipy's "same"), VALID the overlaps with the template inside.
#pragma once

#include "flcc.h"

#include <cstdint>

namespace flcc::geometry {

struct AxisRegion {
    int64_t out;   // output elements along the axis (< 1: none, VALID with t > s)
    int64_t pad;
};

inline AxisRegion axis_region(flcc_region region, int64_t s, int64_t t)
{
    switch (region) {
    case FLCC_FULL: return {s + t - 1, t - 1};
    case FLCC_SAME: return {s, (t - 1) - (t - 1) / 2};
    case FLCC_VALID: break;
    }
    return {s - t + 1, 0};
}

}  // namespace flcc::geometry
