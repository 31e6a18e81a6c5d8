#include "host/thread_pool.h"

#include "plan/error.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>
#include <vector>

namespace flcc::host {

namespace {

// How long a worker watches for the next job before it sleeps (and the caller for the last
// tasks to end). Long enough to cover the gap between the frames of a stream or between
// repeated execs (a few microseconds of the caller's own work), short enough that idle workers
// give their cores back almost at once.
constexpr auto kWatch = std::chrono::microseconds(50);

// One look while watching. Yielding, not spinning: a watcher that shares its core with the
// thread it waits for hands the core over at once, where a spinning one would hold it from the
// caller for the whole watch.
inline void watch_pause() { std::this_thread::yield(); }

using Job = TaskRef;

// The process's workers; worker i (1-based) is thread i of every job that has more than i
// threads.
class Workers {
public:
    static Workers& instance()
    {
        static Workers w;
        return w;
    }

    ~Workers()
    {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stop_ = true;
        }
        wake_.notify_all();
        for (std::thread& t : threads_) t.join();
    }

    // Starts workers until there are `workers`. A thread the system refuses (std::thread throws
    // std::system_error: no memory for its stack, or no thread slot left) is std::bad_alloc
    // here; so is a full vector. Either leaves the workers as they were before that one.
    void reserve(int workers)
    {
        std::lock_guard<std::mutex> lock(mutex_);
        threads_.reserve(size_t(workers));
        while (int(threads_.size()) < workers) {
            const int index = int(threads_.size()) + 1;
            try {
                threads_.emplace_back([this, index] { loop(index); });
            } catch (const std::system_error& e) {
                set_detail("could not start worker thread %d of %d: %s", index, workers, e.what());
                throw std::bad_alloc();
            }
        }
    }

    // Runs the job on `threads` threads (the caller being thread 0); false, running nothing,
    // when the workers are serving another caller.
    bool run(int threads, int64_t tasks, const Job& fn)
    {
        bool idle = false;
        if (!busy_.compare_exchange_strong(idle, true, std::memory_order_acquire)) return false;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            job_ = &fn;
            tasks_ = tasks;
            threads_in_job_ = threads;
            next_.store(0, std::memory_order_relaxed);
            open_ = true;
            generation_.fetch_add(1, std::memory_order_release);
        }
        wake_.notify_all();
        run_tasks(0);
        // Every task is taken: wait only for the workers that joined (they are finishing
        // theirs); one still waking up finds the job closed and stays out. Waiting for every
        // worker to wake would add the scheduler's wake-up latency to every small frame on a
        // loaded machine. The last tasks usually end together: watch them end before sleeping.
        const auto until = std::chrono::steady_clock::now() + kWatch;
        while (active_.load(std::memory_order_acquire) != 0 &&
               std::chrono::steady_clock::now() < until)
            watch_pause();
        std::unique_lock<std::mutex> lock(mutex_);
        open_ = false;
        done_.wait(lock, [&] { return active_ == 0; });
        job_ = nullptr;
        std::exception_ptr error = std::move(error_);
        error_ = nullptr;
        busy_.store(false, std::memory_order_release);
        lock.unlock();
        if (error) std::rethrow_exception(error);
        return true;
    }

private:
    Workers() = default;

    // Runs tasks until none is left. A task that throws ends the job's hand-out (the tasks
    // not yet taken are skipped); the first exception is kept for the caller, which rethrows
    // it once every thread has left the job, so no thread ever runs a finished job's task.
    void run_tasks(int thread)
    {
        for (;;) {
            const int64_t task = next_.fetch_add(1, std::memory_order_relaxed);
            if (task >= tasks_) break;
            try {
                (*job_)(task, thread);
            } catch (...) {
                next_.store(tasks_, std::memory_order_relaxed);
                std::lock_guard<std::mutex> lock(error_mutex_);
                if (!error_) error_ = std::current_exception();
            }
        }
    }

    void loop(int index)
    {
        uint64_t seen = generation_.load(std::memory_order_acquire);
        for (;;) {
            const auto until = std::chrono::steady_clock::now() + kWatch;
            while (generation_.load(std::memory_order_acquire) == seen &&
                   std::chrono::steady_clock::now() < until)
                watch_pause();
            {
                std::unique_lock<std::mutex> lock(mutex_);
                wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
                if (stop_) return;
                seen = generation_;
                // Woke after every task was taken (nothing to join), or not one of this job's
                // threads.
                if (!open_ || index >= threads_in_job_) continue;
                ++active_;
            }
            run_tasks(index);
            {
                std::lock_guard<std::mutex> lock(mutex_);
                if (--active_ == 0 && !open_) done_.notify_one();
            }
        }
    }

    std::atomic<bool> busy_{false};   // set by the caller whose job the workers serve (a flag,
                                      // not a mutex: a task may itself call parallel_for)
    std::mutex mutex_;                // guards what follows, but the atomics' unlocked reads
    std::condition_variable wake_, done_;
    std::vector<std::thread> threads_;
    const Job* job_ = nullptr;
    int64_t tasks_ = 0;
    int threads_in_job_ = 1;
    std::atomic<int64_t> next_{0};
    bool open_ = false;                     // the current job may still be joined
    std::atomic<int> active_{0};            // workers in the current job
    std::atomic<uint64_t> generation_{0};   // bumped per job, so each worker joins it once
    bool stop_ = false;
    std::mutex error_mutex_;                // guards error_ while the job runs
    std::exception_ptr error_;              // the first exception a task threw
};

}  // namespace

ThreadPool::ThreadPool(int threads) : threads_(std::max(1, threads))
{
    if (threads_ > 1) Workers::instance().reserve(threads_ - 1);
}

void ThreadPool::parallel_for(int64_t tasks, TaskRef fn) const
{
    if (tasks <= 0) return;
    if (threads_ == 1 || tasks == 1 ||
        !Workers::instance().run(int(std::min<int64_t>(threads_, tasks)), tasks, fn))
        for (int64_t t = 0; t < tasks; ++t) fn(t, 0);
}

}  // namespace flcc::host
