// The host runner of batch plans: every frame's images and templates are cut from the input,
// converted and preprocessed once, then the pairs run in parallel, one pair per task, each on a
// worker's own single-threaded executor of the plan's solver, and each map's peaks are found
// where the map was made (in the worker's cache) before the next pair.
#pragma once

#include "batch/runner.h"
#include "batch/spec.h"
#include "host/full_correlation.h"
#include "host/peaks.h"
#include "host/preprocess.h"
#include "host/thread_pool.h"
#include "host/tile_runner.h"
#include "plan/plan.h"
#include "plan/solver.h"

#include <memory>
#include <vector>

namespace flcc::batch {

class HostRunner final : public Runner {
public:
    // `first` is the executor the planner made for spec.pair; the other workers' executors are
    // made from `solver`. Throws std::bad_alloc.
    static flcc_result make(const Spec& spec, const Solver& solver, std::unique_ptr<Executor> first,
                            std::unique_ptr<HostRunner>& out);

    const Spec& spec() const override { return spec_; }
    bool templates_ready() const override { return templ_ready_; }
    bool takes_device_pointers() const override { return false; }
    const char* method() const override { return method_; }
    // Every pointer is host memory.
    flcc_result run(const void* images, const void* templs, float* maps, flcc_peak* peaks,
                    int frames) override;
    void forget_templates() override
    {
        templ_ready_ = false;
        templ_input_.clear();
    }

private:
    // An executor and the template it holds: a worker's, or one resident per template.
    struct Slot {
        std::unique_ptr<Executor> executor;
        int loaded = -1;                 // the template the executor holds (-1: none)
        uint64_t loaded_generation = 0;  // of the template set it came from
    };

    struct Worker {
        Slot slot;
        host::AlignedArray<float> map, best, reversed;
        std::unique_ptr<host::Preprocessor::Scratch> image_scratch, templ_scratch;
        // UPSAMPLED: transform buffers, the spectra of the image (LCC: centred) and of its
        // squares, the centred image and its squares, the grid values of the numerator (the map)
        // and of the window sums of values and squares
        std::unique_ptr<host::FullCorrelation::Scratch> full;
        host::AlignedArray<float> spectrum, squares_spectrum, centred, squared;
        std::vector<double> peak_scratch, grid[3];
    };

    explicit HostRunner(const Spec& spec);
    flcc_result prepare_templates(const void* set);
    flcc_result prepare_images(const void* frame);
    flcc_result correlate(Slot& slot, int image, int templ, float* map);
    Slot& slot_for(Worker& w, int templ) { return resident_.empty() ? w.slot : resident_[size_t(templ)]; }
    void find(Worker& w, const float* map, const float* index, int image, int templ,
              flcc_peak* out) const;
    void refine(Worker& w, int image, int templ, host::MapPeak& peak) const;
    flcc_result run_pairs(float* maps, flcc_peak* peaks);
    flcc_result run_best(float* maps, flcc_peak* peaks);

    Spec spec_;
    const char* method_ = "";   // the pair's solver
    host::ThreadPool pool_;
    std::vector<Worker> workers_;
    // When the memory allows and every template's pairs can run as one task (not best over
    // templates), one executor per template keeps its prepared state (normalised template,
    // spectra) across pairs and frames; otherwise each worker prepares the template of each pair.
    std::vector<Slot> resident_;
    std::unique_ptr<host::Preprocessor> image_pre_, templ_pre_;
    std::unique_ptr<host::FullCorrelation> refiner_;   // UPSAMPLED refinement
    host::AlignedArray<float> taps_;   // LCC with UPSAMPLED: the reversed zero-mean templates
    host::AlignedArray<float> ones_;   // LCC with UPSAMPLED: the window of the sums
    host::AlignedArray<float> taps_spectra_, ones_spectrum_;   // UPSAMPLED, per template
    host::AlignedArray<float> images_, templates_;   // this frame's images, the prepared templates
    std::vector<unsigned char> constant_;            // per template: zero variance (LCC)
    std::vector<unsigned char> templ_input_;         // the template set last prepared, as given
    bool templ_ready_ = false;
    uint64_t generation_ = 0;
};

}  // namespace flcc::batch
