// An exec call on a plan: the template compared with the one prepared (and prepared again when
// it changed), then the frames run where the plan's solver runs, through host staging when the
// caller's memory is not where the solver reads it.
#include "plan/exec.h"

#include "plan/error.h"
#include "plan/memory.h"
#include "plan/plan.h"
#include "plan/template.h"

#include <cstring>
#include <limits>
#include <mutex>
#include <vector>

namespace flcc {

namespace {

// Device data for a host solver, or mixed host/device pointers for a GPU solver, go through
// host memory: the unusual case, so the staging buffers are made per call.
struct Staging {
    std::vector<float> image, out;
};

}  // namespace

flcc_result execute_plan(flcc_plan handle, flcc_op op, const float* image, const float* templ,
                         float* out, int count)
{
    const std::shared_ptr<flcc_plan_s> plan = plan_acquire(handle);
    if (plan == nullptr) return invalid_plan(handle);
    if (plan->batch != nullptr)
        return fail(FLCC_OPERATION_MISMATCH, "plan is a batch plan: execute it with flcc_batch_exec");
    if (plan->op != op) {
        static const char* what[] = {" convolution", "n LCC", " cross-correlation"};
        static const char* exec[] = {"flcc_conv_exec", "flcc_lcorr_exec", "flcc_xcorr_exec"};
        return fail(FLCC_OPERATION_MISMATCH, "plan is a%s plan: execute it with %s",
                    what[plan->op], exec[plan->op]);
    }
    if (image == nullptr) return fail(FLCC_NULL_POINTER, "image = NULL");
    if (templ == nullptr) return fail(FLCC_NULL_POINTER, "templ = NULL");
    if (out == nullptr) return fail(FLCC_NULL_POINTER, "out = NULL");
    if (count < 1) return fail(FLCC_INVALID_VALUE, "count = %d: must be >= 1", count);
    const Problem& p = plan->problem;
    int64_t in_bytes, out_bytes;
    if (__builtin_mul_overflow(p.image_elems(), int64_t(count) * int64_t(sizeof(float)), &in_bytes) ||
        __builtin_mul_overflow(p.out_elems(), int64_t(count) * int64_t(sizeof(float)), &out_bytes) ||
        in_bytes > std::numeric_limits<ptrdiff_t>::max() ||
        out_bytes > std::numeric_limits<ptrdiff_t>::max())
        return fail(FLCC_INVALID_SIZE, "count = %d: the frames' bytes overflow", count);

    std::lock_guard<std::mutex> lock(plan->exec_mutex);

    // The template, compared by value with the prepared one: on the device by executors that
    // can (no round trip), else on the host.
    const int64_t tn = p.templ_elems();
    const size_t tbytes = size_t(tn) * sizeof(float);
    std::vector<float> templ_host;
    const bool templ_on_device = memory_space(templ) == MemorySpace::device;
    DeviceControl* const device = plan->executor->device();
    const MemorySpace in_space = memory_space(image), out_space = memory_space(out);
    if (device != nullptr &&
        (templ_on_device || in_space == MemorySpace::device || out_space == MemorySpace::device)) {
        const flcc_result r = device->follow_legacy_stream();
        if (r != FLCC_SUCCESS) return r;
    }
    // Cross-correlation is convolution with the template reversed, which the plan reverses on
    // the host: its device templates are compared there too.
    const bool reversed = plan->op == FLCC_XCORR;
    const bool compared_on_device = templ_on_device && device != nullptr &&
                                    device->prepares_device_templates() && !reversed;
    if (compared_on_device) {
        plan->template_ready = false;   // template_copy no longer describes the prepared template
        const flcc_result r = device->set_device_template(templ);
        if (r != FLCC_SUCCESS) return r;
    } else if (templ_on_device) {
        templ_host.resize(size_t(tn));
        if (!copy_to_host(templ_host.data(), templ, tbytes)) return FLCC_DEVICE_ERROR;
        templ = templ_host.data();
    }
    if (!compared_on_device &&
        (!plan->template_ready || std::memcmp(plan->template_copy.data(), templ, tbytes) != 0)) {
        if (p.check_finite && !all_finite(templ, tn))
            return fail(FLCC_NONFINITE_INPUT, "templ holds NaN or Inf");
        plan->template_copy.assign(templ, templ + tn);
        plan->template_ready = false;
        const bool constant = p.op == Op::lcorr && template_is_constant(templ, tn);
        std::vector<float> reversed_templ;
        if (reversed) {
            reversed_templ.resize(size_t(tn));
            flipped_template(templ, tn, reversed_templ.data());
            templ = reversed_templ.data();
        }
        const flcc_result r = plan->executor->set_template(templ, constant);
        if (r != FLCC_SUCCESS) return r;
        plan->template_ready = true;
    }

    const bool gpu = plan->solver->platform() == FLCC_DEVICE;
    if (in_space == out_space && (gpu || in_space == MemorySpace::host))
        return plan->executor->execute(image, out, count, in_space);

    Staging st;
    const float* src = image;
    float* dst = out;
    if (in_space == MemorySpace::device) {
        st.image.resize(size_t(in_bytes / 4));
        if (!copy_to_host(st.image.data(), image, size_t(in_bytes))) return FLCC_DEVICE_ERROR;
        src = st.image.data();
    }
    if (out_space == MemorySpace::device) {
        st.out.resize(size_t(out_bytes / 4));
        dst = st.out.data();
    }
    const flcc_result r = plan->executor->execute(src, dst, count, MemorySpace::host);
    if (r == FLCC_SUCCESS && out_space == MemorySpace::device &&
        !copy_to_device(out, st.out.data(), size_t(out_bytes)))
        return FLCC_DEVICE_ERROR;
    return r;
}

}  // namespace flcc
