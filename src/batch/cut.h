// Cutting one array out of a side's input (a stack or a frame) as float, in the input's element
// type: the first pass over the data, so the conversion happens here and nowhere else.
#pragma once

#include "batch/spec.h"

#include <cmath>
#include <cstdint>
#include <type_traits>

namespace flcc::batch {

namespace detail {

template <class T>
bool cut_typed(const T* in, const Extent& from, const Extent& at, const Extent& e, float* out)
{
    bool finite = true;
    for (int64_t q = 0; q < e[0]; ++q)
        for (int64_t r = 0; r < e[1]; ++r) {
            const T* row = in + ((at[0] + q) * from[1] + (at[1] + r)) * from[2] + at[2];
            float* dst = out + (q * e[1] + r) * e[2];
            for (int64_t c = 0; c < e[2]; ++c) dst[c] = float(row[c]);
            if constexpr (std::is_same_v<T, float>)
                for (int64_t c = 0; c < e[2]; ++c) finite &= std::isfinite(dst[c]);
        }
    return finite;
}

}  // namespace detail

// Writes array i of one frame's input `in` (s.frame_bytes() bytes) to out (volume(s.extent)
// floats). Returns false when a float input holds NaN or Inf.
inline bool cut(const Source& s, const void* in, int i, float* out)
{
    const Extent& from = s.cut ? s.frame : s.extent;
    const Extent at = s.cut ? s.origins[size_t(i)] : Extent{0, 0, 0};
    const int64_t offset = s.cut ? 0 : int64_t(i) * volume(s.extent);
    switch (s.type) {
    case FLCC_UINT16:
        return detail::cut_typed(static_cast<const uint16_t*>(in) + offset, from, at, s.extent, out);
    case FLCC_UINT8:
        return detail::cut_typed(static_cast<const uint8_t*>(in) + offset, from, at, s.extent, out);
    case FLCC_FLOAT32: break;
    }
    return detail::cut_typed(static_cast<const float*>(in) + offset, from, at, s.extent, out);
}

}  // namespace flcc::batch
