// Wisdom files: read and written safely. Only regular files of at most kMaxFileBytes are read
// (opened without blocking, size checked first); a file is replaced atomically (a new file
// beside it, renamed over it) and only when it is absent, empty or FLCC wisdom (text that begins
// with kMagicWord): any other file is left untouched.
#pragma once

#include "flcc.h"

#include <cstddef>
#include <string>

namespace flcc::wisdom {

// Every version's text begins with this: a file that does not is not FLCC wisdom.
constexpr const char* kMagicWord = "flcc-wisdom ";

// The largest wisdom file read or written. Wisdom is far smaller (a decision is one line; FFTW's
// part grows by a few lines per transform size), so a larger file is not wisdom, and a bounded
// read keeps a wrong path (a disk image, /dev/zero) from costing time and memory.
constexpr size_t kMaxFileBytes = size_t(4) << 20;

// Reads a wisdom file: FLCC_SUCCESS, FLCC_IO_ERROR or FLCC_INVALID_WISDOM (too large), with the
// reason in `why`.
flcc_result read_file(const char* path, std::string& text, std::string& why);

// Writes wisdom text to `path` atomically: FLCC_SUCCESS or FLCC_IO_ERROR, with the reason in
// `why`.
flcc_result write_file(const char* path, const std::string& text, std::string& why);

}  // namespace flcc::wisdom
