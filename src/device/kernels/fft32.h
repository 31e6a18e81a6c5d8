// 32-point transforms in registers for the fused 3D kernels (device.fourier3.rows and
// device.fourier3.slabs): a 16-point complex FFT with constant twiddles, the 32-point real
// transform of a row built on it (even values in .x, odd in .y), and the two halves of a
// 32-point complex transform along a column (each thread of a pair takes one half: the even or
// the odd bins, so that a column is two threads' work without any exchange between them).
// Host and device: the tests check the transforms against direct DFTs on the CPU.
#pragma once

#include <cuda_runtime.h>   // float2, __host__ __device__

namespace flcc::device::fft32 {

// cos(pi k / 16), k = 0..16, and sin(pi k / 16): the twiddles of 16- and 32-point transforms.
__host__ __device__ constexpr float cos_pi16(int k)
{
    constexpr float c[9] = {1.0f, 0.98078528040323044913f, 0.92387953251128675613f, 0.83146961230254523708f,
                            0.70710678118654752440f, 0.55557023301960222474f, 0.38268343236508977173f,
                            0.19509032201612826785f, 0.0f};
    return k <= 8 ? c[k] : -c[16 - k];
}
__host__ __device__ constexpr float sin_pi16(int k) { return cos_pi16(k <= 8 ? 8 - k : k - 8); }

__host__ __device__ __forceinline__ float2 add(float2 a, float2 b) { return {a.x + b.x, a.y + b.y}; }
__host__ __device__ __forceinline__ float2 sub(float2 a, float2 b) { return {a.x - b.x, a.y - b.y}; }

// b times exp(Sign i pi m / 8), m = 0..7, with the trivial factors taken as what they are.
template <int Sign>
__host__ __device__ __forceinline__ float2 twiddle16(float2 b, int m)
{
    if (m == 0) return b;
    if (m == 4) return Sign < 0 ? float2{b.y, -b.x} : float2{-b.y, b.x};
    const float c = cos_pi16(2 * m), s = Sign * sin_pi16(2 * m);
    return {b.x * c - b.y * s, b.x * s + b.y * c};
}

// 16-point complex transform in registers, unnormalised, exponent sign Sign (radix 2,
// decimation in time; fully unrolled, every twiddle a constant).
template <int Sign>
__host__ __device__ __forceinline__ void fft16(float2 (&v)[16])
{
    constexpr int rev[16] = {0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15};
    float2 t[16];
#pragma unroll
    for (int i = 0; i < 16; ++i) t[i] = v[rev[i]];
#pragma unroll
    for (int stage = 0; stage < 4; ++stage) {
        const int half = 1 << stage;   // butterflies of span 2 half
#pragma unroll
        for (int b = 0; b < 8; ++b) {
            const int j = b & (half - 1), i = (b - j) * 2 + j;
            const float2 x = t[i], y = twiddle16<Sign>(t[i + half], j * (8 >> stage));
            t[i] = add(x, y);
            t[i + half] = sub(x, y);
        }
    }
#pragma unroll
    for (int i = 0; i < 16; ++i) v[i] = t[i];
}

// Twice the 32-point real DFT of x (even values in .x, odd in .y of v): bins 1..15 in v[1..15],
// bin 0 in v[0].x and bin 16 in v[0].y (both real).
__host__ __device__ __forceinline__ void forward_row(float2 (&v)[16])
{
    fft16<-1>(v);
    float2 X[16];
    X[0] = {2.f * (v[0].x + v[0].y), 2.f * (v[0].x - v[0].y)};
#pragma unroll
    for (int k = 1; k < 16; ++k) {
        const float2 a = v[k], b = {v[16 - k].x, -v[16 - k].y};
        const float2 e = add(a, b), d = sub(a, b);
        // X = e + W^k (-i d), W = exp(-2 pi i / 32)
        const float2 o = {d.y, -d.x};
        const float c = cos_pi16(k), s = sin_pi16(k);
        X[k] = {e.x + o.x * c + o.y * s, e.y + o.y * c - o.x * s};
    }
#pragma unroll
    for (int k = 0; k < 16; ++k) v[k] = X[k];
}

// The inverse of forward_row for 32 times the spectrum of a real row (packed the same way): the
// row's even values in .x and odd values in .y of v.
__host__ __device__ __forceinline__ void inverse_row(float2 (&v)[16])
{
    float2 Z[16];
    Z[0] = {v[0].x + v[0].y, v[0].x - v[0].y};
#pragma unroll
    for (int k = 1; k < 16; ++k) {
        const float2 a = v[k], b = {v[16 - k].x, -v[16 - k].y};
        const float2 e = add(a, b), d = sub(a, b);
        // Z = e + i W^-k d
        const float c = cos_pi16(k), s = sin_pi16(k);
        const float2 p = {d.x * c - d.y * s, d.y * c + d.x * s};
        Z[k] = {e.x - p.y, e.y + p.x};
    }
    fft16<1>(Z);
#pragma unroll
    for (int k = 0; k < 16; ++k) v[k] = Z[k];
}


// One half of the forward 32-point complex DFT of z (decimation in frequency; z(y) returns
// value y of the column, read twice per half instead of held): h = 0 gives the even bins
// X[2m], h = 1 the odd bins X[2m + 1], in out[m]. Branch-free in h (the two threads of a column
// run it side by side in one warp).
template <class Column>
__host__ __device__ __forceinline__ void column_forward_half(const Column& z, int h, float2 (&out)[16])
{
    const float sign = h ? -1.f : 1.f;
#pragma unroll
    for (int y = 0; y < 16; ++y) {
        const float2 lo = z(y), hi = z(y + 16);
        const float2 a = {lo.x + sign * hi.x, lo.y + sign * hi.y};
        const float c = h ? cos_pi16(y) : 1.f, s = h ? -sin_pi16(y) : 0.f;
        out[y] = {a.x * c - a.y * s, a.x * s + a.y * c};
    }
    fft16<-1>(out);
}

// One half of the inverse (unnormalised, exponent +) 32-point DFT from the bins of parity h,
// w[m] = X[2m + h]: out[y] (y < 16) is E[y] for h = 0 and W^-y O[y] for h = 1, so that
// x[y] = E[y] + W^-y O[y] and x[y + 16] = E[y] - W^-y O[y].
__host__ __device__ __forceinline__ void column_inverse_half(float2 (&w)[16], int h)
{
    fft16<1>(w);
#pragma unroll
    for (int y = 0; y < 16; ++y) {
        const float c = h ? cos_pi16(y) : 1.f, s = h ? sin_pi16(y) : 0.f;
        const float2 b = w[y];
        w[y] = {b.x * c - b.y * s, b.x * s + b.y * c};
    }
}

// The packed column (x bins 0 and 16 of real rows, as forward_row packs them: Z = X0 + i X16)
// after its column transform holds Z(k) = F0(k) + i F16(k), F0 and F16 the column spectra of two
// real sequences. unpack_column splits it in place: slot k (1..15) gets F0(k), slot 32 - k gets
// F16(k); slots 0 and 16 already hold (F0, F16) as a pair of reals. v[m] holds slot 2m + h.
// repack_column is its inverse for the output spectra (Y0, Y16 -> Y0 + i Y16 at k and -k).
__host__ __device__ __forceinline__ void unpack_pair(float2& a, float2& b)
{
    // a = Z(k), b = Z(-k): F0 = (a + conj b) / 2, F16 = (a - conj b) / 2i
    const float2 f0 = {0.5f * (a.x + b.x), 0.5f * (a.y - b.y)};
    const float2 f16 = {0.5f * (a.y + b.y), -0.5f * (a.x - b.x)};
    a = f0;
    b = f16;
}
__host__ __device__ __forceinline__ void repack_pair(float2& a, float2& b)
{
    // a = Y0(k), b = Y16(k): W(k) = Y0 + i Y16, W(-k) = conj(Y0) + i conj(Y16)
    const float2 wk = {a.x - b.y, a.y + b.x};
    const float2 wm = {a.x + b.y, b.x - a.y};
    a = wk;
    b = wm;
}
template <bool Unpack>
__host__ __device__ __forceinline__ void pack_column(float2 (&v)[16], int h)
{
    const auto op = [](float2& a, float2& b) {
        if (Unpack)
            unpack_pair(a, b);
        else
            repack_pair(a, b);
    };
    if (h == 0) {   // k = 2m <-> 32 - k = 2 (16 - m); m = 0 and 8 are the real pairs
#pragma unroll
        for (int m = 1; m < 8; ++m) op(v[m], v[16 - m]);
    } else {        // k = 2m + 1 <-> 32 - k = 2 (15 - m) + 1
#pragma unroll
        for (int m = 0; m < 8; ++m) op(v[m], v[15 - m]);
    }
}

}  // namespace flcc::device::fft32
