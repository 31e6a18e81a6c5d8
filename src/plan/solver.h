// The solver interface (FFTW's model): a Solver is a stateless, registered algorithm with a
// stable name; for a problem it says whether it applies, what it should cost, and it makes an
// Executor, the per-plan state (buffers, prepared template, FFT plans) that runs frames.
#pragma once

#include "flcc.h"
#include "plan/memory.h"
#include "plan/problem.h"

#include <memory>

namespace flcc {

class Executor {
public:
    virtual ~Executor() = default;

    // Prepares the template state (normalised zero-mean template for LCC, the flipped template
    // for convolution, spectra, ...). `templ` is a host array of problem.templ elements, already
    // checked finite (when the problem asks for it). Called only when the template changed.
    // For LCC, `constant` says the template has zero variance (every output is then 0).
    virtual flcc_result set_template(const float* templ, bool constant) = 0;

    // GPU executors that make their template state on the device: `templ` is the caller's
    // template in device memory; it is compared with the one last prepared and prepared only
    // when it changed, enqueued ahead of the next frames (no host round trip). A non-finite
    // template is then reported by the exec's status. Others keep the default, and the plan
    // layer copies device templates to the host for set_template.
    virtual bool prepares_device_templates() const { return false; }
    virtual flcc_result set_device_template(const float* templ) { return FLCC_INVALID_PLATFORM; }

    // Runs `count` frames stored back to back. `space` says where image and out both live; host
    // solvers are only ever given host memory (the plan layer stages device data for them).
    virtual flcc_result execute(const float* image, float* out, int64_t count,
                                MemorySpace space) = 0;

    // GPU executors: enqueue on a caller's CUDA stream (nullptr: their own), and wait for
    // enqueued work, returning the first error it found. Host executors have neither.
    virtual flcc_result set_stream(void* stream) { return FLCC_INVALID_PLATFORM; }
    virtual flcc_result synchronize() { return FLCC_SUCCESS; }

    // Bytes of memory this executor holds (for introspection and memory budgets).
    virtual int64_t memory_bytes() const = 0;
};

class Solver {
public:
    virtual ~Solver() = default;

    // The stable name (wisdom key, `method` option), e.g. "host.direct2.k16".
    virtual const char* name() const = 0;
    virtual flcc_platform platform() const = 0;
    virtual bool applicable(const Problem& p) const = 0;

    // True when a variant of this solver registered before it makes exactly the same
    // computation for p (a Fourier box larger than the problem needs: the smaller box leaves
    // the same axes untiled). The planner neither times nor lists such a candidate (its timing
    // would differ from the other's by noise alone); forced by name, it runs.
    virtual bool repeats_smaller_variant(const Problem&) const { return false; }

    // Cost model: predicted seconds per frame (ESTIMATE rigour, ordering of MEASURE).
    virtual double estimate_seconds(const Problem& p) const = 0;

    // Makes the executor; returns FLCC_ALLOC_FAILED (or another code) instead of throwing.
    virtual flcc_result create(const Problem& p, std::unique_ptr<Executor>& out) const = 0;
};

}  // namespace flcc
