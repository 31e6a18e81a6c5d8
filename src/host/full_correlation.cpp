#include "host/full_correlation.h"

#include "geometry/fft_size.h"
#include "host/thread_pool.h"
#include "plan/error.h"

#include <algorithm>
#include <new>

namespace flcc::host {

namespace {

fftwf_complex* as_complex(AlignedArray<float>& a) { return reinterpret_cast<fftwf_complex*>(a.data()); }

// Copies `in` (extent e) into the corner of the zeroed box.
void place(const float* in, const Extent& e, const Extent& box, float* out)
{
    std::fill(out, out + volume(box), 0.f);
    for (int64_t q = 0; q < e[0]; ++q)
        for (int64_t r = 0; r < e[1]; ++r)
            std::copy(in + (q * e[1] + r) * e[2], in + (q * e[1] + r + 1) * e[2],
                      out + (q * box[1] + r) * box[2]);
}

}  // namespace

FullCorrelation::Scratch::Scratch(const FullCorrelation& f)
    : real(volume(f.box_)),
      image_spectrum(2 * f.complex_elems_),
      taps_spectrum(2 * f.complex_elems_)
{
}

FullCorrelation::FullCorrelation(const Extent& image, const Extent& taps, int threads)
{
    for (int a = 0; a < 3; ++a) {
        const int64_t full = image[a] + taps[a] - 1;
        box_[a] = full == 1 ? 1 : geometry::fast_fft_size(full);
    }
    complex_elems_ = RealFft::complex_elems(box_);
    Scratch trial(*this);
    fft_ = reserved_fft(box_, trial.real.data(), as_complex(trial.image_spectrum), fft_guard_,
                        threads, "a refinement transform");
}

FullCorrelation::~FullCorrelation() = default;

void FullCorrelation::forward(const float* x, const Extent& e, float* spectrum, Scratch& s) const
{
    FftScope scope(fft_guard_, nullptr);
    place(x, e, box_, s.real.data());
    fft_->forward(s.real.data(), reinterpret_cast<fftwf_complex*>(spectrum));
}

const float* FullCorrelation::product_inverse(const float* a, const float* b, Scratch& s) const
{
    float* p = s.image_spectrum.data();
    for (int64_t k = 0; k < complex_elems_; ++k) {
        const float re = a[2 * k] * b[2 * k] - a[2 * k + 1] * b[2 * k + 1];
        const float im = a[2 * k] * b[2 * k + 1] + a[2 * k + 1] * b[2 * k];
        p[2 * k] = re;
        p[2 * k + 1] = im;
    }
    FftScope scope(fft_guard_, nullptr);
    fft_->inverse(as_complex(s.image_spectrum), s.real.data());
    return s.real.data();
}

}  // namespace flcc::host
