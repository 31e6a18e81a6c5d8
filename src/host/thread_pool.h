// The host solvers' threads. One set of worker threads serves the whole process (started as plans
// ask for them, never by execute), and every executor holds a ThreadPool: its thread count and
// the door to those workers. parallel_for hands out task indices through an atomic counter, and
// the calling thread works too, so a plan of n threads uses n - 1 workers.
//
// Why one set for all plans: with a set per plan, the idle workers of one plan kept the cores
// busy (or the scheduler placed them on the caller's core) while another plan ran, and which
// plan of a program ran at full speed depended on the order its threads were made: on a 2-core
// VM, of two plans of one problem made in turn, one ran every exec at two-thread speed and the
// other at one-thread speed, deterministically (LCC 64^2, 4x4: 18 against 34 us), and the
// planner's timings followed whichever plan it had made first.
//
// The workers serve one parallel_for at a time. A second caller meanwhile (another plan executed
// from another thread: distinct plans may execute concurrently) runs its tasks on its own thread
// rather than wait. The caller waits only for workers that joined a job, not for those still
// waking up when it is done. A worker that finished a job watches for the next one for a short
// while before it sleeps: frames executed back to back then start on every thread at once
// instead of after the scheduler's wake-up latency (on a 2-core VM up to ~0.1 ms, a small frame
// was then often done by the calling thread alone).
#pragma once

#include <cstdint>
#include <functional>

namespace flcc::host {

class ThreadPool {
public:
    // Makes sure the process has threads - 1 workers (starting those missing).
    explicit ThreadPool(int threads);

    int size() const { return threads_; }

    // Calls fn(task, thread) for every task in [0, tasks), thread in [0, size()); returns when
    // all have finished. fn must not throw.
    void parallel_for(int64_t tasks, const std::function<void(int64_t, int)>& fn) const;

private:
    int threads_;
};

}  // namespace flcc::host
