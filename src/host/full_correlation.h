// The full-region convolution of one image with one set of taps by FFT, for the upsampled-DFT
// peak refinement: on a box of fast transform sizes >= S + T - 1 per axis, the map is the
// inverse DFT of the product of the two spectra, with zeros past the full region, so that its
// periodic DFT interpolation (host/peaks.h, refine_upsampled) is the exact band-limited
// interpolation of the correlation: the matrix-multiply DFT of Guizar-Sicairos et al. evaluated
// from the map instead of the spectrum.
#pragma once

#include "host/real_fft.h"
#include "host/tile_runner.h"
#include "plan/problem.h"

#include <memory>

namespace flcc::host {

class FullCorrelation {
public:
    // Per-thread buffers: the box (map), and the two spectra.
    class Scratch {
    public:
        explicit Scratch(const FullCorrelation& f);

    private:
        friend class FullCorrelation;
        AlignedArray<float> real, image_spectrum, taps_spectrum;
    };

    // Plans FFTW for image * taps (FFTW_ESTIMATE) and reserves what FFTW holds for `threads`
    // threads. Throws std::bad_alloc.
    FullCorrelation(const Extent& image, const Extent& taps, int threads);
    ~FullCorrelation();

    // The box: the map's extent (axes where both extents are 1 stay 1).
    const Extent& box() const { return box_; }
    // Floats of one spectrum (64-byte aligned arrays of this size hold one).
    int64_t spectrum_floats() const { return 2 * complex_elems_; }

    // The spectrum of x (extent e, the image's or the taps') zero-padded to the box.
    void forward(const float* x, const Extent& e, float* spectrum, Scratch& s) const;

    // The map whose spectrum is the product of two spectra, in the box, scaled by volume(box)
    // (the unnormalised inverse transform); valid until the next call with the same scratch.
    const float* product_inverse(const float* a, const float* b, Scratch& s) const;

    // True when FFTW had to draw on the reserve since the last call (then the caller reports
    // FLCC_ALLOC_FAILED); clears the flag.
    bool take_fft_failure() const { return fft_guard_.take_failure(); }

private:
    Extent box_;
    int64_t complex_elems_ = 0;
    mutable FftGuard fft_guard_;   // before fft_: outlives the plans
    std::unique_ptr<RealFft> fft_;
};

}  // namespace flcc::host
