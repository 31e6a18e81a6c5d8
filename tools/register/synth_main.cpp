// flcc-register-synth: synthetic registration sets with known offsets, and the comparison of
// flcc-register's output with them (examples/register/run_example.sh uses both).
//
//   flcc-register-synth make --kind ebsd --frames 20 --size 256 --out DIR
//   flcc-register-synth compare DIR/truth.csv offsets.csv [--max-rms 0.03]
#include "input_error.h"
#include "synthetic.h"
#include "truth_compare.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <map>

int main(int argc, char** argv)
{
    CLI::App app{"flcc-register-synth: synthetic EBSD-like and PIV-like TIFF sets with known sub-pixel offsets"};
    app.require_subcommand(1);

    registration::SyntheticSpec spec;
    int size = 0;
    // flcc-register's grid defaults, so that a set and a run agree unless told otherwise.
    spec.roi_size = 128;
    spec.roi_step = 0;
    spec.roi_margin = 0;
    CLI::App* make = app.add_subcommand("make", "Write a synthetic set (frames, reference, truth)");
    const std::map<std::string, registration::SyntheticKind> kinds{{"ebsd", registration::SyntheticKind::ebsd},
                                                                   {"piv", registration::SyntheticKind::piv}};
    make->add_option("--kind", spec.kind, "ebsd (a reference and displaced frames) or piv (pairs of particle images)")
        ->transform(CLI::CheckedTransformer(kinds, CLI::ignore_case))->default_str("ebsd");
    make->add_option("--out", spec.folder, "Folder to write (created)")->required();
    make->add_option("--frames", spec.frames, "Frames (piv: an even number)")->check(CLI::Range(1, 1000000))->capture_default_str();
    make->add_option("--size", size, "Square frame side (sets --height and --width)")->check(CLI::Range(8, 1 << 15));
    make->add_option("--height", spec.height, "Frame height")->check(CLI::Range(8, 1 << 15))->capture_default_str();
    make->add_option("--width", spec.width, "Frame width")->check(CLI::Range(8, 1 << 15))->capture_default_str();
    make->add_option("--bits", spec.bits, "8 or 16")->check(CLI::IsMember({8, 16}))->capture_default_str();
    make->add_option("--roi-size", spec.roi_size, "Subregion side")->check(CLI::Range(4, 1 << 15))->capture_default_str();
    make->add_option("--roi-step", spec.roi_step, "Subregion step, >= --roi-size (default: --roi-size)")->check(CLI::Range(4, 1 << 15));
    make->add_option("--roi-margin", spec.roi_margin, "Frame border without subregions")->check(CLI::Range(0, 1 << 15))->capture_default_str();
    make->add_option("--max-displacement", spec.max_displacement, "Largest displacement component, pixels")
        ->check(CLI::Range(0.0, 1000.0))->capture_default_str();
    make->add_option("--feature-size", spec.feature_size,
                     "ebsd: correlation length of the pattern; piv: particle diameter (pixels)")
        ->check(CLI::Range(0.5, 1000.0))->capture_default_str();
    make->add_option("--photons", spec.photons, "Mean photon count per pixel (Poisson noise); 0: no noise")
        ->check(CLI::Range(0.0, 1e7))->capture_default_str();
    make->add_option("--seed", spec.seed, "Random seed")->capture_default_str();
    make->add_flag("--stack", spec.stack, "Write the frames as one multi-page TIFF (frames.tif)");
    make->add_option("--threads", spec.threads, "ebsd: frames drawn at once (0: the hardware's threads)")
        ->check(CLI::Range(0, 4096))->capture_default_str();

    std::string truth_path, result_path;
    double max_rms = -1;
    CLI::App* compare = app.add_subcommand("compare", "Compare flcc-register's CSV output with a truth file");
    compare->add_option("TRUTH", truth_path, "truth.csv or truth_sequence.csv")->required();
    compare->add_option("RESULT", result_path, "flcc-register's CSV output")->required();
    compare->add_option("--max-rms", max_rms, "Exit with status 1 when the RMS error exceeds this (pixels)");

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e);
    }
    try {
        if (make->parsed()) {
            if (size > 0) spec.height = spec.width = size;
            if (spec.roi_step == 0) spec.roi_step = spec.roi_size;
            registration::write_synthetic_set(spec);
            return 0;
        }
        const auto truth = registration::read_truth_csv(truth_path);
        const auto result = registration::read_result_csv(result_path);
        const registration::OffsetComparison c = registration::compare_offsets(truth, result);
        std::printf("compared %ld offsets (%ld not measured, %ld missing, %ld at other positions): RMS error %.4f px (dy %.4f, dx %.4f), "
                    "mean error dy %+.4f dx %+.4f, max %.4f px\n",
                    c.compared, c.not_measured, c.missing, c.misplaced, c.rms, c.rms_dy, c.rms_dx, c.mean_dy, c.mean_dx, c.max_error);
        if (c.compared == 0 || c.missing > 0 || c.misplaced > 0) {
            std::fprintf(stderr, "flcc-register-synth: %s lacks offsets of the truth, or has them at other "
                         "subregions (use the set's --roi-size, --roi-step and --roi-margin)\n", result_path.c_str());
            return 1;
        }
        if (max_rms >= 0 && c.rms > max_rms) {
            std::fprintf(stderr, "flcc-register-synth: RMS error %.4f px exceeds %.4f px\n", c.rms, max_rms);
            return 1;
        }
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "flcc-register-synth: error: %s\n", e.what());
        return 1;
    }
}
