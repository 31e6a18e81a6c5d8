// The solver contract (FFTW's model). A Solver is a stateless, registered algorithm with a stable
// name. For a problem, Solver::plan returns a Candidate, or nothing when the solver does not
// apply. The candidate keeps the layout the solver computed for that problem (tiles, transform
// sizes, kernel shape), answers the cost estimate from it and makes the Executor from it, so a
// layout is computed once per candidate. The Executor is the per-plan state (buffers, prepared
// template, FFT plans) that runs frames.
#pragma once

#include "flcc.h"
#include "plan/memory.h"
#include "plan/problem.h"

#include <memory>

namespace flcc {

// What only GPU executors do, reached through Executor::device(): the plan layer asks for it
// instead of every executor carrying device entry points.
class DeviceControl {
public:
    // Whether set_device_template is used: `templ` is the caller's template in device memory;
    // it is compared with the one last prepared and prepared only when it changed, enqueued
    // ahead of the next frames (no host round trip). A non-finite template is then reported by
    // the exec's status. When false, the plan layer copies device templates to the host for
    // Executor::set_template.
    virtual bool prepares_device_templates() const = 0;
    virtual flcc_result set_device_template(const float* templ) = 0;

    // Orders this exec's device work after the work the caller queued on the legacy default
    // stream (a cudaMemcpy from pageable memory returns before its DMA ends there), when the
    // executor runs on its own stream, which does not wait for the legacy stream by itself. On a
    // bound caller's stream, the ordering is the caller's. Called before an exec whose arrays
    // include device memory.
    virtual flcc_result follow_legacy_stream() = 0;

    // Enqueue on a caller's CUDA stream (nullptr: the executor's own).
    virtual flcc_result set_stream(void* stream) = 0;
    // Waits for enqueued work, returning the first error it found.
    virtual flcc_result synchronize() = 0;

protected:
    ~DeviceControl() = default;
};

class Executor {
public:
    virtual ~Executor() = default;

    // Prepares the template state (normalised zero-mean template for LCC, the flipped template
    // for convolution, spectra, ...). `templ` is a host array of problem.templ elements, already
    // checked finite (when the problem asks for it). Called only when the template changed.
    // For LCC, `constant` says the template has zero variance (every output is then 0).
    virtual flcc_result set_template(const float* templ, bool constant) = 0;

    // Runs `count` frames stored back to back. `space` says where image and out both live; host
    // solvers are only ever given host memory (the plan layer stages device data for them).
    virtual flcc_result execute(const float* image, float* out, int64_t count,
                                MemorySpace space) = 0;

    // Bytes of memory this executor holds (for introspection and memory budgets).
    virtual int64_t memory_bytes() const = 0;

    // The device entry points of a GPU executor; nullptr for host executors.
    virtual DeviceControl* device() { return nullptr; }
};

// A solver's plan for one problem: the layout it computed, its estimate, its executor.
class Candidate {
public:
    virtual ~Candidate() = default;

    // Cost model: predicted seconds per frame (ESTIMATE rigour, ordering of MEASURE).
    virtual double estimate_seconds() const = 0;

    // True when a variant of this solver registered before it makes exactly the same
    // computation for the problem (a Fourier box larger than the problem needs: the smaller box
    // leaves the same axes untiled). The planner neither times nor lists such a candidate (its
    // timing would differ from the other's by noise alone); forced by name, it runs.
    virtual bool repeats_smaller_variant() const { return false; }

    // Makes the executor; returns FLCC_ALLOC_FAILED (or another code) instead of throwing.
    virtual flcc_result create(std::unique_ptr<Executor>& out) const = 0;
};

class Solver {
public:
    virtual ~Solver() = default;

    // The stable name (wisdom key, `method` option), e.g. "host.direct2.k16".
    virtual const char* name() const = 0;
    virtual flcc_platform platform() const = 0;

    // The candidate for p, or nullptr when this solver does not apply to p. Throws
    // std::bad_alloc when the candidate cannot be allocated (the entry point returns
    // FLCC_ALLOC_FAILED).
    virtual std::unique_ptr<Candidate> plan(const Problem& p) const = 0;
};

}  // namespace flcc
