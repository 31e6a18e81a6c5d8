// Preprocessing of batch images and templates (src/host/preprocess.h) against float64
// references written here: the mean, the Hann product, and the band-pass through a naive
// O(n^2) complex DFT per axis.
#include "host/preprocess.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <complex>
#include <random>
#include <thread>
#include <vector>

using flcc::Extent;
using flcc::host::PreprocessSpec;
using flcc::host::Preprocessor;

namespace {

const double kPi = std::acos(-1.0);

using Complex = std::complex<double>;

std::vector<float> random_array(const Extent& e, unsigned seed)
{
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    std::vector<float> x(size_t(flcc::volume(e)));
    // An offset and a ramp, so that the mean and the low frequencies matter.
    for (size_t i = 0; i < x.size(); ++i) x[i] = 2.5f + 0.01f * float(i % 13) + u(rng);
    return x;
}

// The DFT along one axis (sign -1: forward, +1: inverse, unnormalised), term by term.
void dft_axis(std::vector<Complex>& a, const Extent& e, int axis, int sign)
{
    const int64_t n = e[size_t(axis)];
    const int64_t stride = axis == 2 ? 1 : axis == 1 ? e[2] : e[1] * e[2];
    std::vector<Complex> line(static_cast<size_t>(n)), out(static_cast<size_t>(n));
    for (int64_t q = 0; q < (axis == 0 ? 1 : e[0]); ++q)
        for (int64_t r = 0; r < (axis == 1 ? 1 : e[1]); ++r)
            for (int64_t c = 0; c < (axis == 2 ? 1 : e[2]); ++c) {
                const int64_t base = (q * e[1] + r) * e[2] + c;
                for (int64_t j = 0; j < n; ++j) line[size_t(j)] = a[size_t(base + j * stride)];
                for (int64_t k = 0; k < n; ++k) {
                    Complex s = 0;
                    for (int64_t j = 0; j < n; ++j)
                        s += line[size_t(j)] * std::polar(1.0, sign * 2 * kPi * double(j * k % n) / double(n));
                    out[size_t(k)] = s;
                }
                for (int64_t k = 0; k < n; ++k) a[size_t(base + k * stride)] = out[size_t(k)];
            }
}

// The preprocessing of flcc.h in double.
std::vector<double> reference(const std::vector<float>& in, const Extent& e, const PreprocessSpec& s)
{
    std::vector<double> x(in.begin(), in.end());
    if (s.zero_mean) {
        double sum = 0;
        for (double v : x) sum += v;
        for (double& v : x) v -= sum / double(x.size());
    }
    if (s.hann) {
        const auto w = [](int64_t i, int64_t n) {
            return n == 1 ? 1.0 : std::pow(std::sin(kPi * double(i) / double(n - 1)), 2);   // = 0.5 - 0.5 cos
        };
        for (int64_t q = 0; q < e[0]; ++q)
            for (int64_t r = 0; r < e[1]; ++r)
                for (int64_t c = 0; c < e[2]; ++c)
                    x[size_t((q * e[1] + r) * e[2] + c)] *= w(q, e[0]) * w(r, e[1]) * w(c, e[2]);
    }
    if (s.bandpass_low != 0 || s.bandpass_high != 0) {
        std::vector<Complex> a(x.begin(), x.end());
        for (int axis = 0; axis < 3; ++axis) dft_axis(a, e, axis, -1);
        const auto f = [](int64_t k, int64_t n) {
            if (2 * k >= n) k -= n;   // [-n/2, n/2)
            return double(k) / double(n);
        };
        for (int64_t q = 0; q < e[0]; ++q)
            for (int64_t r = 0; r < e[1]; ++r)
                for (int64_t c = 0; c < e[2]; ++c) {
                    const double f2 = std::pow(f(q, e[0]), 2) + std::pow(f(r, e[1]), 2) + std::pow(f(c, e[2]), 2);
                    double g = 1;   // a factor whose sigma is 0 is left out
                    if (s.bandpass_low != 0) g *= std::exp(-2 * kPi * kPi * s.bandpass_low * s.bandpass_low * f2);
                    if (s.bandpass_high != 0) g *= 1 - std::exp(-2 * kPi * kPi * s.bandpass_high * s.bandpass_high * f2);
                    a[size_t((q * e[1] + r) * e[2] + c)] *= g;
                }
        for (int axis = 0; axis < 3; ++axis) dft_axis(a, e, axis, +1);
        for (size_t i = 0; i < x.size(); ++i) x[i] = a[i].real() / double(x.size());
    }
    return x;
}

// The largest difference from the reference, relative to the input's largest magnitude.
double relative_error(const std::vector<float>& got, const std::vector<double>& want, const std::vector<float>& in)
{
    double scale = 0, err = 0;
    for (float v : in) scale = std::max(scale, double(std::fabs(v)));
    for (size_t i = 0; i < got.size(); ++i) err = std::max(err, std::fabs(double(got[i]) - want[i]));
    return err / scale;
}

const Extent kExtents[] = {{1, 7, 9}, {1, 16, 16}, {5, 6, 7}, {1, 1, 12}, {1, 1, 13},
                           {1, 10, 1}, {6, 1, 5}, {4, 8, 6}};

}  // namespace

TEST_CASE("each preprocessing step alone and all together match the float64 reference", "[preprocess]")
{
    PreprocessSpec mean, hann, low, high, band, all;
    mean.zero_mean = true;
    hann.hann = true;
    low.bandpass_low = 1.3;
    high.bandpass_high = 2.5;
    band.bandpass_low = 0.8;
    band.bandpass_high = 3.0;
    all = band;
    all.zero_mean = all.hann = true;
    const std::pair<const char*, PreprocessSpec> specs[] = {
        {"zero_mean", mean}, {"hann", hann},         {"bandpass_low", low},
        {"bandpass_high", high}, {"bandpass both", band}, {"all", all}};
    unsigned seed = 1;
    for (const Extent& e : kExtents)
        for (const auto& [name, s] : specs) {
            INFO(name << ", extent " << e[0] << "x" << e[1] << "x" << e[2]);
            const std::vector<float> in = random_array(e, seed++);
            const Preprocessor p(e, s);
            Preprocessor::Scratch scratch(p);
            std::vector<float> x = in;
            p.apply(x.data(), scratch);
            CHECK(relative_error(x, reference(in, e, s), in) < 1e-5);
            CHECK_FALSE(p.take_fft_failure());
            // Not a no-op: every step changes these arrays.
            CHECK(relative_error(x, std::vector<double>(in.begin(), in.end()), in) > 1e-3);
        }
}

TEST_CASE("the Hann window is numpy.hanning per axis", "[preprocess]")
{
    PreprocessSpec s;
    s.hann = true;
    const Extent e{1, 1, 5};
    const Preprocessor p(e, s);
    Preprocessor::Scratch scratch(p);
    std::vector<float> x(5, 2.f);
    p.apply(x.data(), scratch);
    const float want[5] = {0.f, 1.f, 2.f, 1.f, 0.f};   // 2 * numpy.hanning(5)
    for (int i = 0; i < 5; ++i) CHECK(x[size_t(i)] == Approx(want[i]).margin(1e-7));
    // Axes of one element weigh 1: a single element is left as it is.
    const Preprocessor one({1, 1, 1}, s);
    Preprocessor::Scratch scratch1(one);
    float v = 3.f;
    one.apply(&v, scratch1);
    CHECK(v == 3.f);
}

TEST_CASE("zero_mean of a constant array gives zeros", "[preprocess]")
{
    PreprocessSpec s;
    s.zero_mean = true;
    for (const Extent& e : kExtents) {
        const Preprocessor p(e, s);
        Preprocessor::Scratch scratch(p);
        std::vector<float> x(size_t(flcc::volume(e)), 3.7f);
        p.apply(x.data(), scratch);
        CHECK(std::all_of(x.begin(), x.end(), [](float v) { return v == 0.f; }));
    }
}

TEST_CASE("concurrent calls with their own scratch give the serial results", "[preprocess]")
{
    PreprocessSpec s;
    s.zero_mean = s.hann = true;
    s.bandpass_low = 1.0;
    s.bandpass_high = 4.0;
    const Extent e{1, 24, 20};
    constexpr int kThreads = 4, kArrays = 16;
    const Preprocessor p(e, s, kThreads);
    std::vector<std::vector<float>> in, serial;
    for (int i = 0; i < kArrays; ++i) {
        in.push_back(random_array(e, 100u + unsigned(i)));
        serial.push_back(in.back());
        Preprocessor::Scratch scratch(p);
        p.apply(serial.back().data(), scratch);
    }
    std::vector<std::vector<float>> out = in;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
            Preprocessor::Scratch scratch(p);
            for (int round = 0; round < 50; ++round)
                for (int i = t; i < kArrays; i += kThreads) {
                    std::vector<float> x = in[size_t(i)];
                    p.apply(x.data(), scratch);
                    if (round == 0) out[size_t(i)] = x;
                    else if (x != out[size_t(i)]) out[size_t(i)].clear();   // a run differed
                }
        });
    for (auto& t : threads) t.join();
    for (int i = 0; i < kArrays; ++i) CHECK(out[size_t(i)] == serial[size_t(i)]);
}

TEST_CASE("any() reflects the switches", "[preprocess]")
{
    PreprocessSpec s;
    CHECK_FALSE(s.any());
    s.zero_mean = true;
    CHECK(s.any());
    s = {};
    s.hann = true;
    CHECK(s.any());
    s = {};
    s.bandpass_low = 0.5;
    CHECK(s.any());
    s = {};
    s.bandpass_high = 2;
    CHECK(s.any());
}
