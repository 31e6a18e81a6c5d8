#include "cli_options.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <map>

namespace registration {

namespace {

void add_run_options(CLI::App& mode, Config& c)
{
    const std::string layout = "Subregions";
    mode.add_option("--roi-size", c.roi_size, "Side of the square subregions, pixels")
        ->check(CLI::Range(2, 1 << 15))->group(layout)->capture_default_str();
    mode.add_option("--roi-step", c.roi_step, "Distance between grid subregions (default: --roi-size)")
        ->check(CLI::Range(1, 1 << 30))->group(layout);
    mode.add_option("--roi-margin", c.roi_margin, "Border of the frame left out of the grid, pixels")
        ->check(CLI::Range(0, 1 << 30))->group(layout)->capture_default_str();
    mode.add_option("--rois", c.rois_file,
                    "File of subregion origins, one \"y x\" (top-left pixel) per line, instead of the grid")
        ->group(layout);
    mode.add_option("--template-size", c.template_size,
                    "Side of the template cut from the centre of each reference subregion (default: "
                    "--roi-size). Smaller: searched for inside the frame's subregion (VALID region); "
                    "equal: the whole subregions are correlated (FULL region)")
        ->check(CLI::Range(1, 1 << 15))->group(layout);

    const std::string correlation = "Correlation";
    const std::map<std::string, flcc_op> ops{{"lcc", FLCC_LCORR}, {"xcorr", FLCC_XCORR}};
    mode.add_option("--op", c.op, "lcc (local correlation coefficients) or xcorr (cross-correlation)")
        ->transform(CLI::CheckedTransformer(ops, CLI::ignore_case))->group(correlation)->default_str("lcc");
    const std::map<std::string, ZeroMean> zero_means{
        {"auto", ZeroMean::automatic}, {"on", ZeroMean::on}, {"off", ZeroMean::off}};
    mode.add_option("--zero-mean", c.zero_mean,
                    "Subtract each subregion's and template's mean: auto (on when the template is the "
                    "whole subregion), on, off")
        ->transform(CLI::CheckedTransformer(zero_means, CLI::ignore_case))->group(correlation)->default_str("auto");
    mode.add_flag("--hann", c.hann, "Multiply subregions and templates by a Hann window")->group(correlation);
    mode.add_option("--bandpass-low", c.bandpass_low, "Gaussian smoothing sigma, pixels (0: none)")
        ->check(CLI::Range(0.0f, 1e6f))->group(correlation);
    mode.add_option("--bandpass-high", c.bandpass_high, "Sigma of the Gaussian background removed, pixels (0: none)")
        ->check(CLI::Range(0.0f, 1e6f))->group(correlation);

    const std::string peaks = "Peaks";
    const std::map<std::string, flcc_refine> refines{{"none", FLCC_REFINE_NONE},
                                                     {"parabolic", FLCC_REFINE_PARABOLIC},
                                                     {"gaussian", FLCC_REFINE_GAUSSIAN},
                                                     {"quadratic", FLCC_REFINE_QUADRATIC},
                                                     {"upsampled", FLCC_REFINE_UPSAMPLED}};
    mode.add_option("--refine", c.refine,
                    "Sub-pixel refinement: parabolic, gaussian (3 points per axis), quadratic (least "
                    "squares over --fit-size^2), upsampled (DFT interpolation), none")
        ->transform(CLI::CheckedTransformer(refines, CLI::ignore_case))->group(peaks)->default_str("quadratic");
    mode.add_option("--fit-size", c.fit_size, "Neighbourhood of the quadratic fit: 3, 5 or 7")
        ->check(CLI::IsMember({3, 5, 7}))->group(peaks)->capture_default_str();
    mode.add_option("--upsample", c.upsample, "Upsampling factor of --refine upsampled")
        ->check(CLI::Range(2, 1000))->group(peaks)->capture_default_str();
    mode.add_option("--exclusion", c.exclusion,
                    "Radius around the peak left out when the second peak is sought (quality), pixels")
        ->check(CLI::Range(0, 1 << 15))->group(peaks)->capture_default_str();

    const std::string run = "Run";
    const std::map<std::string, flcc_platform> platforms{
        {"host", FLCC_HOST}, {"device", FLCC_DEVICE}, {"any", FLCC_ANY}};
    mode.add_option("--platform", c.platform, "Where the correlations run: host, device or any")
        ->transform(CLI::CheckedTransformer(platforms, CLI::ignore_case))->group(run)->default_str("any");
    mode.add_option("--method", c.method, "Force the per-pair solver by name (see flcc-bench)")->group(run);
    const std::map<std::string, flcc_rigor> rigors{{"measure", FLCC_MEASURE}, {"estimate", FLCC_ESTIMATE}};
    mode.add_option("--rigor", c.rigor, "Planner: measure (time the candidates) or estimate (cost model)")
        ->transform(CLI::CheckedTransformer(rigors, CLI::ignore_case))->group(run)->default_str("measure");
    mode.add_option("--threads", c.threads, "Correlation threads (0: all hardware threads)")
        ->check(CLI::Range(0, FLCC_MAX_THREADS))->group(run)->capture_default_str();
    mode.add_option("--readers", c.readers, "Threads decoding TIFF files")
        ->check(CLI::Range(1, 64))->group(run)->capture_default_str();
    mode.add_option("--frames-per-batch", c.frames_per_batch, "Frames per batch execution")
        ->check(CLI::Range(1, 4096))->group(run)->capture_default_str();

    const std::string output = "Output";
    const std::map<std::string, OutputFormat> formats{{"csv", OutputFormat::csv}, {"jsonl", OutputFormat::jsonl}};
    mode.add_option("--format", c.format, "csv or jsonl (JSON lines)")
        ->transform(CLI::CheckedTransformer(formats, CLI::ignore_case))->group(output)->default_str("csv");
    mode.add_option("-o,--output", c.output, "Output file (default: standard output)")->group(output);
    mode.add_flag("--keep-going", c.keep_going,
                  "Skip frames that cannot be read, with a warning; their rows record them (NaN values)")
        ->group(output);
    mode.add_flag("-q,--quiet", c.quiet, "No progress or summary on standard error")->group(output);
    mode.add_flag("--progress", c.progress_forced,
                  "Progress lines on standard error even when it is not a terminal (default: only on a terminal)")
        ->group(output);
    mode.add_option("--maps", c.maps_dir,
                    "Folder for correlation maps (float32 TIFF, one page per subregion) of the --map-frames")
        ->group(output);
    mode.add_flag("--decode-only", c.decode_only,
                  "Only read and decode the frames, with the same reader threads and batches: no correlation, "
                  "no rows. Its rate is the input's bound for a full run")
        ->group(run);
    mode.add_option("--map-frames", c.map_frames, "Frames whose maps --maps writes (output frame numbers)")
        ->delimiter(',')->group(output)->default_str("0");
}

}  // namespace

int parse_command_line(int argc, char** argv, Config& config)
{
    CLI::App app{"flcc-register: sub-pixel offsets of subregions between TIFF frames (EBSD, PIV), "
                 "on FLCC's batched correlation"};
    app.require_subcommand(1);
    bool version = false;
    app.add_flag("--version", version, "Print the version and exit");

    CLI::App* reference = app.add_subcommand("ebsd", "Every frame against one reference frame");
    reference->alias("reference");
    reference->add_option("REFERENCE", config.reference, "The reference frame (a TIFF file of one page)")->required();
    reference->add_option("FRAME", config.frame_arguments, "Frames: TIFF files, multi-page TIFFs, @list files")
        ->required();
    add_run_options(*reference, config);

    CLI::App* pairs = app.add_subcommand("pairs", "Frame 2k+1 against frame 2k (PIV pairs)");
    pairs->add_option("FRAME", config.frame_arguments, "Frames, in pairs: TIFF files, multi-page TIFFs, @list files")
        ->required();
    add_run_options(*pairs, config);

    CLI::App* sequence = app.add_subcommand("sequence", "Each frame against the previous one");
    sequence->add_option("FRAME", config.frame_arguments, "Frames: TIFF files, multi-page TIFFs, @list files")
        ->required();
    add_run_options(*sequence, config);

    // --version needs no subcommand.
    for (int i = 1; i < argc; ++i) {
        if (std::string(argv[i]) == "--version") {
            std::printf("flcc-register %s (FLCC library %d)\n", FLCC_VERSION_STRING, flcc_version());
            return 0;
        }
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e);
    }
    config.mode = pairs->parsed() ? Mode::pairs : sequence->parsed() ? Mode::sequence : Mode::reference;
    if (config.effective_template_size() > config.roi_size) {
        std::fprintf(stderr, "flcc-register: error: --template-size %d is larger than --roi-size %d\n",
                     config.template_size, config.roi_size);
        return 2;
    }
    if (config.mode == Mode::reference && config.frame_arguments.empty()) {
        std::fprintf(stderr, "flcc-register: error: no FRAME given\n");
        return 2;
    }
    return -1;
}

}  // namespace registration
