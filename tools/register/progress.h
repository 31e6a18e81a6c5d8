// Progress and messages on standard error: frames done / total, frames per second, time left,
// and how busy each pipeline stage is (which one limits the run). On a terminal the line is
// redrawn in place; otherwise (or with --progress) plain lines at most every few seconds.
// Warnings go through here too, so that they never land in the middle of the progress line.
// Every function may be called from any thread.
#pragma once

#include <chrono>
#include <mutex>
#include <string>

namespace registration {

// Seconds each stage spent working, summed over its threads, and its thread count.
struct StageTimes {
    double read_seconds = 0;
    int readers = 1;
    double correlate_seconds = 0;
    double write_seconds = 0;
};

enum class ProgressStyle {
    none,       // --quiet: nothing but errors
    summary,    // warnings and the final summary only
    lines,      // plus a plain progress line every few seconds
    in_place,   // plus a line redrawn in place (a terminal)
};

class Progress {
public:
    Progress(ProgressStyle style, long total_frames);

    // Starts the clock of the rate and the time left.
    void start();
    // Frames finished (written or skipped) so far; redraws when due.
    void update(long frames_done, const StageTimes& times);
    // A warning line (shown unless the style is none).
    void warn(const std::string& text);
    // The closing line: frames, skipped, time, rate and the limiting stage.
    void finish(long frames_done, long frames_skipped, const StageTimes& times);

    // "read 41%, correlate 93%, write 2%": each stage's busy share of the elapsed time.
    static std::string busy_text(const StageTimes& times, double elapsed_seconds);
    // The stage with the highest busy share: "reading", "correlation" or "writing".
    static std::string limiting_stage(const StageTimes& times, double elapsed_seconds);
    // H:MM:SS.
    static std::string clock_text(double seconds);

private:
    using Clock = std::chrono::steady_clock;
    std::string status_line(long frames_done, const StageTimes& times) const;
    void clear_line_locked();

    ProgressStyle style_;
    long total_;
    Clock::time_point start_;
    Clock::time_point last_draw_;
    bool line_shown_ = false;
    std::mutex mutex_;
};

}  // namespace registration
