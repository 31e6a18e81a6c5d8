// Portable SIMD vocabulary for the per-ISA kernel translation units, on GCC/Clang vector
// extensions: the same source compiles to SSE2, AVX2+FMA or AVX-512 code depending on the flags
// of the translation unit that includes it. Each such unit defines FLCC_ISA_NS (its namespace,
// which keeps the differently compiled copies apart for the linker) and FLCC_VECTOR_BYTES.
#pragma once

#ifndef FLCC_VECTOR_BYTES
#error "include simd.h only from a per-ISA kernel unit"
#endif

#include <cstdint>
#include <cstring>
#include <immintrin.h>

#define FLCC_INLINE inline __attribute__((always_inline))

namespace flcc::host::FLCC_ISA_NS {

constexpr int kVectorBytes = FLCC_VECTOR_BYTES;
constexpr int kFloats = kVectorBytes / 4;    // lanes of a float vector
constexpr int kDoubles = kVectorBytes / 8;   // lanes of a double vector

typedef float vf __attribute__((vector_size(kVectorBytes)));
typedef double vd __attribute__((vector_size(kVectorBytes)));
typedef int64_t vl __attribute__((vector_size(kVectorBytes)));
// Half-width float vector: kDoubles floats, converted to one vd.
typedef float vfh __attribute__((vector_size(kVectorBytes / 2)));

FLCC_INLINE vf loadu(const float* p)
{
    vf v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
FLCC_INLINE void storeu(float* p, vf v) { std::memcpy(p, &v, sizeof v); }
FLCC_INLINE vd loadu(const double* p)
{
    vd v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
FLCC_INLINE void storeu(double* p, vd v) { std::memcpy(p, &v, sizeof v); }

// Broadcasts (vf{} + s would be a real addition of +0.0 under strict floating point).
#if FLCC_VECTOR_BYTES == 64
FLCC_INLINE vf splat(float s) { return (vf)_mm512_set1_ps(s); }
FLCC_INLINE vd splat(double s) { return (vd)_mm512_set1_pd(s); }
#elif FLCC_VECTOR_BYTES == 32
FLCC_INLINE vf splat(float s) { return (vf)_mm256_set1_ps(s); }
FLCC_INLINE vd splat(double s) { return (vd)_mm256_set1_pd(s); }
#else
FLCC_INLINE vf splat(float s) { return (vf)_mm_set1_ps(s); }
FLCC_INLINE vd splat(double s) { return (vd)_mm_set1_pd(s); }
#endif

// kDoubles floats widened to doubles: one conversion from memory. (GCC 12 lowers
// __builtin_convertvector to 512 bits as a 256-bit load, an extract, two 256-bit conversions
// and an insert: five instructions on the window sums' hottest line.)
FLCC_INLINE vd load_widen(const float* p)
{
#if FLCC_VECTOR_BYTES == 64
    return (vd)_mm512_cvtps_pd(_mm256_loadu_ps(p));
#elif FLCC_VECTOR_BYTES == 32
    return (vd)_mm256_cvtps_pd(_mm_loadu_ps(p));
#else
    vfh h;
    std::memcpy(&h, p, sizeof h);
    return __builtin_convertvector(h, vd);
#endif
}

FLCC_INLINE vd vmin(vd a, vd b) { return a < b ? a : b; }
FLCC_INLINE vd vmax(vd a, vd b) { return a > b ? a : b; }
FLCC_INLINE vf vmin(vf a, vf b) { return a < b ? a : b; }
FLCC_INLINE vf vmax(vf a, vf b) { return a > b ? a : b; }

// Fused multiply-add where the ISA has it. Kernel units compile with -ffp-contract=off, so these
// are the only fused operations: results do not depend on the compiler's contraction choices,
// and two_product below stays exact.
#if FLCC_VECTOR_BYTES == 64
constexpr bool kHasFma = true;
FLCC_INLINE vf fmadd(vf a, vf b, vf c) { return (vf)_mm512_fmadd_ps((__m512)a, (__m512)b, (__m512)c); }
FLCC_INLINE vd fmadd(vd a, vd b, vd c) { return (vd)_mm512_fmadd_pd((__m512d)a, (__m512d)b, (__m512d)c); }
FLCC_INLINE vd vsqrt(vd a) { return (vd)_mm512_sqrt_pd((__m512d)a); }
#elif FLCC_VECTOR_BYTES == 32
constexpr bool kHasFma = true;
FLCC_INLINE vf fmadd(vf a, vf b, vf c) { return (vf)_mm256_fmadd_ps((__m256)a, (__m256)b, (__m256)c); }
FLCC_INLINE vd fmadd(vd a, vd b, vd c) { return (vd)_mm256_fmadd_pd((__m256d)a, (__m256d)b, (__m256d)c); }
FLCC_INLINE vd vsqrt(vd a) { return (vd)_mm256_sqrt_pd((__m256d)a); }
#else
constexpr bool kHasFma = false;
FLCC_INLINE vf fmadd(vf a, vf b, vf c) { return a * b + c; }
FLCC_INLINE vd fmadd(vd a, vd b, vd c) { return a * b + c; }
FLCC_INLINE vd vsqrt(vd a) { return (vd)_mm_sqrt_pd((__m128d)a); }
#endif

// Rounds toward zero (to an integer value).
FLCC_INLINE vf vtrunc(vf v)
{
#if FLCC_VECTOR_BYTES == 64
    return (vf)_mm512_roundscale_ps((__m512)v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
#elif FLCC_VECTOR_BYTES == 32
    return (vf)_mm256_round_ps((__m256)v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
#else
    // SSE2 has no rounding instruction: through int32, exact below 2^31 (larger floats are
    // integers anyway; NaN and out-of-range lanes come back different from v).
    typedef int32_t vi __attribute__((vector_size(kVectorBytes)));
    const vf av = v < 0 ? -v : v;
    const vf big = splat(2147483520.0f);
    const vf t = __builtin_convertvector(__builtin_convertvector(av <= big ? v : vf{}, vi), vf);
    return av <= big ? t : v;
#endif
}

// 1/sqrt(d) to about 23 bits: the hardware estimate refined by one Newton step.
FLCC_INLINE vf vrsqrt(vf d)
{
#if FLCC_VECTOR_BYTES == 64
    const vf y = (vf)_mm512_rsqrt14_ps((__m512)d);
#elif FLCC_VECTOR_BYTES == 32
    const vf y = (vf)_mm256_rsqrt_ps((__m256)d);
#else
    const vf y = (vf)_mm_rsqrt_ps((__m128)d);
#endif
    return y * (splat(1.5f) - splat(0.5f) * d * y * y);
}

// Two half-width float vectors joined into one, in registers: through memory, two half-width
// stores read back by one full-width load defeat store-to-load forwarding and stall.
FLCC_INLINE vf join(vfh lo, vfh hi)
{
#if FLCC_VECTOR_BYTES == 64
    return __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
#elif FLCC_VECTOR_BYTES == 32
    return __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 4, 5, 6, 7);
#else
    return __builtin_shufflevector(lo, hi, 0, 1, 2, 3);
#endif
}

// Error-free product: p + e == a * b exactly (barring overflow and underflow). With FMA the
// error is one fused operation; without, Dekker's splitting (exact because nothing contracts).
FLCC_INLINE void two_product(vd a, vd b, vd& p, vd& e)
{
    p = a * b;
    if constexpr (kHasFma) {
        e = fmadd(a, b, -p);
    } else {
        const vd split = splat(134217729.0);  // 2^27 + 1
        const vd ta = a * split, tb = b * split;
        const vd ah = ta - (ta - a), al = a - ah;
        const vd bh = tb - (tb - b), bl = b - bh;
        e = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
    }
}

// Inclusive prefix sum across the lanes of v (lane i = v[0] + ... + v[i]): log2(lanes) steps,
// each adding v shifted up by 1, 2, 4 lanes with zeros shifted in (index kDoubles names z[0]).
// __builtin_shufflevector takes constant indices and is common to GCC (12 and later) and Clang.
FLCC_INLINE vd lane_prefix(vd v)
{
    const vd z{};
#if FLCC_VECTOR_BYTES == 64
    v += __builtin_shufflevector(v, z, 8, 0, 1, 2, 3, 4, 5, 6);
    v += __builtin_shufflevector(v, z, 8, 8, 0, 1, 2, 3, 4, 5);
    v += __builtin_shufflevector(v, z, 8, 8, 8, 8, 0, 1, 2, 3);
#elif FLCC_VECTOR_BYTES == 32
    v += __builtin_shufflevector(v, z, 4, 0, 1, 2);
    v += __builtin_shufflevector(v, z, 4, 4, 0, 1);
#elif FLCC_VECTOR_BYTES == 16
    v += __builtin_shufflevector(v, z, 2, 0);
#else
#error "unsupported vector width"
#endif
    return v;
}

// Whether any lane of the comparison mask m (lanes 0 or -1) is set.
FLCC_INLINE bool any_lane(vl m)
{
#if FLCC_VECTOR_BYTES == 64
    return _mm512_test_epi64_mask((__m512i)m, (__m512i)m) != 0;
#elif FLCC_VECTOR_BYTES == 32
    return !_mm256_testz_si256((__m256i)m, (__m256i)m);
#else
    return _mm_movemask_pd((__m128d)m) != 0;
#endif
}

// The last lane of v, broadcast.
FLCC_INLINE vd last_lane(vd v) { return splat(v[kDoubles - 1]); }

}  // namespace flcc::host::FLCC_ISA_NS
