// The correlation kernel of the GPU batch engine's direct form ("device.batch.direct"): one
// block per pair, start to finish in shared memory, for pairs small enough that their FFT boxes
// would be mostly padding:
//   1. gather the image's box values (batch_kernels.cuh's prepare_images: centred and scaled
//      for LCC) with the region's zero padding around them, and the pair's taps;
//   2. the numerators in float, each thread kDirectRY x kDirectRX outputs, template rows
//      outermost; a tile's loops visit only the template rows and columns that meet the image
//      (a FULL region's corners cost what their real products cost);
//   3. LCC: batch_kernels.cuh's banded finalisation from the shared values; else the sums are
//      the map.
// The numerators' rounding is the GPU direct kernel's (kernels/direct.cuh): float sums of the
// centred values, whose error coefficient() bounds through its condition test, so no FFT
// error bound applies.
#pragma once

#include "device/batch_kernels.cuh"

namespace flcc::device::batch {

constexpr int kDirectRY = 2, kDirectRX = 4;
constexpr int kDirectMaxThreads = 256;

// The shared arrays of one pair: the padded box (rows x cols floats; every float4 a thread
// reads lies inside), the taps (T1 x tap_row floats, zeros past T2), the numerators (O1 x O2
// floats) and, for LCC, the banded finalisation's sums (2 x kBand x (w + 1) doubles, first).
struct DirectLayout {
    int out_rows, out_cols;   // the outputs rounded up to whole thread tiles
    int tap_row, rows, cols;
    int64_t band_doubles, floats;

    DirectLayout(int h, int w, int T1, int T2, int O1, int O2, bool lcc)
    {
        out_rows = (O1 + kDirectRY - 1) / kDirectRY * kDirectRY;
        out_cols = (O2 + kDirectRX - 1) / kDirectRX * kDirectRX;
        tap_row = (T2 + 3) / 4 * 4;
        rows = out_rows + T1 - 1;
        cols = out_cols + tap_row;
        band_doubles = lcc ? banded_doubles(w) : 0;
        floats = int64_t(rows) * cols + int64_t(T1) * tap_row + int64_t(O1) * O2;
    }
    int64_t bytes() const { return band_doubles * 8 + floats * 4; }
    int tiles() const { return (out_rows / kDirectRY) * (out_cols / kDirectRX); }
};

struct DirectParams {
    FinalParams q;              // circ and bounds unused
    const float* box;           // the images' boxes (bh x bw each, the image at the origin)
    const float* templ_values;  // CONV and XCORR: the templates' compact values
    int tap_row, rows, cols, out_cols;
    int64_t band_doubles;
};

// At most 80 registers: 6 blocks of 128 threads per multiprocessor, as many as the shared
// memory of 32 x 32 pairs allows (the numerator loop is bound by instruction issue, which more
// warps feed).
__global__ void __launch_bounds__(kDirectMaxThreads, 3) direct_pairs(DirectParams d)
{
    constexpr int RY = kDirectRY, RX = kDirectRX;
    extern __shared__ double shared[];
    const FinalParams& q = d.q;
    double* band = shared;
    float* x = reinterpret_cast<float*>(shared + d.band_doubles);
    float* taps = x + d.rows * d.cols;
    float* num = taps + q.T1 * d.tap_row;
    const int tiles_x = d.out_cols / RX, tiles = (d.rows - q.T1 + 1) / RY * tiles_x;
    const float inv_cols = 1.f / float(d.cols), inv_tap_row = 1.f / float(d.tap_row);
    const float inv_tiles_x = 1.f / float(tiles_x);
    const int64_t boxes = int64_t(q.bh) * q.bw, outs = int64_t(q.O1) * q.O2;
    for (int p = blockIdx.x; p < q.pairing.total(); p += gridDim.x) {
        const int image = q.pairing.image_of(p), templ = q.pairing.templ_of(p);
        // 1. The padded box: shared (k, m) is image (k - P1, m - P2), zero outside.
        const float* src = d.box + image * boxes;
        for (int e = threadIdx.x; e < d.rows * d.cols; e += blockDim.x) {
            const int k = quotient(e, d.cols, inv_cols), j = k - q.P1, c = e - k * d.cols - q.P2;
            x[e] = j >= 0 && j < q.h && c >= 0 && c < q.w ? src[int64_t(j) * q.bw + c] : 0.f;
        }
        // The taps in correlation order (convolution: the template reversed).
        const float* t = q.lcc ? q.taps + int64_t(templ) * q.T1 * q.T2
                               : d.templ_values + int64_t(templ) * q.T1 * q.T2;
        for (int e = threadIdx.x; e < q.T1 * d.tap_row; e += blockDim.x) {
            const int i = quotient(e, d.tap_row, inv_tap_row), j = e - i * d.tap_row;
            float v = 0.f;
            if (j < q.T2) v = q.correlate ? t[i * q.T2 + j] : t[(q.T1 - 1 - i) * q.T2 + q.T2 - 1 - j];
            taps[e] = v;
        }
        __syncthreads();
        // 2. The numerators: tile (r0, c0) sums rows r0 + i, columns c0 + j of the box with tap
        //    (i, j), over the rows i and float4 column groups j that reach the image.
        for (int tile = threadIdx.x; tile < tiles; tile += blockDim.x) {
            const int ty = quotient(tile, tiles_x, inv_tiles_x), r0 = ty * RY, c0 = (tile - ty * tiles_x) * RX;
            const int i_lo = max(0, q.P1 - r0 - RY + 1), i_hi = min(q.T1, q.P1 - r0 + q.h);
            const int j_lo = max(0, q.P2 - c0 - RX + 1) & ~3, j_hi = min(q.T2, q.P2 - c0 + q.w);
            float acc[RY][RX];
#pragma unroll
            for (int r = 0; r < RY; ++r)
#pragma unroll
                for (int c = 0; c < RX; ++c) acc[r][c] = 0.f;
            for (int i = i_lo; i < i_hi; ++i) {
                const float* trow = taps + i * d.tap_row;
                // in[r][0..7]: box row r0 + r + i from column c0 + j0, sliding by four.
                float in[RY][8];
#pragma unroll
                for (int r = 0; r < RY; ++r) {
                    const float4 v = *reinterpret_cast<const float4*>(x + (r0 + r + i) * d.cols + c0 + j_lo);
                    in[r][4] = v.x, in[r][5] = v.y, in[r][6] = v.z, in[r][7] = v.w;
                }
                // One float4 group of taps: the window moves on by four columns, then RY x RX x 4
                // products. Two groups per trip, so that the window's moves are renamings.
                const auto group = [&](int j0) {
                    const float4 tv = *reinterpret_cast<const float4*>(trow + j0);
                    const float tt[4] = {tv.x, tv.y, tv.z, tv.w};
#pragma unroll
                    for (int r = 0; r < RY; ++r) {
                        const float4 v =
                            *reinterpret_cast<const float4*>(x + (r0 + r + i) * d.cols + c0 + j0 + 4);
                        in[r][0] = in[r][4], in[r][1] = in[r][5], in[r][2] = in[r][6], in[r][3] = in[r][7];
                        in[r][4] = v.x, in[r][5] = v.y, in[r][6] = v.z, in[r][7] = v.w;
#pragma unroll
                        for (int jj = 0; jj < 4; ++jj)
#pragma unroll
                            for (int c = 0; c < RX; ++c) acc[r][c] = fmaf(in[r][c + jj], tt[jj], acc[r][c]);
                    }
                };
                int j0 = j_lo;
#pragma unroll 1
                for (; j0 + 4 < j_hi; j0 += 8) {
                    group(j0);
                    group(j0 + 4);
                }
                if (j0 < j_hi) group(j0);
            }
#pragma unroll
            for (int r = 0; r < RY; ++r)
#pragma unroll
                for (int c = 0; c < RX; ++c)
                    if (r0 + r < q.O1 && c0 + c < q.O2) num[(r0 + r) * q.O2 + c0 + c] = acc[r][c];
        }
        __syncthreads();
        // 3. The map.
        if (q.lcc) {   // x and the numerators lie in shared memory: one load at a time
            finalise_pair_banded<1>(
                q, p, [&](int j, int c) { return x[(j + q.P1) * d.cols + c + q.P2]; },
                [&](int r, int oc) { return num[r * q.O2 + oc]; }, 0.0, band, 0, q.O1);
        } else {
            float* map = q.maps + p * outs;
            for (int e = threadIdx.x; e < outs; e += blockDim.x) map[e] = num[e];
        }
        __syncthreads();   // the next pair rewrites the shared arrays
    }
}

}  // namespace flcc::device::batch
