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

// The GPU batch engine's transform length >= n: the next power of two when it is within 1/8 of
// fast_fft_size(n) (cuFFT runs powers of two fastest: 64 beats 63), else that.
inline int64_t batch_box_size(int64_t n)
{
    const int64_t fast = fast_fft_size(n);
    int64_t two = 1;
    while (two < n) two *= 2;
    return two * 8 <= fast * 9 ? two : fast;
}

}  // namespace flcc::geometry
