#include "device/template_prep.h"

#include "device/kernels/template_taps.cuh"

namespace flcc::device {

namespace {

constexpr int kPrepThreads = 512;

__global__ void __launch_bounds__(kPrepThreads) prepare_template(TemplatePrep t)
{
    __shared__ double scratch[kScratchDoubles];
    __shared__ int changed;
    const int tid = threadIdx.x;
    const int64_t n = t.n;

    if (t.prepared != nullptr && tid == 0) *t.prepared = 0;
    // 1. Unchanged (bit for bit, as the host's memcmp) means no template work.
    if (!t.force) {
        if (tid == 0) changed = 0;
        __syncthreads();
        const unsigned* u = reinterpret_cast<const unsigned*>(t.user);
        const unsigned* l = reinterpret_cast<const unsigned*>(t.last);
        int differs = 0;
        for (int64_t i = tid; i < n; i += kPrepThreads) differs |= u[i] != l[i];
        if (differs) changed = 1;
        __syncthreads();
        if (!changed) return;
    }

    // 2. Range, constancy and finiteness; LCC the mean and norm.
    const TapForm form = tap_form(t.user, n, t.lcorr != 0, scratch);
    if (!form.finite && t.check_finite) {
        // Nothing is prepared and `last` is kept, so the same template is refused again.
        if (tid == 0) *reinterpret_cast<volatile int*>(t.status) = 1;
        return;
    }

    // 3. The taps, in rows of tap_row (zeros beyond the template's columns).
    double part = 0;
    const int64_t padded = int64_t(t.rows) * t.tap_row;
    for (int64_t k = tid; k < padded; k += kPrepThreads) {
        const int r = int(k / t.tap_row), c = int(k % t.tap_row);
        const float v = c < t.cols ? tap_value(t.user, n, int64_t(r) * t.cols + c, t.lcorr != 0, form) : 0.f;
        t.taps[k] = v;
        part += v;
    }
    const double sum = block_sum(part, scratch);
    if (tid == 0) {
        *t.tap_sum = sum;
        if (t.prepared != nullptr) *t.prepared = 1;
    }
    for (int64_t i = tid; i < n; i += kPrepThreads) t.last[i] = t.user[i];
}

}  // namespace

cudaError_t enqueue_template_prep(const TemplatePrep& t, cudaStream_t stream)
{
    prepare_template<<<1, kPrepThreads, 0, stream>>>(t);
    return cudaGetLastError();
}

}  // namespace flcc::device
