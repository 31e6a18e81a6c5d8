#include "host/preprocess.h"

#include "host/thread_pool.h"
#include "plan/error.h"

#include <algorithm>
#include <cmath>
#include <new>

namespace flcc::host {

namespace {

constexpr double kPi = 3.14159265358979323846;

fftwf_complex* as_complex(AlignedArray<float>& a)
{
    return reinterpret_cast<fftwf_complex*>(a.data());
}

// numpy.hanning(n): the symmetric window, 1 for n = 1.
std::vector<double> hann_weights(int64_t n)
{
    std::vector<double> w(size_t(n), 1.0);
    if (n > 1)
        for (int64_t i = 0; i < n; ++i)
            w[size_t(i)] = 0.5 - 0.5 * std::cos(2 * kPi * double(i) / double(n - 1));
    return w;
}

// The half spectrum's extent in FFTW's layout: the last axis of more than one element keeps
// n / 2 + 1 elements (axes of one element drop out of the transform without changing the order).
Extent half_spectrum(const Extent& e)
{
    Extent c = e;
    for (int a = 2; a >= 0; --a)
        if (e[a] > 1) {
            c[a] = e[a] / 2 + 1;
            break;
        }
    return c;
}

// The frequency of spectrum index i along an axis of n elements, in cycles per pixel: k / n with
// k wrapped to [-n/2, n/2) (on the halved axis i <= n / 2 and the sign does not matter, the gain
// depending on |f| only).
double frequency(int64_t i, int64_t n)
{
    const int64_t k = i < n - n / 2 ? i : i - n;
    return double(k) / double(n);
}

}  // namespace

Preprocessor::Scratch::Scratch(const Preprocessor& p)
{
    if (!p.s_.bandpass()) return;
    real = AlignedArray<float>(volume(p.e_));
    spectrum = AlignedArray<float>(2 * p.complex_elems_);
}

Preprocessor::Preprocessor(const Extent& e, const PreprocessSpec& s, int threads) : e_(e), s_(s)
{
    if (s_.hann)
        for (int a = 0; a < 3; ++a) hann_[a] = hann_weights(e_[a]);
    if (!s_.bandpass()) return;

    complex_elems_ = RealFft::complex_elems(e_);
    const Extent c = half_spectrum(e_);
    gain_ = AlignedArray<float>(complex_elems_);
    const double lo = 2 * kPi * kPi * s_.bandpass_low * s_.bandpass_low;
    const double hi = 2 * kPi * kPi * s_.bandpass_high * s_.bandpass_high;
    const double scale = 1.0 / double(volume(e_));   // the inverse transform is unnormalised
    float* g = gain_.data();
    for (int64_t q = 0; q < c[0]; ++q)
        for (int64_t r = 0; r < c[1]; ++r)
            for (int64_t k = 0; k < c[2]; ++k) {
                const double f0 = frequency(q, e_[0]), f1 = frequency(r, e_[1]),
                             f2 = frequency(k, e_[2]);
                const double f2sum = f0 * f0 + f1 * f1 + f2 * f2;
                double v = scale;
                if (lo != 0) v *= std::exp(-lo * f2sum);
                if (hi != 0) v *= -std::expm1(-hi * f2sum);
                *g++ = float(v);
            }

    // Planning arrays (64-byte aligned like every array the plans run on), then one trial run
    // to measure what FFTW holds while it executes, reserved for `threads` threads at once.
    Scratch trial(*this);
    fft_ = reserved_fft(e_, trial.real.data(), as_complex(trial.spectrum), fft_guard_, threads,
                        "a band-pass transform");
}

Preprocessor::~Preprocessor() = default;

void Preprocessor::apply(float* x, Scratch& scratch) const
{
    const int64_t n = volume(e_);
    if (s_.zero_mean) {
        double sum = 0;
        for (int64_t i = 0; i < n; ++i) sum += x[i];
        const double mean = sum / double(n);
        for (int64_t i = 0; i < n; ++i) x[i] = float(double(x[i]) - mean);
    }
    if (s_.hann) {
        float* p = x;
        for (int64_t q = 0; q < e_[0]; ++q)
            for (int64_t r = 0; r < e_[1]; ++r) {
                const double wqr = hann_[0][size_t(q)] * hann_[1][size_t(r)];
                const double* wc = hann_[2].data();
                for (int64_t c = 0; c < e_[2]; ++c, ++p) *p = float(double(*p) * (wqr * wc[c]));
            }
    }
    if (fft_ != nullptr) bandpass(x, scratch);
}

void Preprocessor::bandpass(float* x, Scratch& scratch) const
{
    const int64_t n = volume(e_);
    float* real = scratch.real.data();
    float* w = scratch.spectrum.data();
    std::copy(x, x + n, real);
    {
        FftScope scope(fft_guard_, nullptr);
        fft_->forward(real, reinterpret_cast<fftwf_complex*>(w));
        const float* g = gain_.data();
        for (int64_t k = 0; k < complex_elems_; ++k) {
            w[2 * k] *= g[k];
            w[2 * k + 1] *= g[k];
        }
        fft_->inverse(reinterpret_cast<fftwf_complex*>(w), real);
    }
    std::copy(real, real + n, x);
}

}  // namespace flcc::host
