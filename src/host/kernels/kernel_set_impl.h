// Builds one ISA's KernelSet. Included once by each per-ISA unit, after it defines FLCC_ISA_NS
// and FLCC_VECTOR_BYTES.
#pragma once

#include "host/kernels/correlate.h"
#include "host/kernels/tile_ops.h"
#include "host/kernels/window_sums.h"

#include <utility>

namespace flcc::host::FLCC_ISA_NS {

template <int... N>
constexpr void fill_square(CorrelateFn (&table)[33], std::integer_sequence<int, N...>)
{
    ((table[N + 2] = &correlate_square<N + 2>), ...);
}

inline KernelSet make_kernel_set(const char* isa)
{
    KernelSet k{};
    k.isa = isa;
    k.block_cols = kBlockCols;
    k.row_multiple = kRowMultiple;
    k.doubles_per_vector = kDoubles;
    fill_square(k.square, std::make_integer_sequence<int, 31>{});   // 2 .. 32
    k.generic = &correlate_generic;
    k.copy_centre = &copy_centre;
    k.copy_scaled = &copy_scaled;
    k.sum = &sum;
    k.extent = &extent;
    k.sum_squares = &sum_squares;
    k.finite_extent = &finite_extent;
    k.finite_moments = &finite_moments;
    k.plane_sums_init = &plane_sums_init;
    k.plane_sums_advance = &plane_sums_advance;
    k.lcc_plane = &lcc_plane;
    k.copy_moments = &copy_moments;
    k.multiply_spectra = &multiply_spectra;
    return k;
}

}  // namespace flcc::host::FLCC_ISA_NS
