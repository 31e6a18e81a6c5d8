// The kernel of device.fourier3.rows (src/device/fourier_rows_solver.cu): 3D convolution and
// LCC for templates up to 8 x 8 x 8 in one kernel per frame (after the image statistics for
// LCC). Each block owns kRowsZ x kRowsY x kRowsX outputs and
//   1. loads the image box its windows read, (kRowsZ + 7) x (kRowsY + 7) x 32, into shared memory;
//   2. (LCC) takes the window sums of x and x^2 in double from it, plane by plane (running sums
//      along the planes and runs of columns in registers, then along runs of rows) and keeps
//      per output the factor its numerator is multiplied by (or a mark: recompute);
//   3. transforms each box row (32 real values) by a 32-point real FFT in registers: overlap-save
//      along x, 25 valid outputs per row for a template up to 8 wide;
//   4. sums, per output row and frequency bin, the box rows' bins times the conjugate bins of the
//      template's (dz, dy) rows: direct along the planes and rows, ~160 multiply-adds per output
//      against 512 for a direct 8^3 correlation;
//   5. transforms the output rows back and stores the coefficients (or the convolution).
// The image is read once from memory (the boxes overlap in L2), the output written twice (the
// factors wait there); no frame-sized intermediate exists, where device.fourier3.planes (R2C +
// sums + C2R + the finalisation) makes a pass over frame-sized buffers at each step.
//
// Numerics (LCC) are those of finalise_planes: one centring constant c for the transforms with
// the padding at zero and c times the taps over the padding added back in double (padding at -c
// in the transforms' input would spread c's rounding over every bin of the row), window sums
// centred by c in blocks whose windows all lie inside the image and uncentred (padding exactly
// zero) elsewhere, the same guard, modes, recompute rule and list.
#pragma once

#include "device/kernels/fft32.h"
#include "device/kernels/fourier3_frame.cuh"
#include "geometry/guard.h"

#include <cuda_pipeline.h>

#include <cmath>
#include <type_traits>

namespace flcc::device {

constexpr int kRowsFFT = 32;                 // the row transform's length
constexpr int kRowsBins = kRowsFFT / 2;      // bins 1..15, with 0 and 16 packed into one
constexpr int kRowsMaxT = 8;                 // template extent at most, every axis
constexpr int kRowsZ = 8, kRowsY = 16;       // output planes and rows of a block
constexpr int kRowsX = kRowsFFT - kRowsMaxT + 1;   // output columns of a block (25)
constexpr int kRowsBoxZ = kRowsZ + kRowsMaxT - 1, kRowsBoxY = kRowsY + kRowsMaxT - 1;
constexpr int kRowsBoxRows = kRowsBoxZ * kRowsBoxY;   // 345
constexpr int kRowsThreads = 256;
// Box rows in shared memory: 32 floats and a spare pair (17 float2: consecutive rows fall in
// different banks, both for a thread reading its own row and for the bins of neighbouring rows).
constexpr int kRowsPitch = kRowsFFT + 2;
// Runs of the window sums: output columns per horizontal task, rows per vertical task.
constexpr int kRowsRunX = 5, kRowsRunY = 4;
static_assert(kRowsX % kRowsRunX == 0 && kRowsY % kRowsRunY == 0, "whole runs");
// The output spectra after the sums: bin-major, planes of 17 rows, bins 137 apart (bank-free
// for the stores of the sums and the inverse transforms' loads).
constexpr int kRowsSpecPlane = 17, kRowsSpecBin = kRowsZ * kRowsSpecPlane + 1;
constexpr int kRowsOutputs = kRowsZ * kRowsY * kRowsX;   // 3200

// Shared memory, in bytes, in this order: the window sums' scratch (then the numerators) and the
// box (then its spectra, then the output spectra, then the factors); 65 KB, three blocks per
// multiprocessor. The
// template's row spectra (16 KB, the same for every block) are read through L1 instead, and
// the factors wait in the output array: shared memory is what bounds the blocks resident.
constexpr size_t kRowsBoxBytes = size_t(kRowsBoxRows) * kRowsPitch * sizeof(float);
constexpr size_t kRowsTapBytes = size_t(kRowsMaxT) * kRowsMaxT * kRowsBins * sizeof(float4);
constexpr size_t kRowsScratchBytes =
    size_t(2) * 2 * kRowsBoxY * kRowsX * sizeof(double);   // two planes of h; >= the numerators
constexpr size_t kRowsSharedBytes = kRowsScratchBytes + kRowsBoxBytes;
static_assert(kRowsScratchBytes >= kRowsOutputs * sizeof(float), "numerators fit the scratch");
static_assert(kRowsScratchBytes % 16 == 0, "aligned");
static_assert(size_t(kRowsBins) * kRowsSpecBin * sizeof(float2) <= kRowsBoxBytes, "output spectra fit the box");

// The error bound factor of the window sums (geometry::frame_guard): running sums along
// chunks of kRowsZ planes, runs of kRowsRunX columns and kRowsRunY rows.
inline double rows_guard_factor(int T0, int T1, int T2)
{
    return geometry::frame_guard(T0, T1, T2, kRowsZ, kRowsRunX, kRowsRunY);
}

namespace rows_detail {

// Shared-memory mbarriers for the window sums' producer and consumer warps: arrive (release,
// does not wait) and wait for the completion of the phase with the given parity (acquire).
__device__ __forceinline__ void mbar_init(uint64_t* bar, int count)
{
    asm volatile("mbarrier.init.shared.b64 [%0], %1;" ::"r"(unsigned(__cvta_generic_to_shared(bar))), "r"(count)
                 : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint64_t* bar)
{
    asm volatile("{\n\t.reg .b64 state;\n\tmbarrier.arrive.shared.b64 state, [%0];\n\t}" ::"r"(
                     unsigned(__cvta_generic_to_shared(bar)))
                 : "memory");
}
__device__ __forceinline__ void mbar_wait(uint64_t* bar, unsigned parity)
{
    asm volatile(
        "{\n\t.reg .pred done;\n"
        "wait:\n\t"
        "mbarrier.try_wait.parity.shared.b64 done, [%0], %1;\n\t"
        "@!done bra wait;\n\t}" ::"r"(unsigned(__cvta_generic_to_shared(bar))),
        "r"(parity)
        : "memory");
}

}  // namespace rows_detail

// Template rows' spectra for the kernel (host side, double): for each (dz, dy) row of the
// prepared taps (zero beyond T0, T1, T2) the 32-point DFT T, as the four factors of
// acc += F conj(T) / 64 (bins 1..15: T.x, T.y, T.x, -T.y; the packed bins 0 and 16: T0, 0,
// T16, 0), in [dz][dy][bin] order.
inline void rows_template_spectra(const float* taps, int T0, int T1, int T2, float* out)
{
    const double pi = 3.14159265358979323846;
    for (int a = 0; a < kRowsMaxT; ++a)
        for (int i = 0; i < kRowsMaxT; ++i)
            for (int k = 0; k < kRowsBins; ++k) {
                float* o = out + ((size_t(a) * kRowsMaxT + i) * kRowsBins + k) * 4;
                double re = 0, im = 0, nyq = 0;
                if (a < T0 && i < T1)
                    for (int j = 0; j < T2; ++j) {
                        const double t = taps[(size_t(a) * T1 + i) * T2 + j];
                        re += t * std::cos(2 * pi * k * j / kRowsFFT);
                        im -= t * std::sin(2 * pi * k * j / kRowsFFT);
                        nyq += (j & 1) ? -t : t;
                    }
                const double s = 1.0 / (2 * kRowsFFT);
                if (k == 0) {
                    o[0] = float(re * s), o[1] = 0.f, o[2] = float(nyq * s), o[3] = 0.f;
                } else {
                    o[0] = float(re * s), o[1] = float(im * s), o[2] = float(re * s), o[3] = float(-im * s);
                }
            }
}

// One block: outputs (q0.., y0.., x0..) of kRowsZ x kRowsY x kRowsX. Grid (x blocks, y blocks,
// z blocks); dynamic shared memory kRowsSharedBytes. `xtaps`: rows_template_spectra. T2: the
// template's columns (the window sums' running sums along a row stay in registers).
template <int T2>
__global__ void __launch_bounds__(kRowsThreads, 3) rows_frame(PlanesParams g, const float4* __restrict__ xtaps)
{
    extern __shared__ float4 rows_shared[];
    double* scratch = reinterpret_cast<double*>(rows_shared);
    float* box = reinterpret_cast<float*>(reinterpret_cast<char*>(rows_shared) + kRowsScratchBytes);
    float2* spec = reinterpret_cast<float2*>(box);   // the same rows as 17 bins
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int x0 = blockIdx.x * kRowsX, y0 = blockIdx.y * kRowsY, q0 = blockIdx.z * kRowsZ;
    const int T0 = g.T[0], T1 = g.T[1];
    const int zb = q0 - g.P[0], yb = y0 - g.P[1], xb = x0 - g.P[2];   // the box's image origin
    const int nz = min(kRowsZ, g.O[0] - q0);                           // real output planes
    // The window sums' producer/consumer barriers (LCC), ready by the first __syncthreads.
    __shared__ uint64_t full[2], empty[2];
    if (tid == 0)
        for (int b = 0; b < 2; ++b) {
            rows_detail::mbar_init(&full[b], kRowsThreads / 2);
            rows_detail::mbar_init(&empty[b], kRowsThreads / 2);
        }

    // The box: image values (raw - c) * scale inside the image, zero outside. Asynchronous
    // copies (zero-filled outside the image) put every value of the box in flight at once, then
    // each thread centres the values it copied. Lanes along the box rows (coalesced); warp w
    // takes rows w, w + 8, w + 16 of every plane.
    const float* __restrict__ image = g.frame->image;
    float* out = g.frame->out;
    const int64_t image_plane = int64_t(g.S[1]) * g.S[2];
    constexpr int kRowsPerWarp = (kRowsBoxY + 7) / 8;
    int row_off[kRowsPerWarp];   // offset of the thread's value in an image plane
    unsigned row_in = 0;         // bit i: row warp + 8 i is a box row inside the image
    {
        const int x = xb + lane;
#pragma unroll
        for (int i = 0; i < kRowsPerWarp; ++i) {
            const int r = warp + 8 * i, y = yb + r;
            const bool in = r < kRowsBoxY && y >= 0 && y < g.S[1] && x >= 0 && x < g.S[2];
            row_off[i] = in ? y * g.S[2] + x : 0;
            row_in |= unsigned(in) << i;
        }
    }
    // The raw image values (zero outside), by asynchronous copies: every value in flight at once.
    const auto copy_box = [&]() {
#pragma unroll 5
        for (int a = 0; a < kRowsBoxZ; ++a) {
            const int z = zb + a;
            const unsigned in = z >= 0 && z < g.S[0] ? row_in : 0u;
            const float* src = image + (in != 0 ? z : 0) * image_plane;
#pragma unroll
            for (int i = 0; i < kRowsPerWarp; ++i)
                if (warp + 8 * i < kRowsBoxY)
                    __pipeline_memcpy_async(box + (a * kRowsBoxY + warp + 8 * i) * kRowsPitch + lane,
                                            src + row_off[i], sizeof(float), in >> i & 1u ? 0 : sizeof(float));
        }
        __pipeline_commit();
        __pipeline_wait_prior(0);
    };
    // Each thread's raw values inside the image, centred in place: (raw - c) * scale in double
    // for the scaled modes (extreme magnitudes), else raw - c; one branch per box.
    const auto centre_box = [&](auto scaled, float c, double scale) {
        constexpr bool kScaled = decltype(scaled)::value;
#pragma unroll 5
        for (int a = 0; a < kRowsBoxZ; ++a) {
            const int z = zb + a;
            const unsigned in = z >= 0 && z < g.S[0] ? row_in : 0u;
#pragma unroll
            for (int i = 0; i < kRowsPerWarp; ++i) {
                float* v = box + (a * kRowsBoxY + warp + 8 * i) * kRowsPitch + lane;
                if (warp + 8 * i < kRowsBoxY && (in >> i & 1u))
                    *v = kScaled ? float((double(*v) - double(c)) * scale) : *v - c;
            }
        }
    };
    const auto centre = [&](float c, double scale) {
        if (scale != 1)
            centre_box(std::true_type{}, c, scale);
        else if (c != 0.f)
            centre_box(std::false_type{}, c, scale);
    };

    double c0s = 0;   // the centring constant in the transforms' scale, in blocks that reach the padding
    if (g.lcorr) {
        // Centred only when every real output's window lies inside the image.
        bool inside = true;
        const int lo[3] = {q0, y0, x0};
        const int hi[3] = {q0 + nz, min(y0 + kRowsY, g.O[1]), min(x0 + kRowsX, g.O[2])};
        for (int a = 0; a < 3; ++a) inside &= lo[a] >= g.P[a] && hi[a] <= g.S[a] - g.T[a] + g.P[a] + 1;
        const TileMode m = g.modes[inside ? 0 : 1], m0 = g.modes[0];
        // Inside, no window of a real output reads the padding: zero there serves the transforms.
        copy_box();
        centre(inside ? m.c : 0.f, m.scale);
        const WindowFactor factor_of(m, m0, g.n);
        __syncthreads();

        // Window sums, output plane by output plane, by two groups of warps in a pipeline.
        // Warps 0-3, the horizontal tasks: patch row r and run of kRowsRunX
        // output columns; each keeps in registers, for the kRowsRunX + T2 - 1 box columns its
        // windows cover, the sums over the window's planes of x and x^2 (running: the plane that
        // enters added, the one that leaves subtracted), and stores the sums over T2 columns
        // (the first directly, the next running) to h[plane & 1]. Warps 4-7, the vertical
        // tasks, a plane or two behind: output column and run of kRowsRunY rows, the sums over T1
        // rows of h, then the factor ratio / sqrt(D) (0 when guarded, -1 to recompute), which
        // waits in the output until the numerators are done.
        constexpr int kCols = kRowsRunX + T2 - 1;   // box columns of a horizontal task
        constexpr int kHalf = kRowsThreads / 2;
        constexpr int kH = kRowsBoxY * kRowsX;     // one plane of h (doubles)
        static_assert(kRowsBoxY * (kRowsX / kRowsRunX) <= kHalf && kRowsX * (kRowsY / kRowsRunY) <= kHalf,
                      "each group's tasks fit its threads");
        double* const h = scratch;   // [2 planes][x, x^2][kRowsBoxY][kRowsX]
        const int hrows = kRowsY + T1 - 1;   // patch rows the outputs' windows cover
        const bool horizontal = tid < kHalf, htask = tid < hrows * (kRowsX / kRowsRunX);
        const int hrun = tid / hrows, hr = tid - hrun * hrows;   // the horizontal task
        const int vt = tid - kHalf;
        const bool vtask = !horizontal && vt < kRowsX * (kRowsY / kRowsRunY);
        const int vrow = vt / kRowsX * kRowsRunY, vcol = vt - vt / kRowsX * kRowsX;   // the vertical task
        unsigned vreal = 0;   // bit i: output row vrow + i, column vcol is real
#pragma unroll
        for (int i = 0; i < kRowsRunY; ++i)
            vreal |= unsigned(vtask && y0 + vrow + i < g.O[1] && x0 + vcol < g.O[2]) << i;
        const float* col0 = box + hr * kRowsPitch + hrun * kRowsRunX;   // plane 0 of the task's row
        double z1[kCols], z2[kCols];
        if (htask) {
#pragma unroll
            for (int j = 0; j < kCols; ++j) z1[j] = z2[j] = 0;
            for (int a = 0; a < T0; ++a)
#pragma unroll
                for (int j = 0; j < kCols; ++j) {
                    const double v = col0[a * kRowsBoxY * kRowsPitch + j];
                    z1[j] += v;
                    z2[j] = fma(v, v, z2[j]);
                }
        }
        // h[p & 1] is filled at plane p and read at plane p; its next filling, at plane p + 2,
        // waits until the vertical tasks have read it: mbarriers, producer and consumer (full[b]
        // counts the horizontal group's arrivals, empty[b] the vertical group's), so that
        // neither group waits for the other's slowest plane. Plane p completes phase p / 2 of
        // full[p & 1]; empty[p & 1]'s phase (p - 2) / 2 releases plane p's buffer.
        if (horizontal) {
            for (int p = 0; p < nz; ++p) {
                if (p >= 2) rows_detail::mbar_wait(&empty[p & 1], unsigned((p - 2) >> 1) & 1u);
                if (htask) {
                    if (p > 0) {
                        const float* come = col0 + (p + T0 - 1) * kRowsBoxY * kRowsPitch;
                        const float* gone = col0 + (p - 1) * kRowsBoxY * kRowsPitch;
#pragma unroll
                        for (int j = 0; j < kCols; ++j) {
                            const double e = come[j], l = gone[j];
                            z1[j] += e - l;
                            z2[j] += fma(e, e, -(l * l));
                        }
                    }
                    double* o1 = h + (p & 1) * 2 * kH + hr * kRowsX + hrun * kRowsRunX;
                    double* o2 = o1 + kH;
                    double s1 = z1[0], s2 = z2[0];
#pragma unroll
                    for (int j = 1; j < T2; ++j) s1 += z1[j], s2 += z2[j];
                    o1[0] = s1;
                    o2[0] = s2;
#pragma unroll
                    for (int x = 1; x < kRowsRunX; ++x) {
                        s1 = (s1 + z1[x + T2 - 1]) - z1[x - 1];
                        s2 = (s2 + z2[x + T2 - 1]) - z2[x - 1];
                        o1[x] = s1;
                        o2[x] = s2;
                    }
                }
                rows_detail::mbar_arrive(&full[p & 1]);
            }
        } else {
            for (int p = 0; p < nz; ++p) {
                rows_detail::mbar_wait(&full[p & 1], unsigned(p >> 1) & 1u);
                if (vtask) {
                    const double* a1 = h + (p & 1) * 2 * kH + vrow * kRowsX + vcol;
                    const double* a2 = a1 + kH;
                    double s1 = a1[0], s2 = a2[0];
#pragma unroll
                    for (int i = 1; i < kRowsMaxT; ++i)
                        if (i < T1) s1 += a1[i * kRowsX], s2 += a2[i * kRowsX];
                    float* o = out + (int64_t(q0 + p) * g.O[1] + y0 + vrow) * g.O[2] + x0 + vcol;
#pragma unroll
                    for (int i = 0; i < kRowsRunY; ++i) {
                        if (i > 0) {
                            s1 = (s1 + a1[(i + T1 - 1) * kRowsX]) - a1[(i - 1) * kRowsX];
                            s2 = (s2 + a2[(i + T1 - 1) * kRowsX]) - a2[(i - 1) * kRowsX];
                        }
                        if (vreal >> i & 1u) o[i * g.O[2]] = factor_of(s1, s2);
                    }
                }
                if (p + 2 < nz) rows_detail::mbar_arrive(&empty[p & 1]);
            }
        }
        __syncthreads();
        if (!inside) {   // the transforms take the image centred by modes[0]: from the raw values
            if (m.scale != 1) copy_box();   // (the box holds them unless scaled)
            centre(m0.c, m0.scale);
            c0s = double(m0.c) * m0.scale;
        }
    } else {
        copy_box();
    }
    __syncthreads();

    // Row transforms, each in place: a thread per box row.
    for (int row = tid; row < kRowsBoxRows; row += kRowsThreads) {
        float2 v[16];
        const float2* src = spec + row * (kRowsPitch / 2);
#pragma unroll
        for (int m = 0; m < 16; ++m) v[m] = src[m];
        fft32::forward_row(v);
        float2* dst = spec + row * (kRowsPitch / 2);
#pragma unroll
        for (int k = 0; k < 16; ++k) dst[k] = v[k];
    }
    __syncthreads();

    // The sums over the template's (dz, dy) rows per output row and bin: lanes on 8 planes x 2
    // runs of 8 rows x 2 bins, warps on bin pairs; each thread 8 output rows of one bin.
    const int oz = lane & 7, run = (lane >> 3) & 1, bin = 2 * warp + (lane >> 4);
    float2 acc[8];
#pragma unroll
    for (int r = 0; r < 8; ++r) acc[r] = {0.f, 0.f};
    for (int dz = 0; dz < T0; ++dz) {
        float4 t[kRowsMaxT];
#pragma unroll
        for (int dy = 0; dy < kRowsMaxT; ++dy) t[dy] = __ldg(xtaps + (dz * kRowsMaxT + dy) * kRowsBins + bin);
        const float2* f = spec + ((oz + dz) * kRowsBoxY + run * 8) * (kRowsPitch / 2) + bin;
#pragma unroll
        for (int j = 0; j < 8 + kRowsMaxT - 1; ++j) {
            const float2 F = f[j * (kRowsPitch / 2)];
#pragma unroll
            for (int r = 0; r < 8; ++r) {
                const int dy = j - r;
                if (dy >= 0 && dy < kRowsMaxT) {
                    acc[r].x = fmaf(F.x, t[dy].x, fmaf(F.y, t[dy].y, acc[r].x));
                    acc[r].y = fmaf(F.y, t[dy].z, fmaf(F.x, t[dy].w, acc[r].y));
                }
            }
        }
    }
    __syncthreads();   // the box's spectra are read; the output spectra take their place
    float2* ospec = spec;
#pragma unroll
    for (int r = 0; r < 8; ++r) ospec[bin * kRowsSpecBin + oz * kRowsSpecPlane + run * 8 + r] = acc[r];
    __syncthreads();

    // Inverse transforms: a thread per output row; the numerators to shared memory.
    float* num = reinterpret_cast<float*>(scratch);   // kRowsZ x kRowsY x kRowsX
    if (tid < kRowsZ * kRowsY) {
        const int z = tid / kRowsY, y = tid - z * kRowsY;
        if (z < nz && y0 + y < g.O[1]) {
            float2 v[16];
#pragma unroll
            for (int k = 0; k < 16; ++k) v[k] = ospec[k * kRowsSpecBin + z * kRowsSpecPlane + y];
            fft32::inverse_row(v);
            float* o = num + (z * kRowsY + y) * kRowsX;
#pragma unroll
            for (int m = 0; m < 16; ++m) {
                if (2 * m < kRowsX) o[2 * m] = v[m].x;
                if (2 * m + 1 < kRowsX) o[2 * m + 1] = v[m].y;
            }
        }
    }
    __syncthreads();

    // The outputs, lanes along the rows: output i = tid + kRowsThreads t of the block at plane
    // z, row y, column x, advanced without divisions.
    static_assert(kRowsThreads < kRowsY * kRowsX, "one step of y at most per step of x");
    constexpr int kStepY = kRowsThreads / kRowsX, kStepX = kRowsThreads % kRowsX;
    constexpr int kSteps = (kRowsOutputs + kRowsThreads - 1) / kRowsThreads;
    // unroll: std::integral_constant, the steps unrolled.
    const auto each_output = [&](auto unroll, auto&& fn) {
        int z = 0, y = tid / kRowsX, x = tid % kRowsX;
#pragma unroll(decltype(unroll)::value)
        for (int t = 0; t < kSteps; ++t) {
            const int q = q0 + z, oy = y0 + y, ox = x0 + x;
            if (tid + t * kRowsThreads < kRowsOutputs && z < nz && oy < g.O[1] && ox < g.O[2])
                fn(t, q, oy, ox, (int64_t(q) * g.O[1] + oy) * g.O[2] + ox);
            x += kStepX;
            if (x >= kRowsX) x -= kRowsX, ++y;
            y += kStepY;
            if (y >= kRowsY) y -= kRowsY, ++z;
        }
    };
    const std::integral_constant<int, kSteps> unrolled;
    if (!g.lcorr) {
        each_output(unrolled, [&](int t, int, int, int, int64_t e) { out[e] = num[tid + t * kRowsThreads]; });
        return;
    }
    if (c0s != 0)   // a block at the padding: the padding's share, -c0 times its taps (each thread its own numerators)
        each_output(std::integral_constant<int, 1>{}, [&](int t, int q, int oy, int ox, int64_t) {
            const int o[3] = {q, oy, ox};
            const bool whole = q >= g.P[0] && q <= g.S[0] + g.P[0] - g.T[0] && oy >= g.P[1] &&
                               oy <= g.S[1] + g.P[1] - g.T[1] && ox >= g.P[2] && ox <= g.S[2] + g.P[2] - g.T[2];
            float& v = num[tid + t * kRowsThreads];
            if (!whole) v = float(double(v) - c0s * taps_in_padding(g, o));
        });
    // The factors (in the output since the window sums) into the box, free now, by asynchronous
    // copies: all in flight together, none behind a store to the output.
    float* factor = box;
    each_output(std::integral_constant<int, 1>{}, [&](int t, int, int, int, int64_t e) {
        __pipeline_memcpy_async(factor + tid + t * kRowsThreads, out + e, sizeof(float));
    });
    __pipeline_commit();
    __pipeline_wait_prior(0);
    each_output(unrolled, [&](int t, int, int, int, int64_t e) {
        float f = factor[tid + t * kRowsThreads];
        if (f < 0.f) {
            g.redo[atomicAdd(g.redo_count, 1)] = int(e);
            f = 0.f;
        }
        out[e] = fminf(fmaxf(num[tid + t * kRowsThreads] * f, -1.f), 1.f);
    });
}

}  // namespace flcc::device
