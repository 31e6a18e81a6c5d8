// The plan object behind the opaque flcc_plan handle, and the set of live handles that lets
// every entry point reject a destroyed or foreign handle instead of touching freed memory.
#pragma once

#include "flcc.h"
#include "plan/problem.h"
#include "plan/solver.h"

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace flcc {

// The per-frame work of a batch plan (flcc_batch_plan_create), made and run by the batch layer
// (src/batch), which runs the plan's solver pair by pair. A plan holds one only when it is a
// batch plan; the plan layer only tells batch plans from the others by it.
class BatchRunner {
public:
    virtual ~BatchRunner() = default;
    // The name of what computes the pairs (flcc_plan_method): the pair's solver, or the engine.
    virtual const char* method() const = 0;
};

}  // namespace flcc

struct flcc_plan_s {
    struct Candidate {
        std::string name;
        double seconds;   // measured or estimated per frame; negative = skipped
    };

    flcc_op op = FLCC_LCORR;   // the caller's operation (XCORR runs as convolution, reversed)
    flcc::Problem problem;
    const flcc::Solver* solver = nullptr;
    std::unique_ptr<flcc::Executor> executor;
    std::vector<Candidate> candidates;

    // The template the executor was last prepared with (compared by value at every exec).
    std::vector<float> template_copy;
    bool template_ready = false;

    std::unique_ptr<flcc::BatchRunner> batch;   // set for batch plans only

    std::mutex exec_mutex;   // one exec at a time per plan
};

namespace flcc {

// Live plans are held by shared pointers: an exec in flight keeps its plan alive even when
// another thread destroys the handle meanwhile.
void plan_register(std::shared_ptr<flcc_plan_s> plan);
// The live plan behind a handle, or null for NULL, destroyed or foreign handles.
std::shared_ptr<flcc_plan_s> plan_acquire(const flcc_plan_s* handle);
// Removes a handle from the live set; false when it was not live.
bool plan_release(const flcc_plan_s* handle);
// FLCC_INVALID_PLAN, with the handle in the detail.
flcc_result invalid_plan(const flcc_plan_s* handle);

}  // namespace flcc
