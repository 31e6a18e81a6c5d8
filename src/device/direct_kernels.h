// The table of generated GPU direct kernels (generator/gen_direct.py writes one translation unit
// per kernel and the table itself into the build tree). Each entry is one specialised template
// size, or a generic kernel (t = 0), with its tile shape and entry points.
#pragma once

#include "device/kernels/tile_params.h"

#include <cuda_runtime.h>

#include <cstddef>

namespace flcc::device {

struct DirectKernel {
    const char* name;    // solver name, e.g. "device.direct2.k16"
    int dim;             // 2 or 3
    int t[3];            // compiled-in template extent (planes, rows, cols); 0 = any
    struct Shape {
        int ot[3];       // output tile of a block (planes, rows, cols)
        int threads;     // threads per block
    } conv, lcorr;       // each operation has its own tile
    // Enqueues the kernel (LCC or convolution) on `stream`.
    cudaError_t (*launch)(const TileParams& p, bool lcorr, dim3 grid, size_t smem, cudaStream_t stream);
    // Allows up to `smem` bytes of dynamic shared memory to both of its kernels.
    cudaError_t (*prepare)(size_t smem);
};

extern const DirectKernel kDirectKernels[];
extern const int kDirectKernelCount;

}  // namespace flcc::device
