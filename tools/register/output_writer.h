// The result table: one row per subregion per registered frame, as CSV or JSON lines, written to
// standard output or a file in whole batches (one write call per batch, so an interrupted run
// leaves only whole rows of whole frames).
//
// CSV columns (the header is exactly this): frame,roi,y,x,dy,dx,peak,quality
//   frame    the moved frame's number in the expanded FRAME list, from 0
//   roi      the subregion's number (grid row-major, or the origins file's order)
//   y, x     the subregion's centre in the frame, pixels
//   dy, dx   the displacement of the frame's content relative to the reference there (positive:
//            moved down / right), pixels; nan when it was not measured (a skipped frame, a
//            peak on the edge of the correlation map, where no sub-pixel fit exists, or a
//            flat map)
//   peak     the correlation value at the peak; nan for a skipped frame
//   quality  peak over the second peak (inf: no positive second peak; 0: flat map); nan for a
//            skipped frame
// JSON lines carry the same fields (null for nan and inf) plus psr, the moved frame's file and
// page, and for a skipped frame "skipped": true and the reason.
#pragma once

#include "cli_options.h"

#include <string>

namespace registration {

struct ResultRow {
    long frame = 0;
    int roi = 0;
    double y = 0, x = 0;
    double dy = 0, dx = 0;
    double peak = 0, quality = 0, psr = 0;
    const std::string* file = nullptr;   // the moved frame's file (JSON lines)
    int page = 0;                        // its page, from 0 (JSON lines)
    const std::string* skipped_reason = nullptr;   // non-null: the frame was skipped
};

class ResultFormatter {
public:
    explicit ResultFormatter(OutputFormat format) : format_(format) {}
    // The text before the first row (CSV: the header line).
    std::string header() const;
    void append_row(std::string& text, const ResultRow& row) const;

private:
    OutputFormat format_;
};

// Where the table goes: a file (created or truncated) or standard output.
class OutputSink {
public:
    // path empty or "-": standard output. Throws InputError naming the file when it cannot be
    // opened for writing.
    explicit OutputSink(const std::string& path);
    ~OutputSink();
    OutputSink(const OutputSink&) = delete;
    OutputSink& operator=(const OutputSink&) = delete;

    // Writes all of `text`; throws InputError naming the output on failure (disk full, closed pipe).
    void write(const std::string& text);
    const std::string& name() const { return name_; }

private:
    int fd_ = 1;
    bool owned_ = false;
    std::string name_;
};

}  // namespace registration
