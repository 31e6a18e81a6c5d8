// The specialised template sizes of the direct solvers (specialised_sizes.def, also read by
// generator/gen_direct.py).
#pragma once

namespace flcc::geometry {

struct SizeRange {
    int first, last;   // n in [first, last]
};

#define FLCC_SPECIALISED(name, first, last) constexpr SizeRange name{first, last};
#include "geometry/specialised_sizes.def"
#undef FLCC_SPECIALISED

}  // namespace flcc::geometry
