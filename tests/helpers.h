// Shared helpers of the test programs: running a plan end to end, and enumerating solvers.
#pragma once

#include "flcc.h"
#include "reference.h"

#include <string>
#include <vector>

namespace th {

struct Run {
    flcc_result result = FLCC_EXEC_FAILED;
    std::vector<float> out;
    std::string method;
};

struct RunOptions {
    const char* method = nullptr;
    int count = 1;
    flcc_type type = FLCC_SINGLE;
    flcc_platform platform = FLCC_HOST;
    flcc_rigor rigor = FLCC_ESTIMATE;
    int threads = 0;
};

// Plans, executes once on `count` frames (image holds count frames), destroys.
Run run(flcc_op op, const ref::Shape& s, const std::vector<float>& image,
        const std::vector<float>& templ, const RunOptions& o = {});

// Names of the compiled solvers whose name starts with `prefix` ("host.", "device.") and with
// $FLCC_TEST_SOLVERS when set (a sanitizer's subset; unset in the test suite).
std::vector<std::string> solvers(const std::string& prefix);

// Dimension (2 or 3) a solver is for, and its specialised cube size (0 = any shape).
int solver_dim(const std::string& name);
int solver_cube(const std::string& name);

// Problem shapes a solver accepts (image, template pairs) for broad coverage.
std::vector<ref::Shape> shapes_for(const std::string& name);

// The reference for op.
std::vector<double> reference(flcc_op op, const ref::Shape& s, const float* image, const float* templ);

// Error of out against ref in the units of DESIGN.md (LCC: absolute; convolution: relative to
// max(|ref|_inf, 1)).
double error(flcc_op op, const std::vector<double>& ref, const float* out);

std::string describe(const ref::Shape& s);

// Where out differs most from ref: "at (plane, row, col): ref R, out O".
std::string worst(const ref::Shape& s, const std::vector<double>& ref, const float* out);

// True when a usable CUDA device is present (a device plan can be made).
bool have_device();

}  // namespace th
