// What the cuFFT solvers' kernels share: the frame a replay of a captured CUDA graph works on,
// and statistics gathered by many blocks and merged with atomics (min and max on the
// order-preserving integer image of floats, kept in the float fields until read back).
#pragma once

#include "device/kernels/lcc_common.cuh"

namespace flcc::device {

// Set by set_frame before each replay, so the captured kernels never change.
struct FrameSlot {
    const float* image;
    float* out;
};

// static: one instance per translation unit that launches it.
static __global__ void set_frame(FrameSlot* slot, const float* image, float* out)
{
    slot->image = image;
    slot->out = out;
}

// Min and max are merged with integer atomics on the order-preserving integer image of floats.
__device__ inline int float_order(float f)
{
    const int i = __float_as_int(f);
    return i >= 0 ? i : i ^ 0x7fffffff;
}
__device__ inline float order_float(int i) { return __int_as_float(i >= 0 ? i : i ^ 0x7fffffff); }

// Empty statistics in the merged (ordered-int) form.
__device__ inline detail::Stats merged_stats_init()
{
    return detail::Stats{0.0, __int_as_float(float_order(FLT_MAX)), __int_as_float(float_order(-FLT_MAX)), 1, 1, 0};
}

// One value into a thread's statistics.
__device__ inline void add_value(detail::Stats& st, float v)
{
    st.sum += v;
    st.lo = fminf(st.lo, v);
    st.hi = fmaxf(st.hi, v);
    st.integral &= v == truncf(v);
    st.finite &= isfinite(v);
    st.count += 1;
}

// Four values into a thread's statistics (the sum in double as add_value's, two chains).
__device__ inline void add_quad(detail::Stats& st, float4 q)
{
    st.sum += double(q.x) + double(q.y);
    st.sum += double(q.z) + double(q.w);
    st.lo = fminf(st.lo, fminf(fminf(q.x, q.y), fminf(q.z, q.w)));
    st.hi = fmaxf(st.hi, fmaxf(fmaxf(q.x, q.y), fmaxf(q.z, q.w)));
    st.integral &= (q.x == truncf(q.x)) & (q.y == truncf(q.y)) & (q.z == truncf(q.z)) & (q.w == truncf(q.w));
    st.finite &= isfinite(q.x) & isfinite(q.y) & isfinite(q.z) & isfinite(q.w);
    st.count += 4;
}

// A block's statistics (from one thread) merged into *d.
__device__ inline void merge_stats(detail::Stats* d, const detail::Stats& s)
{
    atomicAdd(&d->sum, s.sum);
    atomicMin(reinterpret_cast<int*>(&d->lo), float_order(s.lo));
    atomicMax(reinterpret_cast<int*>(&d->hi), float_order(s.hi));
    atomicAnd(&d->integral, s.integral);
    atomicAnd(&d->finite, s.finite);
    atomicAdd(&d->count, s.count);
}

// Merged statistics as plain ones.
__device__ inline detail::Stats read_merged(detail::Stats s)
{
    s.lo = order_float(__float_as_int(s.lo));
    s.hi = order_float(__float_as_int(s.hi));
    return s;
}

}  // namespace flcc::device
