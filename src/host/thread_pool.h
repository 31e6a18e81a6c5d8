// The host solvers' threads. One set of worker threads serves the whole process (started as plans
// ask for them, never by execute), and every executor holds a ThreadPool: its thread count and
// the door to those workers. parallel_for hands out task indices through an atomic counter, and
// the calling thread works too, so a plan of n threads uses n - 1 workers.
//
// Why one set for all plans: with a set per plan, the idle workers of one plan keep the cores
// busy (or the scheduler places them on the caller's core) while another plan runs, so which
// plan of a program runs at full speed depends on the order its threads were made (of two plans
// of one problem made in turn, one runs at two-thread speed and the other at one-thread speed),
// and the planner's timings follow whichever plan it made first.
//
// The workers serve one parallel_for at a time. A second caller meanwhile (another plan executed
// from another thread: distinct plans may execute concurrently) runs its tasks on its own thread
// rather than wait. The caller waits only for workers that joined a job, not for those still
// waking up when it is done. A worker that finished a job watches for the next one for a short
// while before it sleeps: frames executed back to back then start on every thread at once
// instead of after the scheduler's wake-up latency, which can exceed a small frame's work.
//
// Nothing here allocates once the workers run: a job is a non-owning reference to the caller's
// callable (TaskRef), so executing a plan never fails for want of memory in the pool.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

namespace flcc::host {

// A reference to a callable fn(int64_t task, int thread), valid while the callable lives.
class TaskRef {
public:
    template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, TaskRef>>>
    TaskRef(F&& f)   // NOLINT: implicit, so that callers pass lambdas
        : object_(const_cast<void*>(static_cast<const void*>(&f))),
          call_([](void* o, int64_t task, int thread) {
              (*static_cast<std::remove_reference_t<F>*>(o))(task, thread);
          })
    {
    }
    void operator()(int64_t task, int thread) const { call_(object_, task, thread); }

private:
    void* object_;
    void (*call_)(void*, int64_t, int);
};

class ThreadPool {
public:
    // Makes sure the process has threads - 1 workers (starting those missing). Throws
    // std::bad_alloc, with the error detail set, when a worker cannot be started (the system
    // refuses a thread for want of memory or of thread slots); workers started before it stay.
    explicit ThreadPool(int threads);

    int size() const { return threads_; }

    // Calls fn(task, thread) for every task in [0, tasks), thread in [0, size()); returns when
    // all have finished. When fn throws, the tasks not yet started are skipped and the first
    // exception is rethrown here once every thread has left the loop.
    void parallel_for(int64_t tasks, TaskRef fn) const;

private:
    int threads_;
};

}  // namespace flcc::host
