// FFTW3 single-precision real transforms for the host Fourier solvers. FFTW's planner is not
// thread-safe and its thread count (fftwf_plan_with_nthreads) is global state, so every plan is
// made and destroyed here, behind one process-wide mutex. Executing a plan on new arrays
// (fftwf_execute_dft_r2c/c2r) is thread-safe, so one plan serves every worker thread.
#pragma once

#include "plan/problem.h"

#include <fftw3.h>

#include <string>
#include <utility>
#include <vector>

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

// FFTW's own wisdom (the algorithms its FFTW_MEASURE planning chose), kept per transform shape
// ("256x256 th1": the real extent and FFTW's thread count) so that FLCC's wisdom can carry it and
// a plan found there makes its transforms without FFTW timing them again. Each measured shape is
// planned from empty FFTW wisdom, so its text holds that shape's algorithms and nothing else
// (~1-4 kB); a shape's text reaches FFTW only when a transform of that shape is planned, so a
// wisdom file listing many problems costs a plan only the import of its own shapes (FFTW's
// import of a whole file's text took ~0.5 ms per 25 kB), and a plan whose solver needs no
// transform pays nothing.
//   fft_wisdom: every shape's text, as (key, text), ordered by key;
//   plausible_fft_wisdom: whether text looks like FFTW's (FFTW's own check comes on use: text it
//     refuses is dropped and the shape measured again);
//   add_fft_wisdom: a shape's text, for the next transform of that shape;
//   forget_fft_wisdom: every shape's text and FFTW's own wisdom;
//   fft_shapes_measured: how many shapes FFTW has measured in this process (for tests).
std::vector<std::pair<std::string, std::string>> fft_wisdom();
bool plausible_fft_wisdom(const std::string& text);
void add_fft_wisdom(const std::string& key, const std::string& text);
void forget_fft_wisdom();
long fft_shapes_measured();

}  // namespace flcc::host
