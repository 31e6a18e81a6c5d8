// The direct correlation kernel: register-blocked valid correlation of a 2D plane.
//
// A block of R output rows x V vectors of outputs lives in registers. The kernel slides over the
// input rows k = 0 .. th+R-2: each input vector it loads at (k, j) serves every output row r of
// the block whose template row k - r exists, so one load feeds up to R fused multiply-adds and
// one broadcast template value feeds V. The k loop splits into a head (k < R-1: rows 0..k),
// a body (all R rows) and a tail (k >= th: rows k-th+1..R-1), each with compile-time row ranges,
// so no multiply is wasted on padding and the accumulators stay in registers.
//
// TH/TW > 0 compiles the template extent in (fully unrolled column loop); 0 means run time.
#pragma once

#include "host/kernels/simd.h"

namespace flcc::host::FLCC_ISA_NS {

// V: vectors per block row. 32 vector registers (AVX-512) hold 4x4 accumulators plus operands;
// 16 registers (AVX2, SSE2) hold 4x2.
constexpr int kBlockVectors = kVectorBytes == 64 ? 4 : 2;
constexpr int kBlockCols = kBlockVectors * kFloats;
constexpr int kRowMultiple = 4;

// Adds input row k's contribution to output rows RLO..RHI of the block.
template <int TW, int R, int RLO, int RHI>
FLCC_INLINE void row_step(const float* row, const float* taps, int64_t k, int tw_rt,
                          vf (&acc)[R][kBlockVectors])
{
    constexpr int V = kBlockVectors;
    const int tw = TW > 0 ? TW : tw_rt;
    if constexpr (TW > 0) {
#pragma GCC unroll 64
        for (int j = 0; j < TW; ++j) {
            vf xv[V];
#pragma GCC unroll 8
            for (int v = 0; v < V; ++v) xv[v] = loadu(row + j + v * kFloats);
#pragma GCC unroll 8
            for (int r = RLO; r <= RHI; ++r) {
                const vf b = splat(taps[(k - r) * TW + j]);
#pragma GCC unroll 8
                for (int v = 0; v < V; ++v) acc[r][v] = fmadd(xv[v], b, acc[r][v]);
            }
        }
    } else {
        for (int j = 0; j < tw; ++j) {
            vf xv[V];
#pragma GCC unroll 8
            for (int v = 0; v < V; ++v) xv[v] = loadu(row + j + v * kFloats);
#pragma GCC unroll 8
            for (int r = RLO; r <= RHI; ++r) {
                const vf b = splat(taps[(k - r) * tw + j]);
#pragma GCC unroll 8
                for (int v = 0; v < V; ++v) acc[r][v] = fmadd(xv[v], b, acc[r][v]);
            }
        }
    }
}

template <int TW, int R, int K>
FLCC_INLINE void head_steps(const float* in, int64_t is, const float* taps, int tw,
                            vf (&acc)[R][kBlockVectors])
{
    if constexpr (K < R - 1) {
        row_step<TW, R, 0, K>(in + K * is, taps, K, tw, acc);
        head_steps<TW, R, K + 1>(in, is, taps, tw, acc);
    }
}

template <int TW, int R, int M>
FLCC_INLINE void tail_steps(const float* in, int64_t is, const float* taps, int th, int tw,
                            vf (&acc)[R][kBlockVectors])
{
    if constexpr (M < R) {
        const int64_t k = th - 1 + M;
        row_step<TW, R, M, R - 1>(in + k * is, taps, k, tw, acc);
        tail_steps<TW, R, M + 1>(in, is, taps, th, tw, acc);
    }
}

// One R x kBlockCols block of outputs. Needs th >= R.
template <int TH, int TW, int R>
FLCC_INLINE void correlate_block(const float* in, int64_t is, const float* taps, int th_rt,
                                 int tw_rt, float* out, int64_t os, bool accumulate, vf& bad)
{
    constexpr int V = kBlockVectors;
    const int th = TH > 0 ? TH : th_rt;
    vf acc[R][V];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
        for (int v = 0; v < V; ++v) acc[r][v] = accumulate ? loadu(out + r * os + v * kFloats) : vf{};

    head_steps<TW, R, 0>(in, is, taps, tw_rt, acc);
    // A real loop: unrolled, the whole block becomes straight-line code whose schedule spills.
#pragma GCC unroll 1
    for (int64_t k = R - 1; k < th; ++k) row_step<TW, R, 0, R - 1>(in + k * is, taps, k, tw_rt, acc);
    tail_steps<TW, R, 1>(in, is, taps, th, tw_rt, acc);

#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
        for (int v = 0; v < V; ++v) {
            storeu(out + r * os + v * kFloats, acc[r][v]);
            bad += acc[r][v] - acc[r][v];   // 0 for finite values, NaN otherwise
        }
}

template <int TH, int TW, int R>
bool correlate_rows(const float* in, int64_t is, const float* taps, int th, int tw, float* out,
                    int64_t os, int64_t rows, int64_t cols, bool accumulate)
{
    vf bad{};
    for (int64_t y = 0; y < rows; y += R)
        for (int64_t x = 0; x < cols; x += kBlockCols) {
            // Hide the taps pointer and the stride from the optimiser per block: otherwise it
            // hoists the head/tail broadcasts and addresses out of this loop and spills them.
            const float* t = taps;
            int64_t stride = is;
            __asm__("" : "+r"(t), "+r"(stride));
            correlate_block<TH, TW, R>(in + y * is + x, stride, t, th, tw, out + y * os + x, os,
                                       accumulate, bad);
        }
    float b = 0;
    for (int k = 0; k < kFloats; ++k) b += bad[k];
    return b == 0;
}

// Rows per block for a template of th rows: the largest of 4, 2, 1 not above th.
constexpr int rows_for(int th) { return th >= 4 ? 4 : th >= 2 ? 2 : 1; }

// Specialised kernel for an N x N template.
template <int N>
bool correlate_square(const float* in, int64_t is, const float* taps, int, int, float* out,
                      int64_t os, int64_t rows, int64_t cols, bool accumulate)
{
    return correlate_rows<N, N, rows_for(N)>(in, is, taps, N, N, out, os, rows, cols, accumulate);
}

// Generic kernel for any template extent.
inline bool correlate_generic(const float* in, int64_t is, const float* taps, int th, int tw,
                              float* out, int64_t os, int64_t rows, int64_t cols, bool accumulate)
{
    if (th >= 4)
        return correlate_rows<0, 0, 4>(in, is, taps, th, tw, out, os, rows, cols, accumulate);
    if (th >= 2)
        return correlate_rows<0, 0, 2>(in, is, taps, th, tw, out, os, rows, cols, accumulate);
    return correlate_rows<0, 0, 1>(in, is, taps, th, tw, out, os, rows, cols, accumulate);
}

}  // namespace flcc::host::FLCC_ISA_NS
