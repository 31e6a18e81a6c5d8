// The command line of flcc-register (CLI11): three modes, the subregion layout, the correlation,
// the peaks, the run and the output. docs/register.md describes every option.
#pragma once

#include "flcc.h"

#include <string>
#include <vector>

namespace registration {

// ebsd (alias reference): every frame against one reference frame; pairs: frame 2k+1 against
// frame 2k (PIV); sequence: each frame against the previous one.
enum class Mode { reference, pairs, sequence };

enum class OutputFormat { csv, jsonl };

// auto: zero-mean preprocessing when the template is the whole subregion (FULL region), where it
// makes the zero padding neutral; off when a smaller template is searched for (VALID region).
enum class ZeroMean { automatic, on, off };

struct Config {
    Mode mode = Mode::reference;
    std::string reference;                      // ebsd mode: the reference frame's file
    std::vector<std::string> frame_arguments;   // files, multi-page files, @lists

    // Subregions.
    int roi_size = 128;
    int roi_step = 0;          // 0: roi_size (adjacent subregions)
    int roi_margin = 0;
    std::string rois_file;     // non-empty: origins from this file instead of the grid
    int template_size = 0;     // 0: roi_size

    // Correlation and preprocessing.
    flcc_op op = FLCC_LCORR;
    ZeroMean zero_mean = ZeroMean::automatic;
    bool hann = false;
    float bandpass_low = 0, bandpass_high = 0;

    // Peaks.
    flcc_refine refine = FLCC_REFINE_QUADRATIC;
    int fit_size = 5;
    int upsample = 10;
    int exclusion = 5;

    // Run.
    flcc_platform platform = FLCC_ANY;
    std::string method;        // empty: the planner decides
    flcc_rigor rigor = FLCC_MEASURE;
    int threads = 0;           // correlation threads, 0: all hardware threads
    int readers = 1;           // decoding threads
    int frames_per_batch = 16;

    // Output.
    OutputFormat format = OutputFormat::csv;
    std::string output;        // empty or "-": standard output
    bool keep_going = false;
    bool quiet = false;
    bool progress_forced = false;   // --progress: progress lines even when stderr is not a terminal
    std::string maps_dir;      // non-empty: write the maps of map_frames there
    std::vector<int> map_frames{0};
    bool decode_only = false;  // read and decode the frames, nothing else (the input's rate)

    int effective_roi_step() const { return roi_step > 0 ? roi_step : roi_size; }
    int effective_template_size() const { return template_size > 0 ? template_size : roi_size; }
};

// Parses the command line into `config`. Returns -1 when the run should go on; otherwise the
// exit status (0 after --help or --version, nonzero after a usage error, which CLI11 printed).
int parse_command_line(int argc, char** argv, Config& config);

}  // namespace registration
