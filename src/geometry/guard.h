// Guard factors: a bound F on the rounding error of a kernel's window sums, in units of
// u * (largest term) (u * m for sums of x, u * m^2 for sums of x^2, m the largest centred
// magnitude), from the operation counts along the paths its running sums take: each path adds
// (operations along it) x (largest partial sum), and the total is doubled for safety. The LCC
// finalisations take a window's variance for zero when it is below what F allows (the guard);
// each family's summation order has its own count, so each has its own function here.
// Host-side arithmetic, shared by the host and device code.
#pragma once

#include <cstdint>

namespace flcc::geometry {

// The host tile pipeline (host/tile_runner.cpp): running plane sums over t0 planes and up to
// `planes` steps (3D), running column sums over t1 rows and up to `rows` steps, a prefix scan
// of `len` columns and the final difference over t2.
inline double tile_pipeline_guard(double t0, double t1, double t2, double planes, double rows, double len)
{
    const double ez = t0 > 1 ? t0 * t0 + 2 * planes * (t0 + 1) : 0;
    const double ev = (t1 + 2 * rows) * ez + t0 * (t1 * t1 + 2 * rows * (t1 + 1));
    const double eq = len * ev + len * len * t0 * t1;
    return 2 * (2 * eq + t0 * t1 * t2);
}

// The GPU tile kernels (device/kernels/direct.cuh): plane sums over t0 and up to ot0 steps,
// horizontal sums over t2 and up to ot2 steps, vertical over t1 and up to ot1 steps, for
// output tiles of ot0 x ot1 x ot2.
inline double tile_kernel_guard(double t0, double t1, double t2, int ot0, int ot1, int ot2)
{
    const double ez = t0 > 1 ? t0 * t0 + 2 * ot0 * (t0 + 1) : 0;
    const double eh = t2 * ez + t0 * (t2 * t2 + 2 * ot2 * (t2 + 1));
    const double es = t1 * eh + t0 * t2 * (t1 * t1 + 2 * ot1 * (t1 + 1));
    return 2 * (es + t0 * t1 * t2);
}

// The GPU 2D Fourier tiles (row_sums, column_sums_finalise in device/kernels/fourier.cuh): a
// prefix scan along rows of up to tx + t2 columns, differences, then vertical running sums over
// t1 and up to ty steps.
inline double fourier_tile_guard_2d(int64_t T1, int64_t T2, int tx, int ty)
{
    const double t1 = double(T1), t2 = double(T2);
    const double len = double(tx + T2);
    const double eh = 2 * len * len + t2;   // h = Q[c + t2] - Q[c]
    const double es = t1 * eh + t2 * (t1 * t1 + 2 * ty * (t1 + 1));
    return 2 * (es + t1 * t2);
}

// Summed-area tables of an h x w subregion (device/batch_kernels.cuh's finalise_pair_table):
// prefix sums along each row, then down each column, so an entry's rounding is at most
// (h w^2 + w h^2) / 2; a window's sum is four entries combined by three more operations, each
// on a partial sum of at most h w terms.
inline double summed_area_guard(int64_t h, int64_t w)
{
    const double hh = double(h), ww = double(w);
    return 2 * (2 * hh * ww * (hh + ww) + 3 * hh * ww);
}

// The GPU 3D Fourier tiles (window_sums_finalise in device/kernels/fourier.cuh): horizontal
// sums of t2 terms, vertical sums of t1 of them, a first window of t0 planes, then up to
// `chunk` steps that each add and subtract a plane.
inline double fourier_tile_guard_3d(double t0, double t1, double t2, int chunk)
{
    const double plane = t1 * t2 * (t1 + t2);
    const double e = t0 * plane + t0 * t0 * t1 * t2 + chunk * (2 * (t0 + 1) * t1 * t2 + 2 * plane);
    return 2 * e;
}

// The whole-frame 3D Fourier finalisations (planes, rows, slabs: device/kernels/
// fourier3_frame.cuh), for chunks of `chunk` steps: the plane sums (a first window of T0
// planes, then two roundings of at most (T0 + 2) m per step), T2 of them summed and run along
// run_x columns, T1 of those summed and run along run_y rows.
inline double frame_guard(int T0, int T1, int T2, int chunk, int run_x, int run_y)
{
    const double t0 = T0, t1 = T1, t2 = T2;
    const double ez = t0 * t0 + chunk * (t0 + 4);
    const double eh = t2 * ez + t0 * ((t2 - 1) * t2 + 2 * run_x * (t2 + 1));
    const double ev = t1 * eh + t0 * t2 * ((t1 - 1) * t1 + 2 * run_y * (t1 + 1));
    return 2 * ev;
}

}  // namespace flcc::geometry
