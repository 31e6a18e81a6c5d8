// FFTW3 single-precision real transforms for the host Fourier solvers. FFTW's planner is not
// thread-safe and its thread count (fftwf_plan_with_nthreads) is global state, so every plan is
// made and destroyed here, behind one process-wide mutex. Executing a plan on new arrays
// (fftwf_execute_dft_r2c/c2r) is thread-safe, so one plan serves every worker thread.
#pragma once

#include "plan/problem.h"

#include <fftw3.h>

#include <string>

namespace flcc::host {

// The smallest m >= n whose only prime factors are 2, 3, 5 and 7 (sizes FFTW does fastest).
int64_t fast_fft_size(int64_t n);

// Forward (real to complex) and inverse (complex to real, unnormalised) transforms of one real
// extent n (planes, rows, cols), out of place, real data packed (cols fastest). Axes of size 1
// are dropped from the transform; the spectrum holds complex_elems(n) values in FFTW's
// half-spectrum layout. Arrays handed to forward/inverse must be 64-byte aligned, like the
// planning arrays; both transforms may destroy their input.
class RealFft {
public:
    // Plans on `threads` threads, with FFTW_MEASURE (which overwrites real and spectrum) or
    // FFTW_ESTIMATE. Throws std::bad_alloc when FFTW cannot make a plan.
    RealFft(const Extent& n, float* real, fftwf_complex* spectrum, int threads, bool measure);
    ~RealFft();
    RealFft(const RealFft&) = delete;
    RealFft& operator=(const RealFft&) = delete;

    void forward(float* real, fftwf_complex* spectrum) const
    {
        fftwf_execute_dft_r2c(forward_, real, spectrum);
    }
    void inverse(fftwf_complex* spectrum, float* real) const
    {
        fftwf_execute_dft_c2r(inverse_, spectrum, real);
    }

    static int64_t complex_elems(const Extent& n);

private:
    fftwf_plan forward_ = nullptr, inverse_ = nullptr;
};

// FFTW's own wisdom (the algorithms its FFTW_MEASURE planning chose), as text and back, and
// forgotten. FLCC's wisdom carries it, so that a plan found there also makes its transforms
// without FFTW timing them again. import returns false for text FFTW does not accept.
// defer keeps the text and imports it when the next transform is planned (ignoring text FFTW
// refuses): a plan whose solver needs no FFT then pays nothing for it (FFTW's import of a
// typical file takes ~2 ms, more than a wisdom hit may cost).
std::string export_fft_wisdom();
bool import_fft_wisdom(const std::string& text);
void defer_fft_wisdom(const std::string& text);
void forget_fft_wisdom();

}  // namespace flcc::host
