// flcc-register: sub-pixel offsets of subregions between TIFF frames (EBSD pattern registration,
// PIV), on FLCC's batched correlation and peaks. docs/register.md is its manual.
//
//   flcc-register ebsd REFERENCE FRAME... [options]   every frame against REFERENCE
//   flcc-register pairs FRAME... [options]            frame 2k+1 against frame 2k
//   flcc-register sequence FRAME... [options]         each frame against the previous one
//
// Exit status: 0 when every frame was registered (or skipped under --keep-going), 1 on bad input
// or a failure (one line on standard error naming the file), 2 on a usage error, 128 + the
// signal's number when stopped by SIGINT or SIGTERM.
#include "cli_options.h"
#include "frame_source.h"
#include "input_error.h"
#include "output_writer.h"
#include "pipeline.h"
#include "progress.h"
#include "registration_plan.h"
#include "roi_grid.h"
#include "tiff_io.h"

#include "flcc.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <new>

namespace registration {
namespace {

const char* mode_name(Mode mode)
{
    return mode == Mode::reference ? "ebsd" : mode == Mode::pairs ? "pairs" : "sequence";
}

std::vector<Subregion> layout_subregions(const Config& config, const PageInfo& frame, const std::string& frame_name)
{
    if (!config.rois_file.empty()) {
        std::vector<Subregion> subregions = read_subregion_file(config.rois_file);
        check_subregions_inside(subregions, config.roi_size, frame.height, frame.width, config.rois_file);
        return subregions;
    }
    std::vector<Subregion> subregions =
        grid_subregions(frame.height, frame.width, config.roi_size, config.effective_roi_step(), config.roi_margin);
    if (subregions.empty()) {
        throw InputError(frame_name + ": no " + std::to_string(config.roi_size) + "x" + std::to_string(config.roi_size) +
                         " subregion fits in the " + std::to_string(frame.height) + "x" + std::to_string(frame.width) +
                         " frame inside a margin of " + std::to_string(config.roi_margin));
    }
    return subregions;
}

void check_maps_folder(const std::string& folder)
{
    struct stat info {};
    if (::stat(folder.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
        throw InputError(folder + ": the --maps folder does not exist");
    }
    if (::access(folder.c_str(), W_OK) != 0) throw InputError(folder + ": the --maps folder is not writable");
}

int run(const Config& config)
{
    install_signal_handlers();
    const std::vector<std::string> paths = expand_frame_arguments(config.frame_arguments);
    // The output is opened before any work, so that an unwritable one fails at once.
    OutputSink sink(config.output);
    if (!config.maps_dir.empty()) check_maps_folder(config.maps_dir);

    // The reference geometry: the reference frame (ebsd) or the first readable frame.
    FrameRef reference;
    if (config.mode == Mode::reference) {
        const std::vector<PageInfo> pages = inspect_tiff(config.reference);
        if (pages.size() != 1) {
            throw InputError(config.reference + ": the reference has " + std::to_string(pages.size()) +
                             " pages; it must be one frame");
        }
        reference.path = config.reference;
        reference.page = pages[0];
    }
    std::vector<FrameRef> frames = inspect_frames(paths, config.keep_going);
    if (config.mode != Mode::reference) {
        for (const FrameRef& frame : frames) {
            if (frame.usable()) {
                reference = frame;
                break;
            }
        }
        if (reference.path.empty()) throw InputError("no readable frame among the " + std::to_string(frames.size()) + " given");
    }
    check_geometry(frames, reference.page, reference.name(), config.keep_going);

    if (config.mode == Mode::pairs && frames.size() % 2 != 0) {
        throw InputError("pairs: " + std::to_string(frames.size()) + " frames given; pairs need an even number");
    }
    if (config.mode == Mode::sequence && frames.size() < 2) {
        throw InputError("sequence: " + std::to_string(frames.size()) + " frame given; a sequence needs two or more");
    }
    const int template_size = config.effective_template_size();
    if (template_size < config.roi_size && config.roi_size - template_size < 2) {
        throw InputError("--template-size " + std::to_string(template_size) + " leaves no search range in --roi-size " +
                         std::to_string(config.roi_size) + ": use equal sizes or a template 2 or more pixels smaller");
    }
    const std::vector<Subregion> subregions = layout_subregions(config, reference.page, reference.name());
    const std::vector<Job> jobs = make_jobs(config.mode, int(frames.size()));

    const FrameGeometry geometry{reference.page.height, reference.page.width, reference.page.bits};
    const bool templates_per_frame = config.mode != Mode::reference;
    // --decode-only never executes the plan: it needs its geometry, not a timed solver.
    Config plan_config = config;
    if (config.decode_only) plan_config.rigor = FLCC_ESTIMATE;
    RegistrationPlan plan(plan_config, geometry, subregions, templates_per_frame, false);
    std::unique_ptr<RegistrationPlan> maps_plan;
    if (!config.maps_dir.empty()) maps_plan = std::make_unique<RegistrationPlan>(plan, config, subregions);

    std::unique_ptr<void, void (*)(void*)> reference_pixels(nullptr, flcc_free);
    if (config.mode == Mode::reference) {
        reference_pixels.reset(flcc_malloc(geometry.bytes()));
        if (!reference_pixels) throw InputError(config.reference + ": cannot allocate memory for the reference frame");
        TiffReader(config.reference).read_page(reference.page, reference_pixels.get());
    }

    ProgressStyle style = ProgressStyle::summary;
    if (config.quiet) {
        style = ProgressStyle::none;
    } else if (::isatty(STDERR_FILENO)) {
        style = ProgressStyle::in_place;
    } else if (config.progress_forced) {
        style = ProgressStyle::lines;
    }
    Progress progress(style, long(jobs.size()));
    if (style != ProgressStyle::none) {
        const flcc_size map = plan.map_size();
        std::fprintf(stderr,
                     "flcc-register: %s, %zu frames of %s, %zu subregions of %dx%d, template %dx%d, maps %dx%d, "
                     "solver %s, %d frames per batch\n",
                     mode_name(config.mode), jobs.size(), describe_geometry(reference.page).c_str(), subregions.size(),
                     config.roi_size, config.roi_size, template_size, template_size, map.h, map.w, plan.method(),
                     config.frames_per_batch);
    }

    if (!config.decode_only) sink.write(ResultFormatter(config.format).header());
    PipelineInputs inputs;
    inputs.config = &config;
    inputs.frames = &frames;
    inputs.jobs = &jobs;
    inputs.subregions = &subregions;
    inputs.reference_pixels = reference_pixels.get();
    const PipelineOutcome outcome = run_pipeline(inputs, plan, maps_plan.get(), sink, progress);
    progress.finish(outcome.frames_written, outcome.frames_skipped, outcome.times);
    if (!outcome.error.empty()) {
        std::fprintf(stderr, "flcc-register: error: %s\n", outcome.error.c_str());
        return 1;
    }
    if (outcome.signal != 0) {
        std::fprintf(stderr, "flcc-register: stopped by signal %d after %ld of %zu frames\n", outcome.signal,
                     outcome.frames_written, jobs.size());
        return 128 + outcome.signal;
    }
    return 0;
}

}  // namespace
}  // namespace registration

int main(int argc, char** argv)
{
    registration::Config config;
    const int status = registration::parse_command_line(argc, argv, config);
    if (status >= 0) return status;
    try {
        return registration::run(config);
    } catch (const registration::InputError& e) {
        std::fprintf(stderr, "flcc-register: error: %s\n", e.what());
    } catch (const registration::PlanError& e) {
        std::fprintf(stderr, "flcc-register: error: %s\n", e.what());
    } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "flcc-register: error: out of memory\n");
    } catch (const std::exception& e) {
        std::fprintf(stderr, "flcc-register: error: %s\n", e.what());
    }
    return 1;
}
