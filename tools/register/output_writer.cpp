#include "output_writer.h"

#include "input_error.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace registration {

namespace {

void append_number(std::string& text, double value, const char* format, bool json)
{
    if (!std::isfinite(value)) {
        text += json ? "null" : std::isnan(value) ? "nan" : value > 0 ? "inf" : "-inf";
        return;
    }
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, format, value);
    text += buffer;
}

void append_json_string(std::string& text, const std::string& value)
{
    text += '"';
    for (const char c : value) {
        switch (c) {
        case '"': text += "\\\""; break;
        case '\\': text += "\\\\"; break;
        case '\n': text += "\\n"; break;
        case '\r': text += "\\r"; break;
        case '\t': text += "\\t"; break;
        default:
            if (static_cast<unsigned char>(c) < 0x20) {
                char escaped[8];
                std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
                text += escaped;
            } else {
                text += c;
            }
        }
    }
    text += '"';
}

}  // namespace

std::string ResultFormatter::header() const
{
    return format_ == OutputFormat::csv ? "frame,roi,y,x,dy,dx,peak,quality\n" : "";
}

void ResultFormatter::append_row(std::string& text, const ResultRow& row) const
{
    const bool json = format_ == OutputFormat::jsonl;
    auto field = [&](const char* name) {
        if (json) {
            text += '"';
            text += name;
            text += "\":";
        }
    };
    if (json) text += '{';
    field("frame");
    text += std::to_string(row.frame);
    text += ',';
    field("roi");
    text += std::to_string(row.roi);
    text += ',';
    field("y");
    append_number(text, row.y, "%.1f", json);
    text += ',';
    field("x");
    append_number(text, row.x, "%.1f", json);
    text += ',';
    field("dy");
    append_number(text, row.dy, "%.4f", json);
    text += ',';
    field("dx");
    append_number(text, row.dx, "%.4f", json);
    text += ',';
    field("peak");
    append_number(text, row.peak, "%.6f", json);
    text += ',';
    field("quality");
    append_number(text, row.quality, "%.4f", json);
    if (json) {
        text += ",\"psr\":";
        append_number(text, row.psr, "%.4f", true);
        if (row.file) {
            text += ",\"file\":";
            append_json_string(text, *row.file);
            text += ",\"page\":" + std::to_string(row.page);
        }
        if (row.skipped_reason) {
            text += ",\"skipped\":true,\"reason\":";
            append_json_string(text, *row.skipped_reason);
        }
        text += '}';
    }
    text += '\n';
}

OutputSink::OutputSink(const std::string& path)
{
    if (path.empty() || path == "-") {
        name_ = "standard output";
        return;
    }
    name_ = path;
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd_ < 0) throw InputError(path + ": cannot open for writing: " + std::strerror(errno));
    owned_ = true;
}

OutputSink::~OutputSink()
{
    if (owned_) ::close(fd_);
}

void OutputSink::write(const std::string& text)
{
    size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            throw InputError(name_ + ": cannot write: " + std::strerror(errno));
        }
        done += size_t(n);
    }
}

}  // namespace registration
