// The batch entry points (flcc.h, "Batched correlation and peaks"): plan creation through the
// planner on the problem of one pair, and exec with host staging of device pointers.
#include "batch/device_runner.h"
#include "batch/host_runner.h"
#include "batch/runner_choice.h"
#include "batch/spec.h"
#include "flcc.h"
#include "plan/entry.h"
#include "plan/error.h"
#include "plan/memory.h"
#include "plan/plan.h"
#include "plan/planner.h"

#include <cstring>
#include <limits>
#include <mutex>
#include <vector>

namespace flcc::batch {

namespace {

flcc_result create(flcc_plan* plan, int op, int dim, flcc_size image, flcc_size templ,
                   const flcc_batch* batch, const flcc_options& o)
{
    if (plan == nullptr) return fail(FLCC_NULL_POINTER, "plan = NULL: where to store the plan");
    *plan = nullptr;
    if (batch == nullptr) return fail(FLCC_NULL_POINTER, "batch = NULL");
    Spec spec;
    flcc_result r = make_spec(spec, op, dim, image, templ, *batch, o);
    if (r != FLCC_SUCCESS) return r;
    auto made = std::make_shared<flcc_plan_s>();
    made->op = static_cast<flcc_op>(op);
    made->problem = spec.pair;
    // DEVICE (or an engine by name) runs the pairs on the GPU, on the faster engine unless one is
    // named; HOST on the host, where the planner chooses the pair's solver; ANY on whichever of
    // these is fastest (runner_choice.h) unless options.method names a host solver.
    EngineKind named{};
    const bool engine_named = DeviceRunner::engine_named(o.method, named);
    if (engine_named && spec.platform == FLCC_HOST)
        return fail(FLCC_METHOD_NOT_APPLICABLE, "options.method = \"%s\" runs on the GPU, not on platform HOST",
                    o.method);
    const flcc_rigor rigor = static_cast<flcc_rigor>(enum_value(o.rigor));
    std::vector<std::unique_ptr<Runner>> candidates;
    size_t estimate = 0;
    // The GPU engines that run the plan, after the runners already in `candidates`; when
    // `required` and none runs, the Fourier engine's failure (the one tried last).
    const auto add_engines = [&](bool required) -> flcc_result {
        const EngineKind estimated = DeviceRunner::estimated_kind(spec);
        flcc_result last = FLCC_SUCCESS;
        bool any = false;
        for (const EngineKind kind : {EngineKind::direct, EngineKind::block, EngineKind::fourier}) {
            std::unique_ptr<DeviceRunner> engine;
            if ((last = DeviceRunner::make(spec, kind, engine)) != FLCC_SUCCESS) {
                if (last == FLCC_NO_DEVICE) break;
                continue;
            }
            if (!any || kind == estimated) estimate = candidates.size();
            any = true;
            candidates.push_back(std::move(engine));
        }
        if (any) clear_detail();
        return any || !required ? FLCC_SUCCESS : last;
    };
    if (engine_named) {
        std::unique_ptr<DeviceRunner> runner;
        if ((r = DeviceRunner::make(spec, named, runner)) != FLCC_SUCCESS) return r;
        candidates.push_back(std::move(runner));
    } else if (spec.platform == FLCC_DEVICE) {
        if (o.method != nullptr)
            return fail(FLCC_METHOD_NOT_APPLICABLE,
                        "options.method = \"%s\": GPU batch plans run on \"%s\", \"%s\" or \"%s\"", o.method,
                        engine_name(EngineKind::fourier), engine_name(EngineKind::direct),
                        engine_name(EngineKind::block));
        if ((r = add_engines(true)) != FLCC_SUCCESS) return r;
    } else {
        if ((r = plan_solver(*made, o)) != FLCC_SUCCESS) return r;
        std::unique_ptr<HostRunner> host;
        if ((r = HostRunner::make(spec, *made->solver, std::move(made->executor), host)) !=
            FLCC_SUCCESS)
            return r;
        candidates.push_back(std::move(host));
        // The engines where they run the plan; without a GPU, or for what they do not run, the
        // host runner stays.
        if (spec.platform == FLCC_ANY && o.method == nullptr && rigor != FLCC_WISDOM_ONLY) {
            add_engines(false);
            clear_detail();
        }
    }
    std::unique_ptr<Runner> chosen;
    if ((r = choose_runner(spec, rigor, std::move(candidates), estimate, chosen)) != FLCC_SUCCESS) return r;
    made->batch = std::move(chosen);
    flcc_plan_s* handle = made.get();
    plan_register(std::move(made));
    *plan = handle;
    return FLCC_SUCCESS;
}

// The batch plan behind a handle, or the failure for a handle that is not one.
flcc_result batch_plan(flcc_plan handle, std::shared_ptr<flcc_plan_s>& plan)
{
    plan = plan_acquire(handle);
    if (plan == nullptr) return invalid_plan(handle);
    if (plan->batch == nullptr)
        return fail(FLCC_OPERATION_MISMATCH, "plan is not a batch plan (flcc_batch_plan_create)");
    return FLCC_SUCCESS;
}

// Bytes of n items of `size` bytes, or -1 when they overflow.
int64_t bytes_of(int64_t n, int64_t size)
{
    int64_t b;
    if (__builtin_mul_overflow(n, size, &b) || b > std::numeric_limits<ptrdiff_t>::max()) return -1;
    return b;
}

// A caller's array in host memory: the array itself, or a host copy of a device array (inputs
// copied in; outputs copied back by finish).
class HostView {
public:
    HostView(void* p, int64_t bytes) : user_(p), bytes_(bytes) {}
    flcc_result open(bool input)
    {
        if (user_ == nullptr || memory_space(user_) == MemorySpace::host) return FLCC_SUCCESS;
        copy_.resize(size_t(bytes_));
        if (input && !copy_to_host(copy_.data(), user_, size_t(bytes_)))
            return fail(FLCC_DEVICE_ERROR, "copying a device input to the host failed");
        return FLCC_SUCCESS;
    }
    void* data() { return copy_.empty() ? user_ : copy_.data(); }
    flcc_result finish()
    {
        if (copy_.empty() || copy_to_device(user_, copy_.data(), size_t(bytes_))) return FLCC_SUCCESS;
        return fail(FLCC_DEVICE_ERROR, "copying an output to the device failed");
    }

private:
    void* user_;
    int64_t bytes_;
    std::vector<unsigned char> copy_;
};

flcc_result exec(flcc_plan handle, const void* images, const void* templs, float* maps,
                 flcc_peak* peaks, int frames)
{
    std::shared_ptr<flcc_plan_s> plan;
    flcc_result r = batch_plan(handle, plan);
    if (r != FLCC_SUCCESS) return r;
    Runner& runner = static_cast<Runner&>(*plan->batch);
    const Spec& s = runner.spec();
    if (images == nullptr) return fail(FLCC_NULL_POINTER, "images = NULL");
    if (frames < 1) return fail(FLCC_INVALID_VALUE, "frames = %d: must be >= 1", frames);
    if (s.keep_maps && maps == nullptr) return fail(FLCC_NULL_POINTER, "maps = NULL with keep_maps");
    if (!s.keep_maps && maps != nullptr)
        return fail(FLCC_INVALID_VALUE, "maps given, but the plan was made with keep_maps = 0");
    if (s.peaks > 0 && peaks == nullptr) return fail(FLCC_NULL_POINTER, "peaks = NULL");
    const int64_t image_bytes = bytes_of(frames, s.images.frame_bytes());
    const int64_t templ_bytes = bytes_of(s.templ_per_frame ? frames : 1, s.templates.frame_bytes());
    const int64_t map_bytes = bytes_of(frames, s.map_floats_per_frame() * int64_t(sizeof(float)));
    const int64_t peak_bytes =
        bytes_of(frames, int64_t(s.maps_per_frame()) * s.peaks * int64_t(sizeof(flcc_peak)));
    if (image_bytes < 0 || templ_bytes < 0 || map_bytes < 0 || peak_bytes < 0)
        return fail(FLCC_INVALID_SIZE, "frames = %d: the frames' bytes overflow", frames);

    std::lock_guard<std::mutex> lock(plan->exec_mutex);
    if (templs == nullptr && !runner.templates_ready())
        return fail(FLCC_NULL_POINTER, "templs = NULL, and no templates were given before");
    if (runner.takes_device_pointers()) return runner.run(images, templs, maps, peaks, frames);
    HostView in(const_cast<void*>(images), image_bytes), tv(const_cast<void*>(templs), templ_bytes),
        mv(maps, map_bytes), pv(peaks, peak_bytes);
    if ((r = in.open(true)) != FLCC_SUCCESS || (r = tv.open(true)) != FLCC_SUCCESS ||
        (r = mv.open(false)) != FLCC_SUCCESS || (r = pv.open(false)) != FLCC_SUCCESS)
        return r;
    r = runner.run(in.data(), tv.data(), static_cast<float*>(mv.data()),
                   static_cast<flcc_peak*>(pv.data()), frames);
    if (r != FLCC_SUCCESS) return r;
    if ((r = mv.finish()) != FLCC_SUCCESS) return r;
    return pv.finish();
}

}  // namespace

}  // namespace flcc::batch

using namespace flcc;

extern "C" {

void flcc_batch_init(flcc_batch* b)
{
    if (b == nullptr) return;
    std::memset(b, 0, sizeof *b);
    b->pairing = FLCC_PAIRWISE;
    b->images = 1;
    b->templates = 1;
    b->image_type = FLCC_FLOAT32;
    b->templ_type = FLCC_FLOAT32;
    b->image_origins = nullptr;
    b->templ_origins = nullptr;
    b->peaks = 1;
    b->exclusion = 2;
    b->refine = FLCC_REFINE_PARABOLIC;
    b->fit_size = 5;
    b->upsample = 10;
}

flcc_result flcc_batch_plan_create(flcc_plan* plan, flcc_op op, int dim, flcc_size image,
                                   flcc_size templ, const flcc_batch* batch,
                                   const flcc_options* opts)
{
    return entry([&] {
        flcc_options o;
        flcc_options_init(&o);
        if (opts != nullptr) std::memcpy(&o, opts, sizeof o);
        return batch::create(plan, enum_value(op), dim, image, templ, batch, o);
    });
}

flcc_result flcc_batch_exec(flcc_plan plan, const void* images, const void* templs, float* maps,
                            flcc_peak* peaks, int frames)
{
    return entry([&] { return batch::exec(plan, images, templs, maps, peaks, frames); });
}

flcc_result flcc_batch_pairs(flcc_plan handle, int* pairs)
{
    return entry([&] {
        std::shared_ptr<flcc_plan_s> plan;
        const flcc_result r = batch::batch_plan(handle, plan);
        if (r != FLCC_SUCCESS) return r;
        if (pairs == nullptr) return fail(FLCC_NULL_POINTER, "pairs = NULL");
        *pairs = static_cast<batch::Runner&>(*plan->batch).spec().pairs;
        return FLCC_SUCCESS;
    });
}

}  // extern "C"
