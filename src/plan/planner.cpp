#include "plan/planner.h"

#include "plan/error.h"
#include "plan/memory.h"
#include "plan/registry.h"
#include "plan/timing.h"
#include "plan/wisdom.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace flcc {

namespace {

bool on_platform(const Solver& s, flcc_platform platform, bool device_ok)
{
    if (s.platform() == FLCC_DEVICE && !device_ok) return false;
    return platform == FLCC_ANY || s.platform() == platform;
}

// One solver's candidate for the plan's problem, with its estimate.
struct Option {
    double estimate;
    const Solver* solver;
    std::unique_ptr<Candidate> candidate;
};

// Makes the executor of s's candidate. A failure's detail names the solver (and says what ran
// out when the solver said nothing).
flcc_result make_executor(const Solver& s, const Candidate& c, std::unique_ptr<Executor>& out)
{
    clear_detail();
    const flcc_result r = c.create(out);
    if (r == FLCC_SUCCESS) return r;
    out.reset();
    char why[256];
    std::snprintf(why, sizeof why, "%s",
                  detail_is_empty() ? flcc_result_string(r) : flcc_last_error_detail());
    return fail(r, "%s: %s", s.name(), why);
}

// Records a decision. Wisdom only saves later planning: a decision that cannot be recorded for
// want of memory is dropped, and the plan stands.
void record_decision(const std::string& key, const Solver& s)
{
    try {
        wisdom::record(key, s.name());
    } catch (const std::bad_alloc&) {
    }
}

// Makes the plan's executor from a chosen candidate.
flcc_result adopt(flcc_plan_s& plan, const Solver& s, const Candidate& c)
{
    const flcc_result r = make_executor(s, c, plan.executor);
    if (r != FLCC_SUCCESS) return r;
    plan.solver = &s;
    return FLCC_SUCCESS;
}

// The method named in the options, if it can solve the problem.
flcc_result plan_forced(flcc_plan_s& plan, const char* method, bool device_ok)
{
    const Problem& p = plan.problem;
    const Solver* s = find_solver(method);
    if (s == nullptr && solver_of_missing_backend(method))
        return fail(FLCC_NO_DEVICE, "options.method = \"%s\": a GPU solver, and the CUDA backend "
                    "cannot be loaded here", method);
    if (s == nullptr)
        return fail(FLCC_UNKNOWN_METHOD, "options.method = \"%s\": no solver of this build", method);
    if (!on_platform(*s, p.platform, device_ok)) {
        if (s->platform() == FLCC_DEVICE && !device_ok)
            return fail(FLCC_NO_DEVICE, "options.method = \"%s\": a GPU solver, no usable GPU",
                        method);
        return fail(FLCC_INVALID_PLATFORM, "options.method = \"%s\": not a solver of options.platform",
                    method);
    }
    const std::unique_ptr<Candidate> c = s->plan(p);
    if (c == nullptr)
        return fail(FLCC_METHOD_NOT_APPLICABLE, "options.method = \"%s\": cannot solve %s", method,
                    p.key().c_str());
    const flcc_result r = adopt(plan, *s, *c);
    if (r == FLCC_SUCCESS) plan.candidates.push_back({s->name(), c->estimate_seconds()});
    return r;
}

// The decision recorded as wisdom, when its solver is still of this platform and applies.
// Tried before the candidate list is made, so that a hit costs no estimates.
bool plan_from_wisdom(flcc_plan_s& plan, const std::string& known, bool device_ok)
{
    const Problem& p = plan.problem;
    const Solver* s = find_solver(known.c_str());
    if (s == nullptr || !on_platform(*s, p.platform, device_ok)) return false;
    const std::unique_ptr<Candidate> c = s->plan(p);
    if (c == nullptr || adopt(plan, *s, *c) != FLCC_SUCCESS) return false;
    plan.candidates.push_back({s->name(), c->estimate_seconds()});
    return true;
}

// ESTIMATE: the options in the order of their estimates (every one listed). A candidate that
// cannot be made (for want of memory, most often) is passed over for the next one: a slower
// plan that runs beats none. The last candidate's error is the plan's when none can be made.
flcc_result plan_by_estimate(flcc_plan_s& plan, const std::vector<Option>& options)
{
    plan.candidates.clear();
    for (const Option& o : options) plan.candidates.push_back({o.solver->name(), o.estimate});
    flcc_result r = FLCC_ALLOC_FAILED;
    for (const Option& o : options)
        if ((r = adopt(plan, *o.solver, *o.candidate)) == FLCC_SUCCESS) return r;
    return r;
}

// Total time MEASURE spends timing candidates, after the first (always timed) and the first of
// each family.
constexpr double kMeasureBudget = 1.0;

// A solver's family: its name without the last part ("host.direct2.k16" -> "host.direct2").
std::string solver_family(const std::string& name) { return name.substr(0, name.rfind('.')); }

// MEASURE: times the options (cheapest estimate first) and keeps the fastest, the closest ones
// decided by a run-off. An option predicted to be far slower than the best measured one is not
// timed, nor is any once the time budget is spent, except the first (best-estimated) of a
// family not timed yet: one family's set-up (FFTW plans) must not spend the budget before
// another family, close in the cost model, is timed at all. Large host problems are timed on a
// proxy (timing_proxy); timing data is made when first needed, once for the proxy and once for
// the problem itself.
flcc_result plan_by_measure(flcc_plan_s& plan, std::vector<Option>& options, bool device_ok,
                            const std::string& key)
{
    const Problem& p = plan.problem;
    double proxy_scale = 1;
    const Problem proxy = timing_proxy(p, proxy_scale);
    std::unique_ptr<TimingData> proxy_data, full_data;
    std::vector<Timed> finalists;   // fastest first, within kRunoffSpread of the fastest
    flcc_result last_error = FLCC_ALLOC_FAILED;
    bool passed_over = false;       // a candidate was passed over for want of memory
    const auto start = std::chrono::steady_clock::now();
    std::set<std::string> families_timed;
    for (const Option& o : options) {
        const double spent =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const double best = finalists.empty() ? -1 : finalists.front().seconds;
        const std::string family = solver_family(o.solver->name());
        const bool new_family = families_timed.count(family) == 0;
        if (best > 0 && (o.estimate > 8 * best || (spent > kMeasureBudget && !new_family))) {
            plan.candidates.push_back({o.solver->name(), -1});
            continue;
        }
        const bool on_proxy = proxy_scale != 1 && o.solver->platform() == FLCC_HOST;
        const Problem& q = on_proxy ? proxy : p;
        std::unique_ptr<Candidate> proxy_candidate;
        if (on_proxy && (proxy_candidate = o.solver->plan(q)) == nullptr) {
            plan.candidates.push_back({o.solver->name(), -1});
            continue;
        }
        const Candidate& timed = on_proxy ? *proxy_candidate : *o.candidate;
        families_timed.insert(family);
        std::unique_ptr<TimingData>& data = on_proxy ? proxy_data : full_data;
        // Without memory for the timing data nothing can be timed: the plan is made as
        // ESTIMATE makes it (and not recorded as wisdom).
        if (data == nullptr) {
            try {
                data = std::make_unique<TimingData>(q, device_ok && !q.device_resident);
            } catch (const std::bad_alloc&) {
                finalists.clear();
                proxy_data.reset();
                full_data.reset();
                return plan_by_estimate(plan, options);
            }
        }
        std::unique_ptr<Executor> ex;
        flcc_result r = make_executor(*o.solver, timed, ex);
        double t = -1;
        if (r == FLCC_SUCCESS) t = ExecutorTimer(*ex, o.solver->platform(), q, *data).median(r);
        if (r != FLCC_SUCCESS) last_error = r;
        if (r == FLCC_ALLOC_FAILED) passed_over = true;
        if (t >= 0 && on_proxy) t *= proxy_scale;
        plan.candidates.push_back({o.solver->name(), t});
        if (t < 0) continue;
        // Keep the executors of the close ones (their buffers) for the run-off, no others.
        finalists.push_back({o.solver, std::move(ex), on_proxy, t});
        std::stable_sort(finalists.begin(), finalists.end(),
                         [](const Timed& a, const Timed& b) { return a.seconds < b.seconds; });
        while (finalists.size() > kRunoffSize ||
               finalists.back().seconds > kRunoffSpread * finalists.front().seconds)
            finalists.pop_back();
    }
    if (finalists.empty()) return last_error;
    Timed& chosen =
        finalists[runoff(finalists, p, proxy, proxy_data.get(), full_data.get(), proxy_scale)];
    for (const Timed& f : finalists)
        for (auto& c : plan.candidates)
            if (c.name == f.solver->name()) c.seconds = f.seconds;
    const Solver* winner = chosen.solver;
    if (!chosen.on_proxy) {
        plan.executor = std::move(chosen.executor);
        plan.solver = winner;
        if (!passed_over) record_decision(key, *winner);
        return FLCC_SUCCESS;
    }
    // Timed on the proxy: made for the problem now, after the finalists' buffers are gone. When
    // the winner cannot be made at full size, the other timed candidates are tried, fastest
    // first, then the untimed ones in the order of their estimates.
    finalists.clear();
    std::vector<std::pair<double, const Option*>> order;
    const Option* first = nullptr;
    for (const Option& o : options) {
        if (o.solver == winner) {
            first = &o;
            continue;
        }
        double t = -1;
        for (const auto& k : plan.candidates)
            if (k.name == o.solver->name()) t = k.seconds;
        order.push_back({t >= 0 ? t : 1e300, &o});
    }
    std::stable_sort(order.begin(), order.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    order.insert(order.begin(), {0.0, first});
    flcc_result r = FLCC_ALLOC_FAILED;
    for (const auto& o : order) {
        r = adopt(plan, *o.second->solver, *o.second->candidate);
        if (r == FLCC_SUCCESS) {
            if (o.second->solver == winner && !passed_over) record_decision(key, *winner);
            return FLCC_SUCCESS;
        }
        passed_over = true;
    }
    return r;
}

}  // namespace

flcc_result plan_solver(flcc_plan_s& plan, const flcc_options& opts)
{
    const Problem& p = plan.problem;
    const bool device_ok = p.platform != FLCC_HOST && device_available(p.device);
    if (p.platform == FLCC_DEVICE && !device_ok)
        return fail(FLCC_NO_DEVICE, "platform DEVICE: no usable GPU (device %d)", p.device);

    if (opts.method != nullptr) return plan_forced(plan, opts.method, device_ok);

    // Wisdom: a recorded decision is reused without timing (MEASURE decisions serve every
    // rigour); a solver gone from this platform or no longer applicable is planned afresh.
    const std::string key = p.key();
    const std::string known = wisdom::lookup(key);
    if (!known.empty() && plan_from_wisdom(plan, known, device_ok)) return FLCC_SUCCESS;

    std::vector<Option> options;
    for (const Solver* s : all_solvers()) {
        if (!on_platform(*s, p.platform, device_ok)) continue;
        std::unique_ptr<Candidate> c = s->plan(p);
        if (c == nullptr || c->repeats_smaller_variant()) continue;
        const double estimate = c->estimate_seconds();
        options.push_back({estimate, s, std::move(c)});
    }
    if (options.empty())
        return fail(FLCC_METHOD_NOT_APPLICABLE, "no solver of the platform can solve %s",
                    p.key().c_str());
    std::stable_sort(options.begin(), options.end(),
                     [](const Option& a, const Option& b) { return a.estimate < b.estimate; });
    if (enum_value(opts.rigor) == FLCC_WISDOM_ONLY)
        return fail(FLCC_WISDOM_MISS, "options.rigor = WISDOM_ONLY: no wisdom for \"%s\"",
                    key.c_str());
    if (enum_value(opts.rigor) == FLCC_ESTIMATE) return plan_by_estimate(plan, options);
    return plan_by_measure(plan, options, device_ok, key);
}

}  // namespace flcc
