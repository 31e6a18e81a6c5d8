// The interior of an output axis: output o's window covers image [o - pad, o - pad + T - 1],
// inside the image for o in [pad, S - T + pad]. Per axis the outputs [0, lo) and [hi, out)
// are boundary runs (their windows reach into the zero padding of FULL and SAME regions) and
// [lo, hi) the interior (empty when lo == hi). The host tile pipeline, the GPU tile kernels'
// zones and the GPU Fourier tiles cut their outputs at these runs: a window mostly in the
// padding is well conditioned only when the padding stays exactly zero, so boundary runs are
// computed uncentred and interior ones centred.
#pragma once

#include <algorithm>
#include <cstdint>

namespace flcc::geometry {

struct Interior {
    int64_t lo, hi;   // 0 <= lo <= hi <= out
};

// s: image extent, t: template extent, out and pad: the region's (axis_region).
inline Interior axis_interior(int64_t s, int64_t t, int64_t out, int64_t pad)
{
    const int64_t lo = std::min(pad, out);
    return {lo, std::max(lo, std::min(out, s - t + pad + 1))};
}

}  // namespace flcc::geometry
