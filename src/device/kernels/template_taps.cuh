// How one block turns a template in device memory into taps: the host's arithmetic
// (src/plan/template.cpp) in double, scaled by the largest magnitude (squares stay finite near
// FLT_MAX), rounded once. Used by prepare_template (template_prep.cu) and by the template blocks
// of slabs' frame head (fourier_slabs.cuh), which each prepare the template for themselves.
#pragma once

#include "device/kernels/lcc_common.cuh"

#include <cfloat>
#include <cstdint>

namespace flcc::device {

// The sum of every thread's v over the block (whole warps; scratch holds kScratchDoubles).
__device__ inline double block_sum(double v, double* scratch)
{
    detail::Stats s{v, 0.f, 0.f, 1, 1, 0};
    return detail::block_reduce(s, scratch).sum;
}

// What the taps of a template depend on besides its values.
struct TapForm {
    bool finite, constant;
    double scale, mean, inv;   // LCC: tap = (value * scale - mean) * inv
};

// The form of the n values of `user` given their range (lo, hi, finite over the same values,
// already reduced over the block), every thread of the block taking part. The loops are
// unrolled so that each thread has several loads in flight (the sums keep their order).
__device__ inline TapForm tap_form_in_range(const float* user, int64_t n, bool lcorr, const detail::Stats& range,
                                            double* scratch)
{
    const int tid = threadIdx.x, threads = blockDim.x;
    TapForm f{range.finite != 0, range.lo == range.hi, 1.0, 0.0, 0.0};
    if (lcorr && !f.constant) {
        f.scale = 1.0 / fmax(fabs(double(range.lo)), fabs(double(range.hi)));
        double part = 0;
#pragma unroll 4
        for (int64_t i = tid; i < n; i += threads) part += double(user[i]) * f.scale;
        f.mean = block_sum(part, scratch) / double(n);
        part = 0;
#pragma unroll 4
        for (int64_t i = tid; i < n; i += threads) {
            const double d = double(user[i]) * f.scale - f.mean;
            part += d * d;
        }
        const double norm2 = block_sum(part, scratch);
        f.inv = norm2 > 0 ? 1.0 / sqrt(norm2) : 0.0;
    }
    return f;
}

// The form of the n values of `user`, every thread of the block taking part.
__device__ inline TapForm tap_form(const float* user, int64_t n, bool lcorr, double* scratch)
{
    const int tid = threadIdx.x, threads = blockDim.x;
    detail::Stats s{0.0, FLT_MAX, -FLT_MAX, 1, 1, 0};
#pragma unroll 4
    for (int64_t i = tid; i < n; i += threads) {
        const float v = user[i];
        s.lo = fminf(s.lo, v);
        s.hi = fmaxf(s.hi, v);
        s.finite &= isfinite(v);
    }
    s = detail::block_reduce(s, scratch);
    return tap_form_in_range(user, n, lcorr, s, scratch);
}

// Tap i (the template's row-major order) of the prepared template: LCC (t - mean) / ||t - mean||
// (zeros for a constant template), convolution the template reversed.
__device__ inline float tap_value(const float* user, int64_t n, int64_t i, bool lcorr, const TapForm& f)
{
    if (!lcorr) return user[n - 1 - i];
    return f.constant ? 0.f : float((double(user[i]) * f.scale - f.mean) * f.inv);
}

}  // namespace flcc::device
