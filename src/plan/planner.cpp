#include "plan/planner.h"

#include "plan/registry.h"
#include "plan/template.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>
#include <vector>

namespace flcc {

#ifndef FLCC_HAVE_CUDA
bool device_available(int) { return false; }
#endif

namespace {

bool on_platform(const Solver& s, flcc_platform platform, bool device_ok)
{
    if (s.platform() == FLCC_DEVICE && !device_ok) return false;
    return platform == FLCC_ANY || s.platform() == platform;
}

// Planner-owned inputs: random frames and template, never the user's buffers.
struct TimingData {
    std::vector<float> image, out, templ;
    int64_t frames;
    explicit TimingData(const Problem& p)
        : frames(p.type == FLCC_STREAM ? 2 : 1)
    {
        std::mt19937 rng(12345);
        std::uniform_real_distribution<float> u(0.f, 1.f);
        image.resize(size_t(p.image_elems() * frames));
        out.resize(size_t(p.out_elems() * frames));
        templ.resize(size_t(p.templ_elems()));
        for (float& v : image) v = u(rng);
        for (float& v : templ) v = u(rng);
    }
};

using Clock = std::chrono::steady_clock;

// Seconds per frame: SINGLE = template preparation plus one frame; STREAM = frames with the
// template already prepared. Median of repeats after a warm-up; fewer repeats when slow.
double time_executor(Executor& ex, const Problem& p, TimingData& d, flcc_result& status)
{
    const bool stream = p.type == FLCC_STREAM;
    const bool constant = template_is_constant(d.templ.data(), p.templ_elems());
    auto once = [&]() -> double {
        const auto t0 = Clock::now();
        flcc_result r = FLCC_SUCCESS;
        if (!stream) r = ex.set_template(d.templ.data(), constant);
        if (r == FLCC_SUCCESS) r = ex.execute(d.image.data(), d.out.data(), d.frames, MemorySpace::host);
        if (r != FLCC_SUCCESS) status = r;
        return std::chrono::duration<double>(Clock::now() - t0).count() / double(d.frames);
    };
    status = FLCC_SUCCESS;
    if (stream) status = ex.set_template(d.templ.data(), constant);
    if (status != FLCC_SUCCESS) return -1;
    const double warm = once();
    if (status != FLCC_SUCCESS) return -1;
    const int reps = warm < 0.05 ? 5 : warm < 0.25 ? 3 : 1;
    std::vector<double> t;
    for (int i = 0; i < reps; ++i) t.push_back(once());
    if (status != FLCC_SUCCESS) return -1;
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

}  // namespace

flcc_result plan_solver(flcc_plan_s& plan, const flcc_options& opts)
{
    const Problem& p = plan.problem;
    const bool device_ok = opts.platform != FLCC_HOST && device_available(p.device);
    if (opts.platform == FLCC_DEVICE && !device_ok) return FLCC_NO_DEVICE;

    if (opts.method != nullptr) {
        const Solver* s = find_solver(opts.method);
        if (s == nullptr) return FLCC_UNKNOWN_METHOD;
        if (!on_platform(*s, opts.platform, device_ok)) {
            if (s->platform() == FLCC_DEVICE && !device_ok) return FLCC_NO_DEVICE;
            return FLCC_INVALID_PLATFORM;
        }
        if (!s->applicable(p)) return FLCC_METHOD_NOT_APPLICABLE;
        const flcc_result r = s->create(p, plan.executor);
        if (r != FLCC_SUCCESS) return r;
        plan.solver = s;
        plan.candidates.push_back({s->name(), s->estimate_seconds(p)});
        return FLCC_SUCCESS;
    }

    std::vector<std::pair<double, const Solver*>> cands;
    for (const Solver* s : all_solvers())
        if (on_platform(*s, opts.platform, device_ok) && s->applicable(p))
            cands.push_back({s->estimate_seconds(p), s});
    if (cands.empty()) return FLCC_METHOD_NOT_APPLICABLE;
    std::stable_sort(cands.begin(), cands.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });

    if (opts.rigor == FLCC_WISDOM_ONLY) return FLCC_WISDOM_MISS;

    if (opts.rigor == FLCC_ESTIMATE) {
        for (const auto& c : cands) plan.candidates.push_back({c.second->name(), c.first});
        for (const auto& c : cands) {
            if (c.second->create(p, plan.executor) == FLCC_SUCCESS) {
                plan.solver = c.second;
                return FLCC_SUCCESS;
            }
        }
        return FLCC_ALLOC_FAILED;
    }

    // MEASURE.
    TimingData data(p);
    double best = -1;
    flcc_result last_error = FLCC_ALLOC_FAILED;
    for (const auto& c : cands) {
        // A candidate predicted to be far slower than the best measured one is not timed.
        if (best > 0 && c.first > 8 * best) {
            plan.candidates.push_back({c.second->name(), -1});
            continue;
        }
        std::unique_ptr<Executor> ex;
        flcc_result r = c.second->create(p, ex);
        double t = -1;
        if (r == FLCC_SUCCESS) t = time_executor(*ex, p, data, r);
        if (r != FLCC_SUCCESS) last_error = r;
        plan.candidates.push_back({c.second->name(), t});
        if (t >= 0 && (best < 0 || t < best)) {
            best = t;
            plan.executor = std::move(ex);
            plan.solver = c.second;
        }
    }
    return plan.solver != nullptr ? FLCC_SUCCESS : last_error;
}

}  // namespace flcc
