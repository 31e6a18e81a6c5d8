// Fast transform sizes. FFTW (host) and cuFFT (device) both run fastest on sizes whose only
// prime factors are 2, 3, 5 and 7 (larger primes take their slower generic or Bluestein
// algorithms), so the host and the device pad a transform axis alike, with one function.
#pragma once

#include <cstdint>
#include <initializer_list>

namespace flcc::geometry {

// The smallest 2^a 3^b 5^c 7^d >= n (1 for n < 1).
inline int64_t fast_fft_size(int64_t n)
{
    for (int64_t m = n < 1 ? 1 : n;; ++m) {
        int64_t r = m;
        for (int64_t f : {2, 3, 5, 7})
            while (r % f == 0) r /= f;
        if (r == 1) return m;
    }
}

// The smallest 2^a 3^b 5^c 7^d >= n with c <= 1, for cuFFT: its real transforms of length 75
// (3 x 5^2) are far less accurate on signals with a large mean than the a-posteriori bound of
// the LCC finalisations assumes (docs/performance.md, "GPU Fourier 2D tiles"), so the GPU's
// transform lengths keep 5^2 out.
inline int64_t gpu_fft_size(int64_t n)
{
    for (int64_t m = fast_fft_size(n);; m = fast_fft_size(m + 1))
        if (m % 25 != 0) return m;
}

// The GPU batch engine's transform length >= n: the next power of two when it is within 1/8 of
// gpu_fft_size(n) (cuFFT runs powers of two fastest: 64 beats 63), else that.
inline int64_t batch_box_size(int64_t n)
{
    const int64_t fast = gpu_fft_size(n);
    int64_t two = 1;
    while (two < n) two *= 2;
    return two * 8 <= fast * 9 ? two : fast;
}

// The box length of a linear correlation (convolution) along an axis of image length s,
// template length t and padding `pad` (geometry/region.h) that leaves no lag of the region
// wrapping around: the negative lags need s + pad, the template itself t (more than s + pad in
// the SAME region when t > 2 s); the positive lags need no more than these.
inline int64_t correlation_box_size(int64_t s, int64_t t, int64_t pad)
{
    return batch_box_size(s + pad > t ? s + pad : t);
}

}  // namespace flcc::geometry
