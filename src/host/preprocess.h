// Preprocessing of one image or template of a batch plan (flcc.h, "Batched correlation and
// peaks"), in place, in this order:
// - zero_mean subtracts the array's mean (accumulated in double);
// - hann multiplies by the separable symmetric Hann window w(i) = 0.5 - 0.5 cos(2 pi i / (n - 1))
//   along each axis of n > 1 elements (numpy.hanning; the weight is 1 along an axis of one
//   element), the product of the weights taken in double and applied with one rounding;
// - bandpass multiplies the array's DFT (periodic; per axis f = k / n cycles per pixel, k wrapped
//   to [-n/2, n/2)) by exp(-2 pi^2 low^2 |f|^2) * (1 - exp(-2 pi^2 high^2 |f|^2)); a factor whose
//   sigma is 0 is left out (a sigma enters squared: its sign does not matter). high != 0 gives
//   the DC term gain 0, so the result then has zero mean.
// The band-pass runs on FFTW (real_fft.h): a forward and an inverse transform of the whole array
// per call, planned once with FFTW_ESTIMATE, and the gain (with the inverse transform's 1/N
// folded in) precomputed per element of the half spectrum.
#pragma once

#include "host/real_fft.h"
#include "host/tile_runner.h"   // AlignedArray
#include "plan/problem.h"

#include <memory>
#include <vector>

namespace flcc::host {

struct PreprocessSpec {
    bool zero_mean = false, hann = false;
    double bandpass_low = 0, bandpass_high = 0;   // sigmas in pixels; 0: factor left out

    bool bandpass() const { return bandpass_low != 0 || bandpass_high != 0; }
    bool any() const { return zero_mean || hann || bandpass(); }
};

class Preprocessor {
public:
    // Per-thread buffers of apply (the transform's real array and half spectrum, 64-byte
    // aligned; empty without band-pass). Made by each worker thread (or for it) from the
    // preprocessor it serves. Throws std::bad_alloc.
    class Scratch {
    public:
        explicit Scratch(const Preprocessor& p);

    private:
        friend class Preprocessor;
        AlignedArray<float> real, spectrum;   // spectrum: interleaved re, im
    };

    // Extent e (a 2D array has planes = 1); `threads`: how many threads call apply at once (FFTW
    // may allocate while it executes; a reserve of what it held per thread in a trial run here
    // covers that many, see real_fft.h). Plans FFTW only when a band-pass sigma is set. Throws
    // std::bad_alloc (with the error detail set when FFTW is at fault).
    Preprocessor(const Extent& e, const PreprocessSpec& s, int threads = 1);
    ~Preprocessor();
    Preprocessor(const Preprocessor&) = delete;
    Preprocessor& operator=(const Preprocessor&) = delete;

    const Extent& extent() const { return e_; }
    const PreprocessSpec& spec() const { return s_; }

    // Preprocesses x (volume(extent()) floats, any alignment) in place. Allocates nothing of its
    // own. Thread-safe: concurrent calls on distinct arrays with distinct scratch.
    void apply(float* x, Scratch& scratch) const;

    // True when FFTW's memory in an apply since the last call came from the reserve (those
    // results are still right: FFTW finished normally), which the caller reports as
    // FLCC_ALLOC_FAILED; clears the flag.
    bool take_fft_failure() const { return fft_guard_.take_failure(); }

private:
    void bandpass(float* x, Scratch& scratch) const;

    Extent e_;
    PreprocessSpec s_;
    std::vector<double> hann_[3];   // per axis, e[a] weights
    int64_t complex_elems_ = 0;     // of the half spectrum
    AlignedArray<float> gain_;      // per half-spectrum element, 1/N included
    mutable FftGuard fft_guard_;    // before fft_: outlives the plans
    std::unique_ptr<RealFft> fft_;
};

}  // namespace flcc::host
