// The frame a replay of a solver's captured CUDA graph works on, and the ordered-int image of
// floats that per-tile statistics merge min and max with. Shared by the cuFFT solvers' kernels.
#pragma once

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

}  // namespace flcc::device
