// Adversarial LCC data (DESIGN.md section 4) for the host and GPU adversarial tests:
// near-constant data, huge and tiny scales, denormals, signed zeros, huge offsets, mixed
// magnitudes, constant blocks with rare steps.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace adversarial {

enum class Kind { near_constant, huge, near_max, denormal, signed_zero, offset, mixed, blocks, count };

// n values of kind k; `row` is the length of a row (the blocks kind steps along and across rows).
std::vector<float> make(Kind k, int64_t n, int64_t row, std::mt19937& rng);

}  // namespace adversarial
