// Wisdom: the planner's decisions, kept so that a later plan (in this process or another) for
// the same problem picks the same solver without timing anything (FFTW's model: decisions, not
// plans). The store is process-wide and thread-safe.
//
// Text form (what export writes and import reads):
//   flcc-wisdom 1
//   signature <16 hex digits>
//   <problem key> => <solver name>
//   ...
//   fftw-wisdom          (builds with FFTW: FFTW's own wisdom, so that a plan found here
//   <FFTW's text>         also makes its FFTW plans without timing them)
//   end fftw-wisdom
// The signature hashes the library version, the names of every solver of this build, the host
// instruction set in use and the GPU (name and compute capability) when one is usable: wisdom
// from another configuration is rejected whole. If the environment variable FLCC_WISDOM_FILE
// names a file, every plan first imports it (once per process) and writes it back after it
// records a new decision.
//
// Files: only regular files of at most a few MiB are read (opened without blocking, size
// checked first); a file is replaced atomically (a new file beside it, renamed over it) and
// only when it is absent, empty or FLCC wisdom: any other file is left untouched.
#pragma once

#include "flcc.h"

#include <string>

namespace flcc::wisdom {

// The solver recorded for `key`, or "" when none.
std::string lookup(const std::string& key);

// Records a decision (and updates FLCC_WISDOM_FILE when set).
void record(const std::string& key, const std::string& solver);

// The whole store as text.
std::string export_text();

// Merges text into the store; FLCC_INVALID_WISDOM (store unchanged) when it is corrupt or from
// another configuration. Failures set the error detail (as do the file functions).
flcc_result import_text(const std::string& text);

// import_text of a file's text: FLCC_IO_ERROR when it cannot be read or is not a regular file,
// FLCC_INVALID_WISDOM when it is too large to be wisdom.
flcc_result import_file(const char* path);

// Writes export_text() to a file: FLCC_IO_ERROR when it cannot be written or the file there is
// not wisdom.
flcc_result export_file(const char* path);

void forget();

}  // namespace flcc::wisdom
