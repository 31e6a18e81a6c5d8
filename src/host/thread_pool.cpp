#include "host/thread_pool.h"

#include <chrono>

namespace flcc::host {

ThreadPool::ThreadPool(int threads)
{
    for (int t = 1; t < threads; ++t) workers_.emplace_back([this, t] { worker_loop(t); });
}

ThreadPool::~ThreadPool()
{
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& w : workers_) w.join();
}

void ThreadPool::run_tasks(int thread)
{
    for (;;) {
        const int64_t task = next_.fetch_add(1, std::memory_order_relaxed);
        if (task >= tasks_) break;
        (*job_)(task, thread);
    }
}

namespace {

// How long a worker watches for the next job before it sleeps. Long enough to cover the gap
// between the frames of a stream or between repeated execs (a few microseconds of the caller's
// own work), short enough that an idle pool gives its cores back almost at once.
constexpr auto kWatch = std::chrono::microseconds(50);

inline void cpu_relax()
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

}  // namespace

void ThreadPool::worker_loop(int thread)
{
    uint64_t seen = 0;
    for (;;) {
        const auto until = std::chrono::steady_clock::now() + kWatch;
        while (generation_.load(std::memory_order_acquire) == seen &&
               std::chrono::steady_clock::now() < until)
            for (int i = 0; i < 32; ++i) cpu_relax();
        {
            std::unique_lock<std::mutex> lock(mutex_);
            wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
            if (stop_) return;
            seen = generation_;
            if (!open_) continue;   // woke after every task was taken: nothing to join
            ++active_;
        }
        run_tasks(thread);
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (--active_ == 0 && !open_) done_.notify_one();
        }
    }
}

void ThreadPool::parallel_for(int64_t tasks, const std::function<void(int64_t, int)>& fn)
{
    if (tasks <= 0) return;
    if (workers_.empty() || tasks == 1) {
        for (int64_t t = 0; t < tasks; ++t) fn(t, 0);
        return;
    }
    {
        std::lock_guard<std::mutex> lock(mutex_);
        job_ = &fn;
        tasks_ = tasks;
        next_.store(0, std::memory_order_relaxed);
        open_ = true;
        ++generation_;
    }
    wake_.notify_all();
    run_tasks(0);
    // Every task is taken: wait only for the workers that joined (they are finishing theirs);
    // one still waking up finds the job closed and stays out. Waiting for every worker to wake
    // cost a small frame tens of microseconds of scheduling latency on a loaded machine. The
    // last tasks usually end together: watch them end before sleeping, for the same reason.
    const auto until = std::chrono::steady_clock::now() + kWatch;
    while (active_.load(std::memory_order_acquire) != 0 && std::chrono::steady_clock::now() < until)
        for (int i = 0; i < 32; ++i) cpu_relax();
    std::unique_lock<std::mutex> lock(mutex_);
    open_ = false;
    done_.wait(lock, [&] { return active_ == 0; });
    job_ = nullptr;
}

}  // namespace flcc::host
