// The tile pipeline shared by the host solvers. The output of every frame is cut into tiles that
// are processed independently (and in parallel): gather the tile's input box from the image,
// zero-padded, while checking it is finite; for LCC centre it on its own mean (scaling by a power
// of two when its magnitude is extreme); compute the numerator with the solver's method; for
// LCC turn numerator and window sums into coefficients; store. Each tile restarts its sums, so
// errors are bounded by the tile's own data, and nothing in it touches the whole image twice.
#pragma once

#include "host/kernels/kernel_set.h"
#include "plan/problem.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace flcc::host {

// 64-byte aligned, zero-initialised array. Large arrays are fresh pages mapped from the kernel
// (zero already, paid for when first touched), small ones come from calloc: a plan's buffers
// (megabytes per thread for the Fourier tiles) are not written at plan time, so a plan found in
// wisdom is made quickly. (calloc alone writes its zeros whenever malloc reuses freed memory,
// as it does for a program that makes plan after plan.)
template <class T>
class AlignedArray {
public:
    AlignedArray() = default;
    explicit AlignedArray(int64_t n);
    T* data() { return p_.get(); }
    const T* data() const { return p_.get(); }
    int64_t size() const { return n_; }

private:
    // Frees the block that holds the array (the array starts at its first 64-byte boundary).
    struct Free {
        void* block = nullptr;
        size_t mapped_bytes = 0;   // 0: the block is from calloc
        void operator()(T*) const;
    };
    std::unique_ptr<T, Free> p_;
    int64_t n_ = 0;
};

// A run of outputs along one axis. Boundary runs are outputs whose windows reach into the zero
// padding (FULL and SAME regions): their tiles are not centred, because a window that is mostly
// padding is well conditioned only when the padding stays exactly zero (its condition number
// RMS/sigma is then at most sqrt(n / padded elements)). Interior tiles centre on their own mean.
struct Segment {
    int64_t start, length;
    bool boundary;
};

// The layout of one tile's buffers: the centred input box and the numerator block.
struct TileLayout {
    Extent out{};      // largest real output extent of a tile (planes, rows, cols)
    Extent padded{};   // out rounded up to the numerator kernel's row/column multiples
    Extent in{};       // input box: padded + templ - 1 (planes: out + templ - 1)
    int64_t in_row = 0, in_plane = 0;     // strides of the input box
    int64_t num_row = 0, num_plane = 0;   // strides of the numerator block
    std::vector<Segment> segments[3];   // tiles along each axis
    int64_t tiles_per_frame() const
    {
        return int64_t(segments[0].size() * segments[1].size() * segments[2].size());
    }
};

// Per-thread working memory of the pipeline.
struct TileScratch {
    AlignedArray<float> x, num;
    AlignedArray<double> z1, z2, v1, v2, q1, q2, zeros;
};

// A tile as the numerator sees it: centred (LCC) or raw (convolution) input box and the
// numerator block to fill, for `planes` output planes of `rows` x `cols` (padded) outputs.
struct TileView {
    const float* x;
    int64_t x_row, x_plane;
    float* num;
    int64_t num_row, num_plane;
    int64_t planes, rows, cols;        // padded extents to compute
    int64_t real_rows, real_cols;      // real outputs (the rest is discarded)
    Extent origin;                     // output index of the tile's first output
    bool boundary;                     // not centred: some window reaches into the padding
    double centre, scale;              // the box holds (frame value - centre) * scale
};

// Computes the numerator of one tile (direct kernels, FFTs, ...); `thread` indexes the
// solver's own per-thread state.
class Numerator {
public:
    virtual ~Numerator() = default;
    // Returns false when some value it wrote is not finite, if it checks: the direct kernels
    // do (run_in_place relies on it); the transform numerators return true (never in place).
    virtual bool compute(const TileView& tile, int thread) = 0;
    // LCC: the normalised template the numerator correlates with (planes x rows x cols), used
    // to recompute the numerator of ill-conditioned windows around their own mean.
    virtual const float* lcc_taps() const { return nullptr; }
    // The sum of lcc_taps() in double.
    virtual double lcc_tap_sum() const { return 0; }
    // LccPlaneArgs::zero_num_d for the tile this numerator last computed on `thread` (0: its
    // numerators are exact enough that a 0 is a 0).
    virtual double lcc_zero_num_d(int) const { return 0; }
};

class TileRunner {
public:
    // `tile` is the largest real output tile. The numerator computes whole multiples of
    // `row_multiple` rows and `col_multiple` columns per plane (the direct kernels' block; 1 for
    // numerators without one); the extra outputs are discarded.
    // `in_place` (convolution only; the numerator must read the input box and write its block
    // through the view's pointers and strides alone, and nothing outside rows x cols): interior
    // tiles are cut to whole multiples and run straight from the frame into the output, without
    // the gather and store passes (run_in_place).
    TileRunner(const Problem& p, const KernelSet& ks, Extent tile, int row_multiple,
               int col_multiple, bool in_place = false);

    const TileLayout& layout() const { return layout_; }
    const KernelSet& kernel_set() const { return ks_; }
    TileScratch make_scratch() const;
    int64_t scratch_bytes() const;

    // Processes tile `index` of one frame. Returns false when the input box holds a non-finite
    // value (and the problem asks for the check); the output of that tile is then undefined.
    bool run(const float* frame, float* out_frame, int64_t index, TileScratch& s,
             Numerator& numerator, int thread) const;

private:
    struct Box {
        Extent origin, real;   // output origin and real extent of the tile
        bool boundary;         // some window of the tile reaches into the padding
    };
    Box box_of(int64_t index) const;
    // Convolution of an interior tile of whole row and column multiples, read from the frame
    // and written to the output in place; the finite check is done on the outputs.
    bool run_in_place(const float* frame, float* out_frame, const Box& b, Numerator& numerator,
                      int thread) const;
    // Calls f(dst_row, src_or_null, lead, n) for every row of the tile's input box: the row's
    // real values are src[0..n) and belong at dst_row[lead..lead+n); null src: no real values.
    template <class F>
    void for_box_rows(const float* frame, const Box& b, float* x, F&& f) const;
    // Mean of a sample of the box's real values (every 8th row): the centring constant,
    // rounded to an integer when the sample is integral (so integer data stays exact).
    double centre_of(const float* frame, const Box& b) const;
    double guard_factor(const Box& b) const;

    Problem p_;
    const KernelSet& ks_;
    int row_multiple_, col_multiple_;
    bool in_place_;
    TileLayout layout_;
};

}  // namespace flcc::host
