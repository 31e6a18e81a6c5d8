// 64-point complex transforms by a group of eight lanes of one warp, for the GPU batch engine's
// per-block transforms (batch_block_fft.cuh): 64 = 8 x 8, each lane an 8-point transform in
// registers, one exchange through shared memory between the two passes (Cooley-Tukey, four
// steps). The 8-point transform is host and device code: the tests check it against a direct
// DFT on the CPU; the rest is device code.
#pragma once

#include "device/kernels/fft32.h"   // add, sub, twiddle16, unpack_pair, repack_pair

namespace flcc::device::fft64 {

using fft32::add;
using fft32::sub;

// 8-point complex transform in registers, unnormalised, exponent sign Sign (radix 2, decimation
// in time; every twiddle exp(Sign 2 pi i j / 8) a constant, 16-point twiddle 2 j).
template <int Sign>
__host__ __device__ __forceinline__ void fft8(float2 (&v)[8])
{
    constexpr int rev[8] = {0, 4, 2, 6, 1, 5, 3, 7};
    float2 t[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) t[i] = v[rev[i]];
#pragma unroll
    for (int stage = 0; stage < 3; ++stage) {
        const int half = 1 << stage;
#pragma unroll
        for (int b = 0; b < 4; ++b) {
            const int j = b & (half - 1), i = (b - j) * 2 + j;
            const float2 x = t[i], y = fft32::twiddle16<Sign>(t[i + half], 2 * j * (4 >> stage));
            t[i] = add(x, y);
            t[i + half] = sub(x, y);
        }
    }
#pragma unroll
    for (int i = 0; i < 8; ++i) v[i] = t[i];
}

#if defined(__CUDACC__)
__device__ __forceinline__ float2 mul(float2 a, float2 b) { return {a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x}; }
__device__ __forceinline__ float2 conj(float2 a) { return {a.x, -a.y}; }

// The forward twiddles exp(-2 pi i k / 64), k = 0..63, into `tw` (shared memory) by the block's
// threads, each rounded once from its double value. Followed by a barrier of the caller's.
__device__ inline void make_twiddles(float2* tw)
{
    for (int k = threadIdx.x; k < 64; k += blockDim.x) {
        double s, c;
        sincospi(-double(k) / 32.0, &s, &c);
        tw[k] = make_float2(float(c), float(s));
    }
}

// The unnormalised 64-point transform (exponent sign Sign) of the sequence load(k), k = 0..63,
// by the eight lanes a = 0..7 of a group (the whole warp calls it together: it synchronises the
// warp), giving store(n, X[n]), n = 0..63. `z` (stride `st`) is the group's exchange buffer of 64
// values; load may read it (the lanes' loads finish before any lane writes it) and store may
// write it (every lane has read it by then). An idle group passes z = nullptr (and loads and
// stores that touch nothing): it keeps the warp's barriers.
//   pass 1: lane a transforms x[8 m + a] over m, giving Y_a(k1), times W64^(a k1);
//   pass 2: lane k1 transforms those over a: X[k1 + 8 k2].
template <int Sign, class Load, class Store>
__device__ __forceinline__ void transform(float2* z, int st, int a, const float2* tw, Load load, Store store)
{
    float2 v[8];
#pragma unroll
    for (int m = 0; m < 8; ++m) v[m] = load(8 * m + a);
    __syncwarp();
    fft8<Sign>(v);
#pragma unroll
    for (int k1 = 1; k1 < 8; ++k1) {
        const float2 w = tw[(a * k1) & 63];
        v[k1] = mul(v[k1], Sign < 0 ? w : conj(w));
    }
#pragma unroll
    for (int k1 = 0; k1 < 8; ++k1)
        if (z != nullptr) z[(8 * k1 + a) * st] = v[k1];
    __syncwarp();
#pragma unroll
    for (int j = 0; j < 8; ++j) v[j] = z != nullptr ? z[(8 * a + j) * st] : v[j];
    __syncwarp();
    fft8<Sign>(v);
#pragma unroll
    for (int k2 = 0; k2 < 8; ++k2) store(a + 8 * k2, v[k2]);
    __syncwarp();
}

#endif  // __CUDACC__

}  // namespace flcc::device::fft64
