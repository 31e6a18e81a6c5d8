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
// another configuration. Failures set the error detail.
flcc_result import_text(const std::string& text);

void forget();

}  // namespace flcc::wisdom
