#include "progress.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace registration {

namespace {

// Redraw intervals: often enough to look live on a terminal, rarely enough not to flood a log.
constexpr double in_place_interval_s = 0.2;
constexpr double lines_interval_s = 5.0;

double share(double busy, double elapsed) { return elapsed > 0 ? std::clamp(busy / elapsed, 0.0, 1.0) : 0.0; }

}  // namespace

Progress::Progress(ProgressStyle style, long total_frames) : style_(style), total_(total_frames)
{
    start_ = last_draw_ = Clock::now();
}

void Progress::start()
{
    std::lock_guard<std::mutex> lock(mutex_);
    start_ = last_draw_ = Clock::now();
}

std::string Progress::clock_text(double seconds)
{
    if (!std::isfinite(seconds) || seconds < 0) return "?";
    const long s = std::lround(seconds);
    char text[32];
    std::snprintf(text, sizeof text, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
    return text;
}

std::string Progress::busy_text(const StageTimes& t, double elapsed)
{
    char text[96];
    std::snprintf(text, sizeof text, "read %.0f%%, correlate %.0f%%, write %.0f%%",
                  100 * share(t.read_seconds / std::max(t.readers, 1), elapsed),
                  100 * share(t.correlate_seconds, elapsed), 100 * share(t.write_seconds, elapsed));
    return text;
}

std::string Progress::limiting_stage(const StageTimes& t, double elapsed)
{
    const double read = share(t.read_seconds / std::max(t.readers, 1), elapsed);
    const double correlate = share(t.correlate_seconds, elapsed);
    const double write = share(t.write_seconds, elapsed);
    if (correlate >= read && correlate >= write) return "correlation";
    return read >= write ? "reading" : "writing";
}

std::string Progress::status_line(long done, const StageTimes& times) const
{
    const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
    const double rate = elapsed > 0 ? done / elapsed : 0;
    const double left = rate > 0 ? (total_ - done) / rate : NAN;
    char text[256];
    std::snprintf(text, sizeof text, "flcc-register: %ld/%ld frames, %.1f frames/s, %s left (busy: %s)", done,
                  total_, rate, clock_text(left).c_str(), busy_text(times, elapsed).c_str());
    return text;
}

void Progress::clear_line_locked()
{
    if (line_shown_) std::fputs("\r\033[K", stderr);
    line_shown_ = false;
}

void Progress::update(long done, const StageTimes& times)
{
    if (style_ != ProgressStyle::lines && style_ != ProgressStyle::in_place) return;
    std::lock_guard<std::mutex> lock(mutex_);
    const auto now = Clock::now();
    const double since = std::chrono::duration<double>(now - last_draw_).count();
    const bool in_place = style_ == ProgressStyle::in_place;
    if (since < (in_place ? in_place_interval_s : lines_interval_s) && done < total_) return;
    last_draw_ = now;
    const std::string line = status_line(done, times);
    if (in_place) {
        std::fprintf(stderr, "\r%s\033[K", line.c_str());
        line_shown_ = true;
    } else {
        std::fprintf(stderr, "%s\n", line.c_str());
    }
    std::fflush(stderr);
}

void Progress::warn(const std::string& text)
{
    if (style_ == ProgressStyle::none) return;
    std::lock_guard<std::mutex> lock(mutex_);
    clear_line_locked();
    std::fprintf(stderr, "flcc-register: warning: %s\n", text.c_str());
    std::fflush(stderr);
}

void Progress::finish(long done, long skipped, const StageTimes& times)
{
    if (style_ == ProgressStyle::none) return;
    std::lock_guard<std::mutex> lock(mutex_);
    clear_line_locked();
    const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
    std::fprintf(stderr,
                 "flcc-register: %ld/%ld frames (%ld skipped) in %.2f s, %.1f frames/s; limited by %s (busy: %s)\n",
                 done, total_, skipped, elapsed, elapsed > 0 ? done / elapsed : 0.0,
                 limiting_stage(times, elapsed).c_str(), busy_text(times, elapsed).c_str());
    std::fflush(stderr);
}

}  // namespace registration
