// The registration pipeline: reader threads decode frames into page-locked batch buffers, the
// calling thread runs one batch execution per frames-per-batch frames on a STREAM batch plan,
// and a writer thread turns the peaks into rows and writes them, one write per batch.
//
// Buffers: a ring of batch slots (one being filled, one correlated, one written, at least).
// Readers take jobs in order and fill the slot of the job's batch once that slot is free; the
// correlation takes batches in order once all their frames are decoded; the writer releases a
// slot after writing it, for the batch `slots` later.
//
// With decode_only, batches are read and released without correlation or rows: the rate of the
// input alone, through the same threads and buffers.
//
// Failures: a frame that cannot be read stops the run after the rows of the frames before it
// (the batch's earlier frames are still correlated and written; no row of the failed frame is
// written), unless keep_going: then its rows record it as skipped and the run goes on. A failed
// correlation or write stops the run at once. SIGINT and SIGTERM stop it after the batches in
// flight are written.
#pragma once

#include "cli_options.h"
#include "frame_source.h"
#include "output_writer.h"
#include "progress.h"
#include "registration_plan.h"

#include <string>
#include <vector>

namespace registration {

// One registered frame: the moved frame against its reference.
struct Job {
    long output_frame = 0;   // the `frame` column
    int moving = 0;          // index into the frames
    int reference = -1;      // index into the frames; -1: the run's one reference frame
};

// The jobs of a mode: ebsd, every frame against the reference; pairs, frame 2k+1 against 2k;
// sequence, frame k against k-1 (k >= 1). The output frame is the moved frame's index.
std::vector<Job> make_jobs(Mode mode, int frame_count);

struct PipelineInputs {
    const Config* config = nullptr;
    const std::vector<FrameRef>* frames = nullptr;
    const std::vector<Job>* jobs = nullptr;
    const std::vector<Subregion>* subregions = nullptr;
    const void* reference_pixels = nullptr;   // ebsd: the decoded reference frame
};

struct PipelineOutcome {
    long frames_written = 0;   // frames whose rows were written (skipped ones included)
    long frames_skipped = 0;
    std::string error;         // non-empty: the run stopped on this error
    int signal = 0;            // non-zero: the run stopped on this signal
    StageTimes times;
};

// Installs the SIGINT/SIGTERM handlers that ask a running pipeline to stop (a second signal
// ends the process at once), and ignores SIGPIPE (a closed output is a write error).
void install_signal_handlers();

PipelineOutcome run_pipeline(const PipelineInputs& inputs, RegistrationPlan& plan, RegistrationPlan* maps_plan,
                             OutputSink& sink, Progress& progress);

}  // namespace registration
