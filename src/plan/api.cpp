// The C entry points. Each validates its arguments, then does its work inside a try block:
// no exception, abort or print crosses the C boundary. Every entry point that returns an
// flcc_result clears this thread's error detail when it succeeds and sets it when it fails.
#include "flcc.h"
#include "plan/entry.h"
#include "plan/error.h"
#include "plan/exec.h"
#include "plan/memory.h"
#include "plan/plan.h"
#include "plan/planner.h"
#include "plan/registry.h"
#include "plan/wisdom.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <new>
#include <system_error>

namespace flcc {

namespace {

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
    made->op = static_cast<flcc_op>(op);
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
    return entry([&] { return execute_plan(plan, FLCC_CONV, image, templ, out, count); });
}

flcc_result flcc_lcorr_exec(flcc_plan plan, const float* image, const float* templ, float* out,
                            int count)
{
    return entry([&] { return execute_plan(plan, FLCC_LCORR, image, templ, out, count); });
}

flcc_result flcc_xcorr_exec(flcc_plan plan, const float* image, const float* templ, float* out,
                            int count)
{
    return entry([&] { return execute_plan(plan, FLCC_XCORR, image, templ, out, count); });
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
    return plan->batch != nullptr ? plan->batch->method() : plan->solver->name();
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
        if (plan->batch != nullptr)
            return fail(FLCC_OPERATION_MISMATCH,
                        "a batch plan runs on its own streams, and its execs return when done");
        DeviceControl* const device = plan->executor->device();
        if (device == nullptr)
            return fail(FLCC_INVALID_PLATFORM, "plan runs on the host (%s): it has no stream",
                        plan->solver->name());
        return device->set_stream(stream);
    });
}

flcc_result flcc_plan_synchronize(flcc_plan handle)
{
    return entry([&] {
        const auto plan = plan_acquire(handle);
        if (plan == nullptr) return invalid_plan(handle);
        std::lock_guard<std::mutex> lock(plan->exec_mutex);
        if (plan->batch != nullptr) return FLCC_SUCCESS;   // its execs return when done
        DeviceControl* const device = plan->executor->device();
        return device == nullptr ? FLCC_SUCCESS : device->synchronize();
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
