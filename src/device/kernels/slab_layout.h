// The geometry of device.fourier3.slabs (kernels/fourier_slabs.cuh) and the layout of its
// template spectra, host side. A tile is 32 x 32 image values of one plane (the box of 25 x 25
// outputs for templates up to 8 x 8 across: overlap-save in both axes); its 2D spectrum is kept
// as 16 columns of 32 bins: x bins 1..15, and x bins 0 and 16 packed into column 0 (the real
// rows' DC and Nyquist values as one complex sequence, split after the column transform: slot k
// holds F0(k), slot 32 - k holds F16(k), k = 1..15, slots 0 and 16 the real pairs).
#pragma once

#include <cuda_runtime.h>   // __host__ __device__

#include <cmath>
#include <cstddef>

namespace flcc::device {

constexpr int kSlabFFT = 32;                           // transform length along x and y
constexpr int kSlabMaxT = 8;                           // template extent at most, every axis
constexpr int kSlabOut = kSlabFFT - kSlabMaxT + 1;     // outputs per tile along x and y (25)
constexpr int kSlabCols = kSlabFFT / 2;                // spectrum columns per plane
constexpr int kSlabSlots = kSlabCols * kSlabFFT;       // complex bins per plane (512)

// The four factors of slot k of column c (see below) from the template plane's DFT T(kx, ky)
// (exponent -, unnormalised; dft(kx, ky, re, im)), scaled by 1 / 2048.
#ifdef __CUDACC__
#pragma nv_exec_check_disable   // instantiated with host lambdas too (slab_template_spectra)
#endif
template <class Dft>
__host__ __device__ inline void slab_slot_factors(int c, int k, Dft dft, float* o)
{
    const double s = 1.0 / 2048;
    double re, im;
    if (c == 0 && (k == 0 || k == 16)) {
        double re16, im16;
        dft(0, k, re, im);
        dft(16, k, re16, im16);
        o[0] = float(re * s), o[1] = 0.f, o[2] = float(re16 * s), o[3] = 0.f;
        return;
    }
    const int kx = c == 0 && k > 16 ? 16 : c, ky = c == 0 && k > 16 ? kSlabFFT - k : k;
    dft(kx, ky, re, im);
    o[0] = float(re * s), o[1] = float(im * s), o[2] = float(re * s), o[3] = float(-im * s);
}

// Template spectra for the kernel, from the prepared taps (T0 x T1 x T2, dense; zero beyond,
// up to kSlabMaxT planes): for each plane dz and slot (column c, bin k) of the layout above the
// four factors of acc += F conj(T) / 2048 (acc.x += F.x t.x + F.y t.y, acc.y += F.y t.z + F.x t.w;
// 2048 = the transforms' gain: 2 for the rows' packing, 32 for each inverse). The packed slots
// 0 and 16 of column 0 multiply component by component (two real bins each).
// out: kSlabMaxT x kSlabSlots x 4 floats, [dz][c][k].
inline void slab_template_spectra(const float* taps, int T0, int T1, int T2, float* out)
{
    // Separable, from a table of the 32 roots of unity: per plane the rows' DFTs along x (17
    // bins), then those along y; a few tens of microseconds per template (set_template runs
    // per frame when the template changes).
    const double pi = 3.14159265358979323846;
    double wc[kSlabFFT], ws[kSlabFFT];
    for (int m = 0; m < kSlabFFT; ++m) wc[m] = std::cos(2 * pi * m / kSlabFFT), ws[m] = std::sin(2 * pi * m / kSlabFFT);
    for (int dz = 0; dz < kSlabMaxT; ++dz) {
        double re[17][kSlabFFT] = {}, im[17][kSlabFFT] = {};   // T(kx, ky), exponent -, unnormalised
        if (dz < T0) {
            double rr[kSlabMaxT][17] = {}, ri[kSlabMaxT][17] = {};   // the rows' DFTs along x
            for (int dy = 0; dy < T1; ++dy)
                for (int kx = 0; kx <= 16; ++kx)
                    for (int dx = 0; dx < T2; ++dx) {
                        const double t = taps[(size_t(dz) * T1 + dy) * T2 + dx];
                        const int m = kx * dx % kSlabFFT;
                        rr[dy][kx] += t * wc[m];
                        ri[dy][kx] -= t * ws[m];
                    }
            for (int kx = 0; kx <= 16; ++kx)
                for (int ky = 0; ky < kSlabFFT; ++ky)
                    for (int dy = 0; dy < T1; ++dy) {
                        const int m = ky * dy % kSlabFFT;   // times exp(-2 pi i m / 32)
                        re[kx][ky] += rr[dy][kx] * wc[m] + ri[dy][kx] * ws[m];
                        im[kx][ky] += ri[dy][kx] * wc[m] - rr[dy][kx] * ws[m];
                    }
        }
        const auto dft = [&](int kx, int ky, double& r, double& i) { r = re[kx][ky], i = im[kx][ky]; };
        for (int c = 0; c < kSlabCols; ++c)
            for (int k = 0; k < kSlabFFT; ++k)
                slab_slot_factors(c, k, dft, out + ((size_t(dz) * kSlabCols + c) * kSlabFFT + k) * 4);
    }
}

}  // namespace flcc::device
