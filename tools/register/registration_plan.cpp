#include "registration_plan.h"

#include <cmath>
#include <limits>

namespace registration {

std::string flcc_failure(const char* function, flcc_result result)
{
    std::string text = std::string(function) + " failed: " + flcc_result_string(result);
    const char* detail = flcc_last_error_detail();
    if (detail && *detail) text += std::string(": ") + detail;
    return text;
}

RegistrationPlan::RegistrationPlan(const Config& config, const FrameGeometry& frame,
                                   const std::vector<Subregion>& subregions, bool templates_per_frame, bool keep_maps)
    : frame_(frame), templates_per_frame_(templates_per_frame)
{
    create(config, subregions, keep_maps, config.method.empty() ? nullptr : config.method.c_str(), config.rigor);
}

RegistrationPlan::RegistrationPlan(const RegistrationPlan& main, const Config& config,
                                   const std::vector<Subregion>& subregions)
    : frame_(main.frame_), templates_per_frame_(main.templates_per_frame_)
{
    create(config, subregions, true, main.method(), FLCC_ESTIMATE);
}

void RegistrationPlan::create(const Config& config, const std::vector<Subregion>& subregions, bool keep_maps,
                              const char* forced_method, flcc_rigor rigor)
{
    roi_size_ = config.roi_size;
    template_size_ = config.effective_template_size();
    const bool search = template_size_ < roi_size_;
    template_offset_ = search ? (roi_size_ - template_size_) / 2 : 0;

    std::vector<int> image_origins, templ_origins;
    for (const Subregion& s : subregions) {
        image_origins.insert(image_origins.end(), {s.y, s.x});
        templ_origins.insert(templ_origins.end(), {s.y + template_offset_, s.x + template_offset_});
    }
    const flcc_dtype type = frame_.bits == 8 ? FLCC_UINT8 : FLCC_UINT16;
    const flcc_size frame_size{frame_.height, frame_.width, 1};

    flcc_batch batch;
    flcc_batch_init(&batch);
    batch.pairing = FLCC_PAIRWISE;
    batch.images = batch.templates = int(subregions.size());
    batch.image_type = batch.templ_type = type;
    batch.image_origins = image_origins.data();
    batch.image_frame = frame_size;
    batch.templ_origins = templ_origins.data();
    batch.templ_frame = frame_size;
    batch.zero_mean = config.zero_mean == ZeroMean::on || (config.zero_mean == ZeroMean::automatic && !search);
    batch.hann = config.hann;
    batch.bandpass_low = config.bandpass_low;
    batch.bandpass_high = config.bandpass_high;
    batch.peaks = 1;
    batch.exclusion = config.exclusion;
    batch.refine = config.refine;
    batch.fit_size = config.fit_size;
    batch.upsample = config.upsample;
    batch.keep_maps = keep_maps;
    batch.templ_per_frame = templates_per_frame_;

    flcc_options options;
    flcc_options_init(&options);
    options.type = FLCC_STREAM;
    options.platform = config.platform;
    options.region = search ? FLCC_VALID : FLCC_FULL;
    options.rigor = rigor;
    options.threads = config.threads;
    options.method = forced_method;

    const flcc_result r = flcc_batch_plan_create(&plan_, config.op, 2, flcc_size{roi_size_, roi_size_, 1},
                                                 flcc_size{template_size_, template_size_, 1}, &batch, &options);
    if (r != FLCC_SUCCESS) throw PlanError(flcc_failure("flcc_batch_plan_create", r));
    flcc_result q = flcc_batch_pairs(plan_, &pairs_);
    if (q == FLCC_SUCCESS) q = flcc_plan_output_size(plan_, &map_);
    if (q != FLCC_SUCCESS) throw PlanError(flcc_failure("flcc_batch_pairs", q));
}

RegistrationPlan::~RegistrationPlan() { flcc_destroy(plan_); }

const char* RegistrationPlan::method() const
{
    const char* name = flcc_plan_method(plan_);
    return name ? name : "?";
}

void RegistrationPlan::exec(const void* images, const void* templates, float* maps, flcc_peak* peaks, int frames)
{
    // One reference for every frame: FLCC prepares its templates once and reuses them when
    // given NULL, which also spares it comparing the reference frame at every call.
    const void* templs = templates_per_frame_ || !templates_given_ ? templates : nullptr;
    const flcc_result r = flcc_batch_exec(plan_, images, templs, maps, peaks, frames);
    if (r != FLCC_SUCCESS) throw PlanError(flcc_failure("flcc_batch_exec", r));
    templates_given_ = true;
}

Displacement RegistrationPlan::displacement(const flcc_peak& peak) const
{
    constexpr double not_measured = std::numeric_limits<double>::quiet_NaN();
    const bool on_edge = peak.h <= 0 || peak.w <= 0 || peak.h >= map_.h - 1 || peak.w >= map_.w - 1;
    const bool flat = peak.quality == 0;   // FLCC's mark of a map without a peak
    if (std::isnan(peak.value) || on_edge || flat) return {not_measured, not_measured};
    return {double(peak.dy) - template_offset_, double(peak.dx) - template_offset_};
}

}  // namespace registration
