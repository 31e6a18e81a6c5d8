#include "host/fourier_common.h"

#include <cstring>

namespace flcc::host {

void make_filter(const float* taps, const Extent& te, const RealFft& fft, const Extent& n,
                 float* real, float* filter)
{
    std::fill(real, real + volume(n), 0.0f);
    for (int64_t a = 0; a < te[0]; ++a)
        for (int64_t i = 0; i < te[1]; ++i)
            std::memcpy(real + (a * n[1] + i) * n[2], taps + (a * te[1] + i) * te[2],
                        sizeof(float) * size_t(te[2]));
    fft.forward(real, reinterpret_cast<fftwf_complex*>(filter));
    const float scale = float(1.0 / double(volume(n)));
    const int64_t m = RealFft::complex_elems(n);
    for (int64_t k = 0; k < m; ++k) {
        filter[2 * k] *= scale;
        filter[2 * k + 1] *= -scale;
    }
}

}  // namespace flcc::host
