// The kernels of device.fourier2.box (fourier_box_solver.cu): a 2D problem whose whole output
// fits one FFT box, correlated as one pair of the batch engine's kernels (batch_kernels.cuh).
// The frame's pointers reach the captured graph through a slot; the image and the template are
// prepared by one launch (a block each), the LCC finalisation runs short bands of rows in parallel.
#pragma once

#include "device/batch_kernels.cuh"

namespace flcc::device::box {

// Set before each replay, so the captured kernels never change.
struct BoxSlot {
    const float* image;
    const float* templ;
    float* out;
};

static __global__ void set_box_frame(BoxSlot* slot, const float* image, const float* templ, float* out)
{
    slot->image = image;
    slot->templ = templ;
    slot->out = out;
}

struct PrepareParams {
    const BoxSlot* slot;
    batch::SideParams image, templ;   // `in` comes from the slot
    batch::ImageForm image_form;
    batch::TemplForm templ_form;
    int check_finite;
    int* status;   // set to 1 for a non-finite image or template
};

// Block 0 prepares the image into its box (LCC: its mode and error bound), block 1 the template
// (LCC: its taps).
__global__ void __launch_bounds__(batch::kItemThreads) prepare_pair(PrepareParams q)
{
    __shared__ double scratch[kScratchDoubles];
    detail::Stats s;
    if (blockIdx.x == 0) {
        batch::SideParams p = q.image;
        p.in = q.slot->image;
        s = batch::prepare_image_item(p, q.image_form, 0, scratch);
    } else {
        batch::SideParams p = q.templ;
        p.in = q.slot->templ;
        s = batch::prepare_template_item(p, q.templ_form, 0, scratch);
    }
    if (!s.finite && q.check_finite && threadIdx.x == 0) *reinterpret_cast<volatile int*>(q.status) = 1;
}

// Output rows per block of finalise_box: the block's time is a first window of T1 rows and then
// a step per row, all latency, so short runs over many blocks finish first.
constexpr int kBoxRows = 4;

// The map from the circular correlation (convolution): the batch engine's crop, LCC's banded
// finalisation, kBoxRows rows per block. `band` as finalise_pair_banded's.
// Few blocks run: registers need not be capped for occupancy.
__global__ void __launch_bounds__(batch::kBandedThreads) finalise_box(batch::FinalParams q, const BoxSlot* slot,
                                                                        const float* box)
{
    extern __shared__ double band[];
    q.maps = slot->out;
    const float* circ = q.circ;
    const int first = blockIdx.x * kBoxRows, last = min(first + kBoxRows, q.O1);
    if (!q.lcc) {
        for (int e = threadIdx.x; e < (last - first) * q.O2; e += blockDim.x) {
            const int r = first + e / q.O2, c = e % q.O2;
            int i0 = q.correlate ? r - q.P1 : r + q.T1 - 1 - q.P1, i1 = q.correlate ? c - q.P2 : c + q.T2 - 1 - q.P2;
            if (i0 < 0) i0 += q.bh;
            if (i1 < 0) i1 += q.bw;
            q.maps[int64_t(r) * q.O2 + c] = circ[int64_t(i0) * q.bw + i1];
        }
        return;
    }
    batch::finalise_pair_banded(
        q, 0, [&](int j, int c) { return box[int64_t(j) * q.bw + c]; },
        [&](int r, int oc) {
            int i0 = r - q.P1, i1 = oc - q.P2;
            if (i0 < 0) i0 += q.bh;
            if (i1 < 0) i1 += q.bw;
            return circ[int64_t(i0) * q.bw + i1];
        },
        q.bounds[0], band, first, last);
}

}  // namespace flcc::device::box
