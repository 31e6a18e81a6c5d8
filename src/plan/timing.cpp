#include "plan/timing.h"

#include "geometry/region.h"
#include "plan/memory.h"
#include "plan/planner.h"
#include "plan/template.h"

#include <algorithm>
#include <chrono>
#include <random>

namespace flcc {

HostFloats::HostFloats(size_t n, bool pinned) : n_(n)
{
    if (pinned) p_ = static_cast<float*>(pinned_alloc(n * sizeof(float)));
    pinned_ = p_ != nullptr;
    if (!pinned_) {
        v_.resize(n);
        p_ = v_.data();
    }
}

HostFloats::~HostFloats()
{
    if (pinned_) pinned_free(p_);
}

TimingData::TimingData(const Problem& p, bool pinned_host)
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
        const size_t in_bytes = image.size() * sizeof(float), out_bytes = out.size() * sizeof(float);
        device_image = static_cast<float*>(device_alloc(in_bytes, p.device));
        device_out = static_cast<float*>(device_alloc(out_bytes, p.device));
        if (device_image == nullptr || device_out == nullptr ||
            !copy_to_device(device_image, image.data(), in_bytes)) {
            device_free(device_image);
            device_free(device_out);
            device_image = device_out = nullptr;
        }
    }
}

TimingData::~TimingData()
{
    device_free(device_image);
    device_free(device_out);
}

using Clock = std::chrono::steady_clock;

ExecutorTimer::ExecutorTimer(Executor& ex, flcc_platform platform, const Problem& p, TimingData& d)
    : ex_(ex), d_(d), stream_(p.type == FLCC_STREAM),
      constant_(template_is_constant(d.templ.data(), p.templ_elems()))
{
    const bool on_device = platform == FLCC_DEVICE && d.device_image != nullptr;
    image_ = on_device ? d.device_image : d.image.data();
    out_ = on_device ? d.device_out : d.out.data();
    space_ = on_device ? MemorySpace::device : MemorySpace::host;
}

double ExecutorTimer::median(flcc_result& status)
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

double ExecutorTimer::once(flcc_result& status)
{
    const auto t0 = Clock::now();
    flcc_result r = FLCC_SUCCESS;
    if (!stream_) r = ex_.set_template(d_.templ.data(), constant_);
    if (r == FLCC_SUCCESS) r = ex_.execute(image_, out_, d_.frames, space_);
    if (r != FLCC_SUCCESS) status = r;
    return std::chrono::duration<double>(Clock::now() - t0).count() / double(d_.frames);
}

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
    for (int a = 0; a < 3; ++a) q.out[a] = geometry::axis_region(q.region, q.image[a], q.templ[a]).out;
    scale = double(p.out_elems()) / double(q.out_elems());
    return q;
}

namespace {

// The run-off: the finalists are timed again, in turn, for up to kRunoffRounds rounds within
// kRunoffBudget seconds, and the lowest median of those runs wins. Candidates timed seconds
// apart meet different load on a shared machine; alternating them puts the same load on each.
// Each timed run follows an untimed run of the same candidate: the candidates share the timing
// buffers, so a run straight after another candidate's finds the caches holding that
// candidate's data and state, and in a fixed rotation the same candidate always inherits the
// same predecessor's; a user's repeated execs of one plan run on their own warm data. Runs
// longer than kWarmRunBelow stream their data through the caches anyway and go without the
// untimed run, which would halve their rounds.
constexpr int kRunoffRounds = 41, kRunoffMinRounds = 3;
constexpr double kRunoffBudget = 0.25;
constexpr double kWarmRunBelow = 0.002;

}  // namespace

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
        timers.emplace_back(*f.executor, f.solver->platform(), f.on_proxy ? proxy : p,
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

}  // namespace flcc
