// Parameters of the GPU tile kernels, shared by host and device code (plain data, passed by
// value as kernel parameters).
//
// The output of a frame is cut into zone rectangles, as on the host (src/host/tile_runner.h):
// per axis, outputs whose windows reach into the zero padding form boundary runs and the rest
// the interior; a rectangle is one combination (3 x 3 x 3 at most). Boundary rectangles are
// computed uncentred, interior ones centred on each block's own mean: a window mostly in the
// padding is well conditioned only when the padding stays exactly zero. Each rectangle is cut
// into blocks of the kernel's output tile; blockIdx.x enumerates all blocks of all rectangles,
// blockIdx.y the frame.
#pragma once

#include <cstdint>

#ifdef __CUDACC__
#define FLCC_HD __host__ __device__
#else
#define FLCC_HD
#endif

namespace flcc::device {

constexpr int kMaxRects = 27;

struct ZoneRect {
    int origin[3];    // first output (planes, rows, cols)
    int size[3];      // outputs
    int blocks[3];    // tiles per axis
    int first_block;  // blockIdx.x of the rectangle's first tile
    int boundary;     // 1: uncentred
};

struct TileParams {
    const float* image;        // frame 0
    float* out;                // frame 0
    int64_t image_frame;       // elements between frames
    int64_t out_frame;
    int S[3], O[3], P[3], T[3];   // image, output, padding, template extents (planes, rows, cols)
    const float* taps;         // T[0] x T[1] x tap_row floats, rows zero-padded (device memory)
    int tap_row;               // >= T[2], a multiple of 4
    const double* tap_sum;     // sum of the taps in double (device memory, after the taps)
    const float* user_templ;   // non-null (small 2D kernels only): the caller's device template,
                               // from which each block prepares its own taps; taps and tap_sum
                               // are then unused
    int nrects;
    ZoneRect rects[kMaxRects];
    int lcorr;                 // 1: LCC, 0: convolution
    double n;                  // template elements
    double guard;              // F: rounding bound of the window sums in units of u * max|x|^2
    int check_finite;
    int* status;               // set to 1 when a non-finite input value is seen
};

// Doubles of shared scratch for the block reduction (6 per warp, 32 warps at most).
constexpr int kScratchDoubles = 6 * 32;
// Doubles of shared memory for a block that prepares its own taps: their sum and a flag.
// (Dynamic shared memory: static __shared__ variables would lower the dynamic limit the
// kernels are given, the device's whole opt-in size.)
constexpr int kOwnTapDoubles = 2;

// Shared-memory layout of a block, in elements; the same arithmetic on host and device.
struct DirectLayout {
    int iz, iy, ix, xs;          // input box: planes, rows, columns, row stride (floats)
    int64_t x_floats, tap_floats, h_doubles, z_doubles;
    // Convolution needs no window sums, so its blocks hold only the input box and the taps.
    FLCC_HD DirectLayout(int otz, int oty, int otx, int t0, int t1, int t2, int tap_row, bool lcorr)
    {
        iz = otz + t0 - 1;
        iy = oty + t1 - 1;
        ix = otx + t2 - 1;
        xs = (otx + tap_row + 3) / 4 * 4;   // generic kernels read whole tap rows
        x_floats = int64_t(iz) * iy * xs;
        tap_floats = int64_t(t0) * t1 * tap_row;
        h_doubles = lcorr ? 2 * int64_t(iy) * otx : 0;
        z_doubles = lcorr && t0 > 1 ? 2 * int64_t(iy) * xs : 0;
    }
    FLCC_HD int64_t bytes() const
    {
        return 8 * (h_doubles + z_doubles + kScratchDoubles + kOwnTapDoubles) +
               4 * ((x_floats + tap_floats + 3) / 4 * 4);
    }
};

}  // namespace flcc::device
