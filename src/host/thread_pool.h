// A persistent pool of worker threads, created once per executor and reused for every frame:
// execute never creates threads. parallel_for hands out task indices through an atomic counter,
// and the calling thread works too, so a pool of n threads starts n - 1 workers. The caller
// waits only for workers that joined a job, not for those still waking up when it is done.
// A worker that finished a job watches for the next one for a short while before it sleeps:
// frames executed back to back then start on every thread at once instead of after the
// scheduler's wake-up latency (on a 2-core VM up to ~0.1 ms, a run of a small frame was then
// often done by the calling thread alone).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace flcc::host {

class ThreadPool {
public:
    explicit ThreadPool(int threads);
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    int size() const { return static_cast<int>(workers_.size()) + 1; }

    // Calls fn(task, thread) for every task in [0, tasks), thread in [0, size()); returns when
    // all have finished. fn must not throw. One parallel_for runs at a time per pool.
    void parallel_for(int64_t tasks, const std::function<void(int64_t, int)>& fn);

private:
    void worker_loop(int thread);
    void run_tasks(int thread);

    std::vector<std::thread> workers_;
    std::mutex mutex_;
    std::condition_variable wake_, done_;
    const std::function<void(int64_t, int)>* job_ = nullptr;
    int64_t tasks_ = 0;
    std::atomic<int64_t> next_{0};
    bool open_ = false;         // the current job may still be joined
    std::atomic<int> active_{0};   // workers in the current job (changed under the mutex)
    std::atomic<uint64_t> generation_{0};   // bumped per job (under the mutex), so each worker
                                             // joins each job once; read unlocked while watching
    bool stop_ = false;
};

}  // namespace flcc::host
