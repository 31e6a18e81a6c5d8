// The problem descriptor: everything a solver needs to know about one plan's work, as an
// immutable value. Internally every problem is three-dimensional: a 2D image h x w is the
// volume 1 x h x w, so one code path serves both (axis 0 = planes, 1 = rows, 2 = columns,
// columns fastest).
#pragma once

#include "flcc.h"

#include <array>
#include <cstdint>
#include <string>

namespace flcc {

enum class Op { conv, lcorr };

using Extent = std::array<int64_t, 3>;  // planes, rows, columns

inline int64_t volume(const Extent& e) { return e[0] * e[1] * e[2]; }

struct Problem {
    Op op = Op::lcorr;
    int dim = 2;                // 2 or 3, as the user asked
    Extent image{};             // per frame
    Extent templ{};
    Extent out{};               // per frame, by region
    Extent pad{};               // out[i] places the template's first element at image i - pad
    flcc_region region = FLCC_FULL;
    flcc_type type = FLCC_SINGLE;
    int threads = 1;            // resolved (never 0)
    flcc_platform platform = FLCC_ANY;   // where it may run
    int device = -1;
    bool check_finite = true;
    bool device_resident = false;   // the planner times GPU solvers on device data

    int64_t image_elems() const { return volume(image); }
    int64_t templ_elems() const { return volume(templ); }
    int64_t out_elems() const { return volume(out); }
    bool is_3d() const { return dim == 3; }
    bool template_is_cube(int n) const;   // n x n (2D) or n x n x n (3D)

    // A stable text form, e.g. "lcorr 2d 2000x2000 t16x16 full single th2 any": the wisdom key
    // (the problem, where it may run, and " resident" when its data lives on the device).
    std::string key() const;
};

// Validates the user's arguments and builds the problem. Returns FLCC_SUCCESS or the code for
// the first invalid argument, with its detail set (flcc_last_error_detail); allocates nothing
// but the returned value. `op` is the caller's flcc_op read as an integer, and the options'
// enums are read as integers too, so any int a C caller passed is checked without undefined
// behaviour (see enum_value). `prefix` names where the options came from in the
// detail ("options." for an flcc_options, "" for a planner's own arguments).
flcc_result make_problem(Problem& out, int op, int dim, flcc_size image, flcc_size templ,
                         const flcc_options& opts, const char* prefix);

// The number of hardware threads (at least 1).
int hardware_threads();

}  // namespace flcc
