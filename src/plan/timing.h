// The planner's timing harness: planner-owned random inputs, the timer of one executor, the
// proxy problem that large host problems are timed on, and the run-off between the closest
// candidates. It measures; the planner (plan/planner.cpp) decides.
#pragma once

#include "plan/solver.h"

#include <memory>
#include <vector>

namespace flcc {

// Host floats, page-locked when asked for and a device is usable (pinned_alloc), else ordinary.
class HostFloats {
public:
    HostFloats(size_t n, bool pinned);   // throws std::bad_alloc
    ~HostFloats();
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
// page-locked when device solvers are candidates (`pinned_host`), as users' frames from
// flcc_malloc are: pageable copies would dominate a GPU solver's time and hide the differences
// in compute between GPU solvers.
struct TimingData {
    int64_t frames;   // first: image and out are sized by it
    HostFloats image, out;
    std::vector<float> templ;
    float* device_image = nullptr;
    float* device_out = nullptr;

    TimingData(const Problem& p, bool pinned_host);   // throws std::bad_alloc
    ~TimingData();
    TimingData(const TimingData&) = delete;
    TimingData& operator=(const TimingData&) = delete;
};

// Times one executor on the planner's data: seconds per frame, SINGLE = template preparation
// plus one frame, STREAM = frames with the template already prepared.
class ExecutorTimer {
public:
    ExecutorTimer(Executor& ex, flcc_platform platform, const Problem& p, TimingData& d);

    // Median of repeats after a warm-up (fewer repeats when slow); -1 when a run fails, its
    // code in `status`.
    double median(flcc_result& status);
    // One run.
    double once(flcc_result& status);

private:
    Executor& ex_;
    TimingData& d_;
    bool stream_, constant_;
    const float* image_;
    float* out_;
    MemorySpace space_;
};

// The problem MEASURE times a host candidate on: large images cropped so that timing stays
// short (the template and region unchanged). `scale` is the ratio of output elements that
// converts the proxy's times to the problem's (1 when p is returned unchanged). Tiled solvers
// cost in proportion to their outputs, so the ranking carries over. GPU solvers are timed on
// the problem itself: it takes milliseconds there, and a crop would misjudge their transform
// boxes.
Problem timing_proxy(const Problem& p, double& scale);

// A candidate timed by MEASURE, its executor kept while it may reach the run-off.
struct Timed {
    const Solver* solver;
    std::unique_ptr<Executor> executor;
    bool on_proxy;
    double seconds;   // per frame, scaled to the problem
};

// The finalists: candidates within kRunoffSpread of the fastest, kRunoffSize at most.
constexpr double kRunoffSpread = 1.5;
constexpr size_t kRunoffSize = 3;

// Picks among the finalists (sorted fastest first) by alternating runs; returns the index. The
// finalists' seconds become the medians of their run-off runs.
size_t runoff(std::vector<Timed>& finalists, const Problem& p, const Problem& proxy,
              TimingData* proxy_data, TimingData* full_data, double proxy_scale);

}  // namespace flcc
