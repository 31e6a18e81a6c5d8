// The float64 reference the solvers are checked against: direct sums over the zero-padded
// image, exactly as DESIGN.md section 1 defines convolution and LCC (the per-panel Pearson
// coefficient with two-pass mean and variance in double; zero-variance panels give 0).
#pragma once

#include "flcc.h"

#include <cstdint>
#include <random>
#include <vector>

namespace ref {

struct Shape {
    int dim;            // 2 or 3
    flcc_size image, templ;
    flcc_region region;
};

// Extent of one output frame, as {planes, rows, cols} (planes = 1 in 2D).
std::vector<int64_t> out_extent(const Shape& s);
int64_t image_elems(const Shape& s);
int64_t templ_elems(const Shape& s);
int64_t out_elems(const Shape& s);

std::vector<double> conv(const Shape& s, const float* image, const float* templ);
std::vector<double> lcorr(const Shape& s, const float* image, const float* templ);
// scipy.signal.correlate: convolution with the template reversed along every axis.
std::vector<double> xcorr(const Shape& s, const float* image, const float* templ);
// Per output: true when the panel under the template has zero variance (padding included).
std::vector<bool> zero_variance(const Shape& s, const float* image);

// max |a - b|
double max_abs_diff(const std::vector<double>& a, const float* b);
double max_abs(const std::vector<double>& a);

// Data classes of DESIGN.md section 4.
// plateaus: two noisy levels 1e3 apart side by side, so that tiles centred on their mean hold
// windows whose own mean is far from it (kappa ~ 500): the recomputed-window path.
enum class Data { uniform, uint8, uint16, offset, ramp, panels, constant, plateaus };
const char* data_name(Data d);
std::vector<float> make_data(Data d, const Shape& s, bool image, std::mt19937& rng);

}  // namespace ref
