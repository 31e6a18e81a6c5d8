#include "plan/planner.h"

#include "plan/error.h"
#include "plan/memory.h"
#include "plan/registry.h"
#include "plan/template.h"
#include "plan/wisdom.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <set>
#include <string>
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

// Host floats, page-locked when asked for and a device is usable (pinned_alloc), else ordinary.
class HostFloats {
public:
    HostFloats(size_t n, bool pinned) : n_(n)
    {
        if (pinned) p_ = static_cast<float*>(pinned_alloc(n * sizeof(float)));
        pinned_ = p_ != nullptr;
        if (!pinned_) {
            v_.resize(n);
            p_ = v_.data();
        }
    }
    ~HostFloats()
    {
        if (pinned_) pinned_free(p_);
    }
    HostFloats(const HostFloats&) = delete;
    HostFloats& operator=(const HostFloats&) = delete;
    float* data() { return p_; }
    size_t size() const { return n_; }
    float* begin() { return p_; }
    float* end() { return p_ + n_; }

private:
    std::vector<float> v_;
    float* p_ = nullptr;
    size_t n_;
    bool pinned_ = false;
};

// Planner-owned inputs: random frames and template, never the user's buffers. For a plan that
// promises device-resident data, GPU solvers are timed on device copies. Host frames are
// page-locked when device solvers are candidates (pinned_host): users' frames from flcc_malloc
// are, and pageable copies of a 256^3 LCC frame took 11-15 ms on an H100 against ~3 ms pinned,
// which hid every difference in compute between the GPU solvers (the pick was 1.5x slower than
// slabs there).
struct TimingData {
    int64_t frames;   // first: image and out are sized by it
    HostFloats image, out;
    std::vector<float> templ;
    float* device_image = nullptr;
    float* device_out = nullptr;

    TimingData(const Problem& p, bool pinned_host)
        : frames(p.type == FLCC_STREAM ? 2 : 1),
          image(size_t(p.image_elems() * frames), pinned_host),
          out(size_t(p.out_elems() * frames), pinned_host)
    {
        std::mt19937 rng(12345);
        std::uniform_real_distribution<float> u(0.f, 1.f);
        templ.resize(size_t(p.templ_elems()));
        for (float& v : image) v = u(rng);
        for (float& v : templ) v = u(rng);
        if (p.device_resident && device_available(p.device)) {
            device_image = static_cast<float*>(device_alloc(image.size() * sizeof(float), p.device));
            device_out = static_cast<float*>(device_alloc(out.size() * sizeof(float), p.device));
            if (device_image == nullptr || device_out == nullptr ||
                !copy_to_device(device_image, image.data(), image.size() * sizeof(float))) {
                device_free(device_image);
                device_free(device_out);
                device_image = device_out = nullptr;
            }
        }
    }
    ~TimingData()
    {
        device_free(device_image);
        device_free(device_out);
    }
    TimingData(const TimingData&) = delete;
    TimingData& operator=(const TimingData&) = delete;
};

using Clock = std::chrono::steady_clock;

// Times one executor on the planner's data: seconds per frame, SINGLE = template preparation
// plus one frame, STREAM = frames with the template already prepared.
class ExecutorTimer {
public:
    ExecutorTimer(Executor& ex, const Solver& s, const Problem& p, TimingData& d)
        : ex_(ex), d_(d), stream_(p.type == FLCC_STREAM),
          constant_(template_is_constant(d.templ.data(), p.templ_elems()))
    {
        const bool on_device = s.platform() == FLCC_DEVICE && d.device_image != nullptr;
        image_ = on_device ? d.device_image : d.image.data();
        out_ = on_device ? d.device_out : d.out.data();
        space_ = on_device ? MemorySpace::device : MemorySpace::host;
    }

    // Median of repeats after a warm-up (fewer repeats when slow); -1 when a run fails, its
    // code in `status`.
    double median(flcc_result& status)
    {
        status = stream_ ? ex_.set_template(d_.templ.data(), constant_) : FLCC_SUCCESS;
        if (status != FLCC_SUCCESS) return -1;
        const double warm = once(status);
        if (status != FLCC_SUCCESS) return -1;
        const int reps = warm < 0.05 ? 5 : warm < 0.25 ? 3 : 1;
        std::vector<double> t;
        for (int i = 0; i < reps; ++i) t.push_back(once(status));
        if (status != FLCC_SUCCESS) return -1;
        std::sort(t.begin(), t.end());
        return t[t.size() / 2];
    }

    // One run.
    double once(flcc_result& status)
    {
        const auto t0 = Clock::now();
        flcc_result r = FLCC_SUCCESS;
        if (!stream_) r = ex_.set_template(d_.templ.data(), constant_);
        if (r == FLCC_SUCCESS) r = ex_.execute(image_, out_, d_.frames, space_);
        if (r != FLCC_SUCCESS) status = r;
        return std::chrono::duration<double>(Clock::now() - t0).count() / double(d_.frames);
    }

private:
    Executor& ex_;
    TimingData& d_;
    bool stream_, constant_;
    const float* image_;
    float* out_;
    MemorySpace space_;
};

// The key of a decision: the problem plus where it may run and where its data lives.
std::string wisdom_key(const Problem& p, flcc_platform platform)
{
    static const char* names[] = {"host", "device", "any"};
    return p.key() + " " + names[platform] + (p.device_resident ? " resident" : "");
}

// MEASURE times large problems on the host on a proxy: the image cropped so that timing stays
// short (the template and region unchanged), with times scaled by the ratio of output elements.
// Tiled solvers cost in proportion to their outputs, so the ranking carries over. GPU solvers
// are timed on the problem itself: it takes milliseconds there, and a crop would misjudge their
// transform boxes (a 160^3 crop padded to a 256^3 box, scaled back up, once made a 256^3 LCC
// pick a direct kernel 1.7x slower than the Fourier solver).
Problem timing_proxy(const Problem& p, double& scale)
{
    scale = 1;
    const int64_t limit = p.dim == 2 ? 2048 : 160;
    Problem q = p;
    bool cropped = false;
    for (int a = p.dim == 2 ? 1 : 0; a < 3; ++a)
        if (q.image[a] > limit && q.image[a] > 2 * q.templ[a]) {
            q.image[a] = std::max(limit, 2 * q.templ[a]);
            cropped = true;
        }
    if (!cropped) return p;
    for (int a = 0; a < 3; ++a) {
        const int64_t s = q.image[a], t = q.templ[a];
        switch (q.region) {
        case FLCC_FULL: q.out[a] = s + t - 1; break;
        case FLCC_SAME: q.out[a] = s; break;
        case FLCC_VALID: q.out[a] = s - t + 1; break;
        }
    }
    scale = double(p.out_elems()) / double(q.out_elems());
    return q;
}

// Total time MEASURE spends timing candidates, after the first (always timed) and the first of
// each family (see plan_solver); with the run-off below, MEASURE planning of LCC 2000^2 / 16^2
// takes 1.3-1.7 s on the 2-core machine (1.2 s here and no family rule: 1.4-1.6 s, the direct
// solver never timed).
constexpr double kMeasureBudget = 1.0;

// The run-off: candidates within kRunoffSpread of the fastest (kRunoffSize at most) are timed
// again, in turn, for up to kRunoffRounds rounds within kRunoffBudget seconds, and the lowest
// median of those runs wins. Candidates timed seconds apart meet different load on a shared
// machine; alternating them puts the same load on each. (One pass alone picked within 10% of
// the fastest on ~82% of the planner map's cells, most misses between candidates within a
// factor 1.1-2 of each other.) Each timed run follows an untimed run of the same candidate:
// the candidates share the timing buffers, so a run straight after another candidate's finds
// the caches holding that candidate's data and state, and in a fixed rotation the same
// candidate always inherits the same predecessor's; a user's repeated execs of one plan run
// on their own warm data. Runs longer than kWarmRunBelow stream their data through the caches
// anyway and go without the untimed run, which would halve their rounds.
constexpr double kRunoffSpread = 1.5;
constexpr size_t kRunoffSize = 3;
constexpr int kRunoffRounds = 41, kRunoffMinRounds = 3;
constexpr double kRunoffBudget = 0.25;
constexpr double kWarmRunBelow = 0.002;

// A solver's family: its name without the last part ("host.direct2.k16" -> "host.direct2").
std::string solver_family(const std::string& name) { return name.substr(0, name.rfind('.')); }

// A candidate timed by MEASURE, its executor kept while it may reach the run-off.
struct Timed {
    const Solver* solver;
    std::unique_ptr<Executor> executor;
    bool on_proxy;
    double seconds;   // per frame, scaled to the problem
};

// Picks among the finalists (sorted fastest first) by alternating runs; returns the index. The
// finalists' seconds become the medians of their run-off runs.
size_t runoff(std::vector<Timed>& finalists, const Problem& p, const Problem& proxy,
              TimingData* proxy_data, TimingData* full_data, double proxy_scale)
{
    const auto warm_first = [](const Timed& f) { return f.seconds < kWarmRunBelow; };
    double round_seconds = 0;
    for (const Timed& f : finalists) round_seconds += warm_first(f) ? 2 * f.seconds : f.seconds;
    const int rounds = std::min(kRunoffRounds, int(kRunoffBudget / std::max(round_seconds, 1e-9)));
    if (finalists.size() < 2 || rounds < kRunoffMinRounds) return 0;
    std::vector<ExecutorTimer> timers;
    for (Timed& f : finalists)
        timers.emplace_back(*f.executor, *f.solver, f.on_proxy ? proxy : p,
                            f.on_proxy ? *proxy_data : *full_data);
    std::vector<std::vector<double>> runs(finalists.size());
    for (int r = 0; r < rounds; ++r)
        for (size_t k = 0; k < finalists.size(); ++k) {
            const size_t i = (k + size_t(r)) % finalists.size();   // each leads in turn
            flcc_result status = FLCC_SUCCESS;
            if (warm_first(finalists[i]))
                timers[i].once(status);   // untimed: the caches hold this candidate's data
            const double t = timers[i].once(status);
            if (status != FLCC_SUCCESS) return 0;
            runs[i].push_back(finalists[i].on_proxy ? t * proxy_scale : t);
        }
    size_t best = 0;
    for (size_t i = 0; i < runs.size(); ++i) {
        std::sort(runs[i].begin(), runs[i].end());
        finalists[i].seconds = runs[i][runs[i].size() / 2];
        if (finalists[i].seconds < finalists[best].seconds) best = i;
    }
    return best;
}

// Makes s's executor for p. A failure's detail names the solver (and says what ran out when
// the solver said nothing).
flcc_result make_executor(const Solver& s, const Problem& p, std::unique_ptr<Executor>& out)
{
    clear_detail();
    const flcc_result r = s.create(p, out);
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

}  // namespace

flcc_result plan_solver(flcc_plan_s& plan, const flcc_options& opts)
{
    const Problem& p = plan.problem;
    const bool device_ok = opts.platform != FLCC_HOST && device_available(p.device);
    if (opts.platform == FLCC_DEVICE && !device_ok)
        return fail(FLCC_NO_DEVICE, "platform DEVICE: no usable GPU (device %d)", p.device);

    if (opts.method != nullptr) {
        const Solver* s = find_solver(opts.method);
        if (s == nullptr)
            return fail(FLCC_UNKNOWN_METHOD, "options.method = \"%s\": no solver of this build",
                        opts.method);
        if (!on_platform(*s, opts.platform, device_ok)) {
            if (s->platform() == FLCC_DEVICE && !device_ok)
                return fail(FLCC_NO_DEVICE, "options.method = \"%s\": a GPU solver, no usable GPU",
                            opts.method);
            return fail(FLCC_INVALID_PLATFORM,
                        "options.method = \"%s\": not a solver of options.platform",
                        opts.method);
        }
        if (!s->applicable(p))
            return fail(FLCC_METHOD_NOT_APPLICABLE, "options.method = \"%s\": cannot solve %s",
                        opts.method, p.key().c_str());
        const flcc_result r = make_executor(*s, p, plan.executor);
        if (r != FLCC_SUCCESS) return r;
        plan.solver = s;
        plan.candidates.push_back({s->name(), s->estimate_seconds(p)});
        return FLCC_SUCCESS;
    }

    // Wisdom: a recorded decision is reused without timing (MEASURE decisions serve every
    // rigour); a solver gone from this platform or no longer applicable is planned afresh. First,
    // so that a hit costs no candidate list (the estimates of every applicable solver: ~0.04 ms
    // for a 2000^2 LCC, a tenth of a Fourier hit once the wisdom is imported).
    const std::string key = wisdom_key(p, opts.platform);
    const std::string known = wisdom::lookup(key);
    if (!known.empty()) {
        const Solver* s = find_solver(known.c_str());
        if (s != nullptr && on_platform(*s, opts.platform, device_ok) && s->applicable(p) &&
            make_executor(*s, p, plan.executor) == FLCC_SUCCESS) {
            plan.solver = s;
            plan.candidates.push_back({s->name(), s->estimate_seconds(p)});
            return FLCC_SUCCESS;
        }
    }

    std::vector<std::pair<double, const Solver*>> cands;
    for (const Solver* s : all_solvers())
        if (on_platform(*s, opts.platform, device_ok) && s->applicable(p) &&
            !s->repeats_smaller_variant(p))
            cands.push_back({s->estimate_seconds(p), s});
    if (cands.empty())
        return fail(FLCC_METHOD_NOT_APPLICABLE, "no solver of the platform can solve %s",
                    p.key().c_str());
    std::stable_sort(cands.begin(), cands.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    if (opts.rigor == FLCC_WISDOM_ONLY)
        return fail(FLCC_WISDOM_MISS, "options.rigor = WISDOM_ONLY: no wisdom for \"%s\"",
                    key.c_str());

    // A candidate that cannot be made (for want of memory, most often) is passed over for the
    // next one: a slower plan that runs beats none. The last candidate's error is the plan's
    // when none can be made.
    const auto by_estimate = [&] {
        plan.candidates.clear();
        for (const auto& c : cands) plan.candidates.push_back({c.second->name(), c.first});
        flcc_result r = FLCC_ALLOC_FAILED;
        for (const auto& c : cands) {
            r = make_executor(*c.second, p, plan.executor);
            if (r == FLCC_SUCCESS) {
                plan.solver = c.second;
                return FLCC_SUCCESS;
            }
        }
        return r;
    };
    if (opts.rigor == FLCC_ESTIMATE) return by_estimate();

    // MEASURE, on a proxy when the problem is large and the solver on the host. Timing data is
    // made when first needed, once for the proxy and once for the problem itself.
    double proxy_scale = 1;
    const Problem proxy = timing_proxy(p, proxy_scale);
    std::unique_ptr<TimingData> proxy_data, full_data;
    std::vector<Timed> finalists;   // fastest first, within kRunoffSpread of the fastest
    flcc_result last_error = FLCC_ALLOC_FAILED;
    bool passed_over = false;       // a candidate was passed over for want of memory
    const auto start = Clock::now();
    std::set<std::string> families_timed;
    for (const auto& c : cands) {
        // A candidate predicted to be far slower than the best measured one is not timed, nor
        // is any once the time budget is spent, except the first (best-estimated) of a family
        // not timed yet: the Fourier candidates' set-up (FFTW plans) could spend the budget
        // before the direct solver, a close second in the cost model, was ever timed (LCC
        // 2000^2 / 16^2 on an AVX2 machine: three Fourier candidates timed, direct not,
        // although it ran as fast as they did).
        const double spent = std::chrono::duration<double>(Clock::now() - start).count();
        const double best = finalists.empty() ? -1 : finalists.front().seconds;
        const std::string family = solver_family(c.second->name());
        const bool new_family = families_timed.count(family) == 0;
        if (best > 0 && (c.first > 8 * best || (spent > kMeasureBudget && !new_family))) {
            plan.candidates.push_back({c.second->name(), -1});
            continue;
        }
        const bool on_proxy = proxy_scale != 1 && c.second->platform() == FLCC_HOST;
        const Problem& q = on_proxy ? proxy : p;
        if (!c.second->applicable(q)) {
            plan.candidates.push_back({c.second->name(), -1});
            continue;
        }
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
                return by_estimate();
            }
        }
        std::unique_ptr<Executor> ex;
        flcc_result r = make_executor(*c.second, q, ex);
        double t = -1;
        if (r == FLCC_SUCCESS) t = ExecutorTimer(*ex, *c.second, q, *data).median(r);
        if (r != FLCC_SUCCESS) last_error = r;
        if (r == FLCC_ALLOC_FAILED) passed_over = true;
        if (t >= 0 && on_proxy) t *= proxy_scale;
        plan.candidates.push_back({c.second->name(), t});
        if (t < 0) continue;
        // Keep the executors of the close ones (their buffers) for the run-off, no others.
        finalists.push_back({c.second, std::move(ex), on_proxy, t});
        std::stable_sort(finalists.begin(), finalists.end(),
                         [](const Timed& a, const Timed& b) { return a.seconds < b.seconds; });
        while (finalists.size() > kRunoffSize ||
               finalists.back().seconds > kRunoffSpread * finalists.front().seconds)
            finalists.pop_back();
    }
    if (finalists.empty()) return last_error;
    Timed& chosen = finalists[runoff(finalists, p, proxy, proxy_data.get(), full_data.get(), proxy_scale)];
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
    std::vector<std::pair<double, const Solver*>> order;
    for (const auto& c : cands) {
        double t = -1;
        for (const auto& k : plan.candidates)
            if (k.name == c.second->name()) t = k.seconds;
        if (c.second != winner && c.second->applicable(p))
            order.push_back({t >= 0 ? t : 1e300, c.second});
    }
    std::stable_sort(order.begin(), order.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    order.insert(order.begin(), {0.0, winner});
    flcc_result r = FLCC_ALLOC_FAILED;
    for (const auto& o : order) {
        r = make_executor(*o.second, p, plan.executor);
        if (r == FLCC_SUCCESS) {
            plan.solver = o.second;
            if (o.second == winner && !passed_over) record_decision(key, *winner);
            return FLCC_SUCCESS;
        }
        passed_over = true;
    }
    return r;
}

}  // namespace flcc
