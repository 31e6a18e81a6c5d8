// Template preparation shared by every solver family.
#pragma once

#include <cstdint>

namespace flcc {

// True when every value equals the first (a zero-variance template: LCC is then all zero).
bool template_is_constant(const float* t, int64_t n);

// True when every value is finite.
bool all_finite(const float* t, int64_t n);

// out = (t - mean(t)) / ||t - mean(t)||, computed in double and rounded once; all zeros when
// the template is constant. LCC numerators correlate with this, so r = N / sqrt(D).
void normalised_template(const float* t, int64_t n, bool constant, float* out);

// The template reversed along every axis (for a row-major array: reversed as a whole), so that
// convolution is correlation with it.
void flipped_template(const float* t, int64_t n, float* out);

// The taps a solver correlates with: normalised_template for LCC, flipped_template for
// convolution.
void prepare_template(bool lcorr, const float* t, int64_t n, bool constant, float* out);

}  // namespace flcc
