#include "device/template_prep.h"

#include "device/kernels/lcc_common.cuh"

namespace flcc::device {

namespace {

constexpr int kPrepThreads = 512;

__device__ double block_sum(double v, double* scratch)
{
    detail::Stats s{v, 0.f, 0.f, 1, 1, 0};
    return detail::block_reduce(s, scratch).sum;
}

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

    // 2. Range, constancy and finiteness.
    detail::Stats s{0.0, FLT_MAX, -FLT_MAX, 1, 1, 0};
    for (int64_t i = tid; i < n; i += kPrepThreads) {
        const float v = t.user[i];
        s.lo = fminf(s.lo, v);
        s.hi = fmaxf(s.hi, v);
        s.finite &= isfinite(v);
    }
    s = detail::block_reduce(s, scratch);
    if (!s.finite && t.check_finite) {
        // Nothing is prepared and `last` is kept, so the same template is refused again.
        if (tid == 0) *reinterpret_cast<volatile int*>(t.status) = 1;
        return;
    }

    // 3. The taps: LCC (t - mean) / ||t - mean|| in double after scaling by the largest
    //    magnitude (squares stay finite near FLT_MAX), zeros for a constant template;
    //    convolution the template reversed.
    const bool constant = s.lo == s.hi;
    double mean = 0, inv = 0, scale = 1;
    if (t.lcorr && !constant) {
        scale = 1.0 / fmax(fabs(double(s.lo)), fabs(double(s.hi)));
        double part = 0;
        for (int64_t i = tid; i < n; i += kPrepThreads) part += double(t.user[i]) * scale;
        mean = block_sum(part, scratch) / double(n);
        part = 0;
        for (int64_t i = tid; i < n; i += kPrepThreads) {
            const double d = double(t.user[i]) * scale - mean;
            part += d * d;
        }
        const double norm2 = block_sum(part, scratch);
        inv = norm2 > 0 ? 1.0 / sqrt(norm2) : 0.0;
    }
    double part = 0;
    const int64_t padded = int64_t(t.rows) * t.tap_row;
    for (int64_t k = tid; k < padded; k += kPrepThreads) {
        const int r = int(k / t.tap_row), c = int(k % t.tap_row);
        float v = 0.f;
        if (c < t.cols) {
            const int64_t i = int64_t(r) * t.cols + c;
            if (!t.lcorr) v = t.user[n - 1 - i];
            else if (!constant) v = float((double(t.user[i]) * scale - mean) * inv);
        }
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
