// The batch plan behind a run, and the reading of its peaks as displacements.
//
// Every frame is one batch frame: its subregions (roi_size^2, cut at the subregion origins) are
// the images, and the matching templates (template_size^2, cut from the reference frame at the
// origins moved by the template's offset (roi_size - template_size) / 2 into the subregion) are
// the templates, paired one to one (PAIRWISE). The frames are uint8 or uint16 as read; FLCC cuts
// and converts them.
// - template_size < roi_size: the template is searched for inside the subregion, VALID region;
//   the template's origin found at `offset` in the subregion means no displacement.
// - template_size = roi_size: the whole subregions are correlated, FULL region, with zero-mean
//   preprocessing by default (then the zero padding adds nothing to the correlation); the
//   template's origin at 0 means no displacement.
// A peak on the edge of the map is not a measurement (the true peak may lie outside the map, and
// no sub-pixel fit exists there), nor is the peak of a flat map (quality 0: a subregion or
// template of zero variance): their displacement is NaN.
#pragma once

#include "cli_options.h"
#include "roi_grid.h"

#include "flcc.h"

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace registration {

class PlanError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct FrameGeometry {
    int height = 0;
    int width = 0;
    int bits = 16;    // 8 or 16

    size_t bytes() const { return size_t(height) * size_t(width) * size_t(bits / 8); }
};

struct Displacement {
    double dy, dx;
};

class RegistrationPlan {
public:
    // templates_per_frame: every batch frame has its own reference frame (pairs, sequence);
    // otherwise one reference serves every frame (ebsd). keep_maps: the plan also returns the
    // correlation maps. Throws PlanError with FLCC's reason.
    RegistrationPlan(const Config& config, const FrameGeometry& frame, const std::vector<Subregion>& subregions,
                     bool templates_per_frame, bool keep_maps);
    // A plan for the maps of chosen frames, with the solver `main` chose (no new timing).
    RegistrationPlan(const RegistrationPlan& main, const Config& config, const std::vector<Subregion>& subregions);
    ~RegistrationPlan();
    RegistrationPlan(const RegistrationPlan&) = delete;
    RegistrationPlan& operator=(const RegistrationPlan&) = delete;

    // Runs `frames` frames (frame_bytes() apart in `images`). templates: the reference frames,
    // one per frame (templates_per_frame), or the one reference frame; with one reference it is
    // handed to FLCC on the first call only (FLCC keeps its prepared templates). maps may be NULL
    // unless keep_maps. Throws PlanError.
    void exec(const void* images, const void* templates, float* maps, flcc_peak* peaks, int frames);

    int pairs() const { return pairs_; }
    flcc_size map_size() const { return map_; }
    const char* method() const;
    size_t frame_bytes() const { return frame_.bytes(); }
    int template_offset() const { return template_offset_; }

    Displacement displacement(const flcc_peak& peak) const;

private:
    void create(const Config& config, const std::vector<Subregion>& subregions, bool keep_maps,
                const char* forced_method, flcc_rigor rigor);

    flcc_plan plan_ = nullptr;
    FrameGeometry frame_;
    int roi_size_ = 0, template_size_ = 0, template_offset_ = 0;
    bool templates_per_frame_ = false;
    bool templates_given_ = false;
    int pairs_ = 0;
    flcc_size map_{0, 0, 1};
};

// "flcc_batch_plan_create: <result>: <detail>".
std::string flcc_failure(const char* function, flcc_result result);

}  // namespace registration
