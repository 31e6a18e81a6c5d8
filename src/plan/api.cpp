// The C entry points. Each validates its arguments, then does its work inside a try block:
// no exception, abort or print crosses the C boundary. Every entry point that returns an
// flcc_result clears this thread's error detail when it succeeds and sets it when it fails.
#include "flcc.h"
#include "plan/error.h"
#include "plan/memory.h"
#include "plan/plan.h"
#include "plan/planner.h"
#include "plan/registry.h"
#include "plan/template.h"
#include "plan/wisdom.h"

#include <algorithm>
#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <limits>
#include <mutex>
#include <new>
#include <system_error>
#include <unordered_map>
#include <vector>

namespace flcc {

namespace {

// This thread's error detail: plain bytes, so it needs no construction, destruction or
// allocation, and an empty detail is the empty string.
thread_local char t_detail[512];

}  // namespace

void set_detail(const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(t_detail, sizeof t_detail, fmt, ap);
    va_end(ap);
}

flcc_result fail(flcc_result code, const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(t_detail, sizeof t_detail, fmt, ap);
    va_end(ap);
    return code;
}

void clear_detail() { t_detail[0] = '\0'; }

bool detail_is_empty() { return t_detail[0] == '\0'; }

namespace {

std::mutex& live_mutex()
{
    static std::mutex m;
    return m;
}
std::unordered_map<const flcc_plan_s*, std::shared_ptr<flcc_plan_s>>& live_plans()
{
    static std::unordered_map<const flcc_plan_s*, std::shared_ptr<flcc_plan_s>> s;
    return s;
}

}  // namespace

void plan_register(std::shared_ptr<flcc_plan_s> plan)
{
    std::lock_guard<std::mutex> lock(live_mutex());
    const flcc_plan_s* key = plan.get();
    live_plans().emplace(key, std::move(plan));
}

std::shared_ptr<flcc_plan_s> plan_acquire(const flcc_plan_s* handle)
{
    if (handle == nullptr) return nullptr;
    std::lock_guard<std::mutex> lock(live_mutex());
    const auto it = live_plans().find(handle);
    return it == live_plans().end() ? nullptr : it->second;
}

bool plan_release(const flcc_plan_s* handle)
{
    std::shared_ptr<flcc_plan_s> keep;   // destroyed outside the lock
    std::lock_guard<std::mutex> lock(live_mutex());
    const auto it = live_plans().find(handle);
    if (it == live_plans().end()) return false;
    keep = std::move(it->second);
    live_plans().erase(it);
    return true;
}

namespace {

// FLCC_INVALID_PLAN with the handle in the detail.
flcc_result invalid_plan(const flcc_plan_s* handle)
{
    if (handle == nullptr) return fail(FLCC_INVALID_PLAN, "plan = NULL");
    return fail(FLCC_INVALID_PLAN, "plan = %p: not a live plan (destroyed or unknown)",
                static_cast<const void*>(handle));
}

// Device data for a host solver, or mixed host/device pointers for a GPU solver, go through
// host memory: the unusual case, so the staging buffers are made per call.
struct Staging {
    std::vector<float> image, out;
};

// Runs an exec call on a validated plan.
flcc_result exec(flcc_plan handle, Op op, const float* image, const float* templ, float* out,
                 int count)
{
    const std::shared_ptr<flcc_plan_s> plan = plan_acquire(handle);
    if (plan == nullptr) return invalid_plan(handle);
    if (plan->problem.op != op)
        return fail(FLCC_OPERATION_MISMATCH, "plan is a%s plan: execute it with %s",
                    plan->problem.op == Op::conv ? " convolution" : "n LCC",
                    plan->problem.op == Op::conv ? "flcc_conv_exec" : "flcc_lcorr_exec");
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
    const bool compared_on_device = templ_on_device && plan->executor->prepares_device_templates();
    if (compared_on_device) {
        plan->template_ready = false;   // template_copy no longer describes the prepared template
        const flcc_result r = plan->executor->set_device_template(templ);
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
        const flcc_result r = plan->executor->set_template(templ, constant);
        if (r != FLCC_SUCCESS) return r;
        plan->template_ready = true;
    }

    const MemorySpace in_space = memory_space(image), out_space = memory_space(out);
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

// Exceptions become codes: std::bad_alloc, and a std::system_error that says the system is out
// of memory or of threads (std::thread, std::mutex), are FLCC_ALLOC_FAILED; anything else is a
// bug.
template <class F>
flcc_result guarded(F&& f)
{
    try {
        return f();
    } catch (const std::bad_alloc&) {
        return FLCC_ALLOC_FAILED;
    } catch (const std::system_error& e) {
        if (e.code() == std::errc::resource_unavailable_try_again ||
            e.code() == std::errc::not_enough_memory)
            return fail(FLCC_ALLOC_FAILED, "the system refused a resource: %s", e.what());
        return fail(FLCC_INTERNAL_ERROR, "unexpected system error: %s", e.what());
    } catch (...) {
        return FLCC_INTERNAL_ERROR;
    }
}

// The body of an entry point that returns an flcc_result: the detail describes this call alone
// (empty after a success; a failure that set none gets its code's description).
template <class F>
flcc_result entry(F&& f)
{
    clear_detail();
    const flcc_result r = guarded(f);
    if (r == FLCC_SUCCESS)
        clear_detail();
    else if (detail_is_empty())
        set_detail("%s", flcc_result_string(r));
    return r;
}

flcc_result create(flcc_plan* plan, int op, int dim, flcc_size image, flcc_size templ,
                   const flcc_options& o, const char* prefix)
{
    if (plan == nullptr) return fail(FLCC_NULL_POINTER, "plan = NULL: where to store the plan");
    *plan = nullptr;
    Problem p;
    const flcc_result bad = make_problem(p, op, dim, image, templ, o, prefix);
    if (bad != FLCC_SUCCESS) return bad;
    // Every thread a plan asks for is a worker the process keeps (and per-thread buffers).
    if (o.threads > FLCC_MAX_THREADS)
        return fail(FLCC_INVALID_VALUE, "%sthreads = %d: must be <= FLCC_MAX_THREADS (%d)", prefix,
                    o.threads, FLCC_MAX_THREADS);
    p.threads = std::min(p.threads, FLCC_MAX_THREADS);   // 0: all hardware threads, capped
    auto made = std::make_shared<flcc_plan_s>();
    made->problem = p;
    const flcc_result r = plan_solver(*made, o);
    if (r != FLCC_SUCCESS) return r;
    flcc_plan_s* handle = made.get();
    plan_register(std::move(made));   // may throw: *plan is set only once the plan is live
    *plan = handle;
    return FLCC_SUCCESS;
}

// The options of the FLCC 1.3 style planners. The enums are copied as bytes: make_problem
// checks them as integers.
flcc_options planner_options(const flcc_type& type, const flcc_platform& platform)
{
    flcc_options o;
    flcc_options_init(&o);
    std::memcpy(&o.type, &type, sizeof type);
    std::memcpy(&o.platform, &platform, sizeof platform);
    return o;
}

}  // namespace

}  // namespace flcc

using namespace flcc;

extern "C" {

void flcc_options_init(flcc_options* o)
{
    if (o == nullptr) return;
    o->type = FLCC_SINGLE;
    o->platform = FLCC_ANY;
    o->region = FLCC_FULL;
    o->rigor = FLCC_MEASURE;
    o->threads = 0;
    o->method = nullptr;
    o->device = -1;
    o->check_finite = 1;
    o->device_resident = 0;
}

flcc_result flcc_plan_create(flcc_plan* plan, flcc_op op, int dim, flcc_size image,
                             flcc_size templ, const flcc_options* opts)
{
    return entry([&] {
        flcc_options o;
        flcc_options_init(&o);
        if (opts != nullptr) std::memcpy(&o, opts, sizeof o);
        return create(plan, enum_value(op), dim, image, templ, o, "options.");
    });
}

flcc_result flcc_conv_plan(flcc_plan* plan, int dim, flcc_size image, flcc_size templ,
                           flcc_type type, flcc_platform platform)
{
    return entry([&] {
        return create(plan, FLCC_CONV, dim, image, templ, planner_options(type, platform), "");
    });
}

flcc_result flcc_lcorr_plan(flcc_plan* plan, int dim, flcc_size image, flcc_size templ,
                            flcc_type type, flcc_platform platform)
{
    return entry([&] {
        return create(plan, FLCC_LCORR, dim, image, templ, planner_options(type, platform), "");
    });
}

flcc_result flcc_conv_exec(flcc_plan plan, const float* image, const float* templ, float* out,
                           int count)
{
    return entry([&] { return exec(plan, Op::conv, image, templ, out, count); });
}

flcc_result flcc_lcorr_exec(flcc_plan plan, const float* image, const float* templ, float* out,
                            int count)
{
    return entry([&] { return exec(plan, Op::lcorr, image, templ, out, count); });
}

flcc_result flcc_destroy(flcc_plan plan)
{
    // The plan is freed here, or when the last exec still running on it returns.
    return entry([&] {
        if (plan == nullptr) return FLCC_SUCCESS;
        return plan_release(plan) ? FLCC_SUCCESS : invalid_plan(plan);
    });
}

const char* flcc_plan_method(flcc_plan handle)
{
    const auto plan = plan_acquire(handle);
    if (plan == nullptr) return nullptr;
    return plan->solver->name();
}

flcc_result flcc_plan_output_size(flcc_plan handle, flcc_size* out)
{
    return entry([&] {
        const auto plan = plan_acquire(handle);
        if (plan == nullptr) return invalid_plan(handle);
        if (out == nullptr) return fail(FLCC_NULL_POINTER, "out = NULL");
        const Problem& p = plan->problem;
        if (p.dim == 2)
            *out = {int(p.out[1]), int(p.out[2]), 1};
        else
            *out = {int(p.out[0]), int(p.out[1]), int(p.out[2])};
        return FLCC_SUCCESS;
    });
}

flcc_result flcc_plan_type(flcc_plan handle, flcc_type* type)
{
    return entry([&] {
        const auto plan = plan_acquire(handle);
        if (plan == nullptr) return invalid_plan(handle);
        if (type == nullptr) return fail(FLCC_NULL_POINTER, "type = NULL");
        *type = plan->problem.type;
        return FLCC_SUCCESS;
    });
}

int flcc_plan_candidate_count(flcc_plan handle)
{
    const auto plan = plan_acquire(handle);
    if (plan == nullptr) return 0;
    return int(plan->candidates.size());
}

flcc_result flcc_plan_candidate(flcc_plan handle, int index, const char** name, double* seconds)
{
    return entry([&] {
        const auto plan = plan_acquire(handle);
        if (plan == nullptr) return invalid_plan(handle);
        if (name == nullptr) return fail(FLCC_NULL_POINTER, "name = NULL");
        if (seconds == nullptr) return fail(FLCC_NULL_POINTER, "seconds = NULL");
        if (index < 0 || index >= int(plan->candidates.size()))
            return fail(FLCC_INVALID_VALUE, "index = %d: the plan has %d candidates", index,
                        int(plan->candidates.size()));
        *name = plan->candidates[size_t(index)].name.c_str();
        *seconds = plan->candidates[size_t(index)].seconds;
        return FLCC_SUCCESS;
    });
}

flcc_result flcc_plan_set_stream(flcc_plan handle, void* stream)
{
    return entry([&] {
        const auto plan = plan_acquire(handle);
        if (plan == nullptr) return invalid_plan(handle);
        std::lock_guard<std::mutex> lock(plan->exec_mutex);
        return plan->executor->set_stream(stream);
    });
}

flcc_result flcc_plan_synchronize(flcc_plan handle)
{
    return entry([&] {
        const auto plan = plan_acquire(handle);
        if (plan == nullptr) return invalid_plan(handle);
        std::lock_guard<std::mutex> lock(plan->exec_mutex);
        return plan->executor->synchronize();
    });
}

flcc_result flcc_wisdom_export(char** text)
{
    return entry([&] {
        if (text == nullptr) return fail(FLCC_NULL_POINTER, "text = NULL");
        *text = nullptr;
        const std::string w = wisdom::export_text();
        char* out = static_cast<char*>(host_alloc(w.size() + 1));
        if (out == nullptr) return FLCC_ALLOC_FAILED;
        std::memcpy(out, w.c_str(), w.size() + 1);
        *text = out;
        return FLCC_SUCCESS;
    });
}

flcc_result flcc_wisdom_import(const char* text)
{
    return entry([&] {
        if (text == nullptr) return fail(FLCC_NULL_POINTER, "text = NULL");
        return wisdom::import_text(text);
    });
}

flcc_result flcc_wisdom_export_file(const char* path)
{
    return entry([&] {
        if (path == nullptr) return fail(FLCC_NULL_POINTER, "path = NULL");
        return wisdom::export_file(path);
    });
}

flcc_result flcc_wisdom_import_file(const char* path)
{
    return entry([&] {
        if (path == nullptr) return fail(FLCC_NULL_POINTER, "path = NULL");
        return wisdom::import_file(path);
    });
}

void flcc_wisdom_forget(void)
{
    try {
        wisdom::forget();
    } catch (...) {
    }
}

const char* flcc_last_error_detail(void) { return t_detail; }

const char* flcc_result_string(flcc_result code)
{
    // Read as an integer: any int may arrive from C (see enum_value).
    const int r = enum_value(code);
    switch (r) {
    case FLCC_SUCCESS: return "success";
    case FLCC_INVALID_PLAN: return "invalid plan (NULL, destroyed or unknown handle)";
    case FLCC_INVALID_DIMENSION: return "invalid dimension (must be 2 or 3)";
    case FLCC_INVALID_SIZE: return "invalid size (non-positive, overflowing, or template larger than image for the valid region)";
    case FLCC_INVALID_TYPE: return "invalid plan type";
    case FLCC_INVALID_PLATFORM: return "invalid platform";
    case FLCC_INVALID_VALUE: return "invalid argument value";
    case FLCC_ALLOC_FAILED: return "memory allocation failed";
    case FLCC_EXEC_FAILED: return "execution failed";
    case FLCC_NULL_POINTER: return "a required pointer argument is NULL";
    case FLCC_NONFINITE_INPUT: return "image or template holds NaN or Inf";
    case FLCC_UNKNOWN_METHOD: return "unknown method name";
    case FLCC_METHOD_NOT_APPLICABLE: return "the forced method cannot solve this problem";
    case FLCC_OPERATION_MISMATCH: return "plan was made for the other operation";
    case FLCC_NO_DEVICE: return "no usable GPU device";
    case FLCC_DEVICE_ERROR: return "a CUDA call failed";
    case FLCC_WISDOM_MISS: return "no wisdom for this problem";
    case FLCC_INVALID_WISDOM: return "wisdom is corrupt or from another configuration";
    case FLCC_IO_ERROR: return "wisdom file could not be read or written";
    case FLCC_INTERNAL_ERROR: return "internal error";
    }
    return "unknown result code";
}

int flcc_version(void) { return FLCC_VERSION; }

int flcc_solver_count(void)
{
    try {
        return int(all_solvers().size());
    } catch (...) {
        return 0;
    }
}

const char* flcc_solver_name(int index)
{
    try {
        const auto& s = all_solvers();
        if (index < 0 || index >= int(s.size())) return nullptr;
        return s[size_t(index)]->name();
    } catch (...) {
        return nullptr;
    }
}

}  // extern "C"
