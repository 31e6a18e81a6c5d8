#include "synthetic.h"

#include "input_error.h"
#include "roi_grid.h"
#include "tiff_io.h"

#include <fftw3.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <thread>
#include <vector>

namespace registration {

namespace {

constexpr double pi = 3.14159265358979323846;

using Complex = std::complex<float>;

struct FftwFree {
    void operator()(void* p) const { fftwf_free(p); }
};
template <typename T>
using FftwArray = std::unique_ptr<T[], FftwFree>;

template <typename T>
FftwArray<T> fftw_array(size_t n)
{
    auto* p = static_cast<T*>(fftwf_malloc(n * sizeof(T)));
    if (!p) throw std::bad_alloc();
    return FftwArray<T>(p);
}

// Transforms of one L x L real pattern: forward to the half spectrum, and back.
class PatternTransform {
public:
    explicit PatternTransform(int size)
        : size_(size), real_(fftw_array<float>(size_t(size) * size)),
          spectrum_(fftw_array<fftwf_complex>(size_t(size) * (size / 2 + 1)))
    {
        forward_ = fftwf_plan_dft_r2c_2d(size, size, real_.get(), spectrum_.get(), FFTW_ESTIMATE);
        backward_ = fftwf_plan_dft_c2r_2d(size, size, spectrum_.get(), real_.get(), FFTW_ESTIMATE);
        if (!forward_ || !backward_) throw std::bad_alloc();
    }
    ~PatternTransform()
    {
        fftwf_destroy_plan(forward_);
        fftwf_destroy_plan(backward_);
    }
    PatternTransform(const PatternTransform&) = delete;
    PatternTransform& operator=(const PatternTransform&) = delete;

    int size() const { return size_; }
    size_t spectrum_size() const { return size_t(size_) * size_t(size_ / 2 + 1); }
    float* real() { return real_.get(); }
    Complex* spectrum() { return reinterpret_cast<Complex*>(spectrum_.get()); }

    std::vector<Complex> forward(const std::vector<float>& pattern)
    {
        std::copy(pattern.begin(), pattern.end(), real_.get());
        fftwf_execute(forward_);
        return std::vector<Complex>(spectrum(), spectrum() + spectrum_size());
    }

    // The pattern whose spectrum is `spectrum`, moved by (dy, dx) pixels (down / right):
    // spectrum times exp(-2 pi i (ky dy + kx dx) / L), normalised. The Nyquist row and column
    // are dropped: a fractional shift of them has no real-valued meaning (the patterns hold
    // nothing there).
    const float* shifted(const std::vector<Complex>& spectrum_in, double dy, double dx)
    {
        const int n = size_, half = n / 2 + 1;
        const float scale = 1.0f / float(n * n);
        Complex* out = spectrum();
        for (int ky = 0; ky < n; ++ky) {
            const int fy = ky <= n / 2 ? ky : ky - n;
            const double phase_y = -2 * pi * fy * dy / n;
            for (int kx = 0; kx < half; ++kx) {
                const size_t i = size_t(ky) * half + kx;
                if ((n % 2 == 0) && (ky == n / 2 || kx == n / 2)) {
                    out[i] = 0;
                    continue;
                }
                const double phase = phase_y - 2 * pi * kx * dx / n;
                out[i] = spectrum_in[i] * Complex(float(std::cos(phase)) * scale, float(std::sin(phase)) * scale);
            }
        }
        fftwf_execute(backward_);
        return real_.get();
    }

private:
    int size_;
    FftwArray<float> real_;
    FftwArray<fftwf_complex> spectrum_;
    fftwf_plan forward_ = nullptr, backward_ = nullptr;
};

// A smooth field in [-1, 1]: a translation plus strain-like linear terms, with coefficients that
// drift along the frames (EBSD-like), or a uniform flow plus a vortex (PIV-like); ny, nx are the
// position in the frame scaled to [-1, 1], phase the frame's place in the series.
struct DisplacementField {
    double coefficients[12];

    explicit DisplacementField(std::mt19937_64& random)
    {
        std::uniform_real_distribution<double> angle(0, 2 * pi);
        for (double& c : coefficients) c = angle(random);
    }

    void at(SyntheticKind kind, double phase, double ny, double nx, double& uy, double& ux) const
    {
        const double* c = coefficients;
        const double t = 2 * pi * phase;
        if (kind == SyntheticKind::ebsd) {
            // Each term is at most its weight: |u| <= 0.5 + 0.25 + 0.25 = 1 per axis.
            uy = 0.5 * std::sin(t + c[0]) + 0.25 * ny * std::sin(0.7 * t + c[1]) + 0.25 * nx * std::cos(1.1 * t + c[2]);
            ux = 0.5 * std::cos(1.3 * t + c[3]) + 0.25 * ny * std::cos(0.9 * t + c[4]) + 0.25 * nx * std::sin(0.6 * t + c[5]);
            return;
        }
        const double cy = 0.4 * std::sin(t + c[6]), cx = 0.4 * std::cos(t + c[7]);   // vortex centre
        const double ry = ny - cy, rx = nx - cx;
        const double swirl = 0.5 * std::sin(0.8 * t + c[8]) * std::exp(-(ry * ry + rx * rx) / 0.5);
        uy = 0.4 * std::sin(t + c[9]) + swirl * rx;
        ux = 0.4 * std::cos(t + c[10]) - swirl * ry;
    }
};

// An L x L periodic pattern of unit standard deviation around 0 (EBSD-like: band-limited random
// field; PIV-like: particles, scaled so that the background sits at -1).
std::vector<float> draw_pattern(SyntheticKind kind, PatternTransform& transform, double feature_size,
                                std::mt19937_64& random)
{
    const int n = transform.size();
    std::vector<float> pattern(size_t(n) * n, 0.0f);
    if (kind == SyntheticKind::ebsd) {
        // White noise times the Gaussian spectrum exp(-pi^2 l^2 |f|^2): a field whose
        // autocorrelation is a Gaussian of standard deviation l (the feature size).
        std::normal_distribution<float> normal;
        for (float& v : pattern) v = normal(random);
        std::vector<Complex> spectrum = transform.forward(pattern);
        const int half = n / 2 + 1;
        for (int ky = 0; ky < n; ++ky) {
            const double fy = double(ky <= n / 2 ? ky : ky - n) / n;
            for (int kx = 0; kx < half; ++kx) {
                const double fx = double(kx) / n;
                spectrum[size_t(ky) * half + kx] *= float(std::exp(-pi * pi * feature_size * feature_size * (fy * fy + fx * fx)));
            }
        }
        spectrum[0] = 0;
        const float* field = transform.shifted(spectrum, 0, 0);
        std::copy(field, field + pattern.size(), pattern.begin());
    } else {
        // Gaussian particles of sigma = diameter / 4 (the e^-2 diameter), one per 40 pixels,
        // wrapped around the period, brightness uniform in [0.5, 1].
        const double sigma = feature_size / 4;
        const int count = std::max(1, n * n / 40);
        const int reach = int(std::ceil(4 * sigma));
        std::uniform_real_distribution<double> position(0, n), brightness(0.5, 1.0);
        for (int p = 0; p < count; ++p) {
            const double py = position(random), px = position(random), b = brightness(random);
            const int iy = int(py), ix = int(px);
            for (int y = iy - reach; y <= iy + reach; ++y) {
                for (int x = ix - reach; x <= ix + reach; ++x) {
                    const double d2 = (y - py) * (y - py) + (x - px) * (x - px);
                    pattern[size_t((y % n + n) % n) * n + size_t((x % n + n) % n)] += float(b * std::exp(-d2 / (2 * sigma * sigma)));
                }
            }
        }
    }
    double sum = 0, sum2 = 0;
    for (float v : pattern) {
        sum += v;
        sum2 += double(v) * v;
    }
    const double mean = sum / pattern.size();
    const double sd = std::sqrt(std::max(sum2 / pattern.size() - mean * mean, 1e-30));
    // EBSD-like: zero mean, unit deviation. PIV-like: the background (0) maps to -1.
    const double offset = kind == SyntheticKind::ebsd ? mean : 0.0;
    for (float& v : pattern) v = float((v - offset) / sd) - (kind == SyntheticKind::piv ? 1.0f : 0.0f);
    return pattern;
}

// Photon counts of one frame: mean intensity `photons` at pattern value 0, `contrast` per unit
// of the pattern, Poisson noise, stored as 16-bit counts or (8-bit) scaled so that the mean
// intensity is 100.
class FramePainter {
public:
    FramePainter(const SyntheticSpec& spec, double contrast)
        : spec_(spec), contrast_(contrast), frame_(size_t(spec.height) * spec.width)
    {
    }

    void clear(std::mt19937_64& random)
    {
        for (size_t i = 0; i < frame_.size(); ++i) frame_[i] = store(1.0, random);
    }

    // Copies the centre of an L x L pattern into the subregion at (y0, x0).
    void paint(const float* pattern, int pattern_size, int pad, int y0, int x0, std::mt19937_64& random)
    {
        for (int y = 0; y < spec_.roi_size; ++y) {
            for (int x = 0; x < spec_.roi_size; ++x) {
                const double level = std::max(0.0, 1.0 + contrast_ * pattern[size_t(y + pad) * pattern_size + size_t(x + pad)]);
                frame_[size_t(y0 + y) * spec_.width + size_t(x0 + x)] = store(level, random);
            }
        }
    }

    void write(TiffWriter& writer) const
    {
        if (spec_.bits == 16) {
            writer.write_uint16(frame_.data(), spec_.height, spec_.width);
            return;
        }
        std::vector<uint8_t> narrow(frame_.begin(), frame_.end());
        writer.write_uint8(narrow.data(), spec_.height, spec_.width);
    }

private:
    uint16_t store(double level, std::mt19937_64& random)
    {
        const double full_scale = spec_.bits == 16 ? 65535.0 : 255.0;
        const double mean_photons = spec_.photons > 0 ? spec_.photons : 1000.0;
        double value = level * mean_photons;
        if (spec_.photons > 0) value = double(std::poisson_distribution<long>(value)(random));
        if (spec_.bits == 8) value *= 100.0 / mean_photons;
        return uint16_t(std::clamp(std::lround(value), 0L, long(full_scale)));
    }

    const SyntheticSpec& spec_;
    double contrast_;
    std::vector<uint16_t> frame_;
};

void make_folder(const std::string& path)
{
    if (::mkdir(path.c_str(), 0777) != 0 && errno != EEXIST) {
        throw InputError(path + ": cannot create the folder: " + std::strerror(errno));
    }
}

// FFT-friendly size (2^a 3^b 5^c) of at least n.
int smooth_size(int n)
{
    for (int m = std::max(n, 1);; ++m) {
        int r = m;
        for (int p : {2, 3, 5}) {
            while (r % p == 0) r /= p;
        }
        if (r == 1) return m;
    }
}

class TruthFile {
public:
    explicit TruthFile(const std::string& path) : path_(path), out_(path)
    {
        if (!out_) throw InputError(path + ": cannot open for writing: " + std::strerror(errno));
        out_ << "frame,roi,y,x,dy,dx\n";
    }
    void add(long frame, int roi, double y, double x, double dy, double dx)
    {
        char line[160];
        std::snprintf(line, sizeof line, "%ld,%d,%.1f,%.1f,%.6f,%.6f\n", frame, roi, y, x, dy, dx);
        out_ << line;
    }
    void close()
    {
        out_.close();
        if (!out_) throw InputError(path_ + ": cannot write");
    }

private:
    std::string path_;
    std::ofstream out_;
};

}  // namespace

void write_synthetic_set(const SyntheticSpec& spec)
{
    if (spec.bits != 8 && spec.bits != 16) throw InputError("synthetic set: bits must be 8 or 16");
    if (spec.frames < 1 || (spec.kind == SyntheticKind::piv && spec.frames % 2 != 0)) {
        throw InputError("synthetic set: PIV-like sets need an even number of frames (pairs), others at least 1");
    }
    if (spec.roi_step < spec.roi_size) {
        throw InputError("synthetic set: --roi-step must be at least --roi-size (each subregion is drawn on its own)");
    }
    const std::vector<Subregion> subregions =
        grid_subregions(spec.height, spec.width, spec.roi_size, spec.roi_step, spec.roi_margin);
    if (subregions.empty()) throw InputError("synthetic set: no subregion fits in the frame");

    const int pad = int(std::ceil(spec.max_displacement)) + 4;
    PatternTransform transform(smooth_size(spec.roi_size + 2 * pad));
    const int period = transform.size();
    const double contrast = spec.kind == SyntheticKind::ebsd ? 0.3 : 0.45;
    std::mt19937_64 random(spec.seed);
    const DisplacementField field(random);
    auto displacement = [&](long frame_in_series, long series_length, const Subregion& s, double& dy, double& dx) {
        const double centre = (spec.roi_size - 1) / 2.0;
        const double ny = 2 * (s.y + centre) / std::max(spec.height - 1, 1) - 1;
        const double nx = 2 * (s.x + centre) / std::max(spec.width - 1, 1) - 1;
        const double phase = series_length > 1 ? double(frame_in_series) / double(series_length - 1) : 0.0;
        field.at(spec.kind, phase, ny, nx, dy, dx);
        dy *= spec.max_displacement;
        dx *= spec.max_displacement;
    };

    make_folder(spec.folder);
    const std::string frames_folder = spec.folder + "/frames";
    if (!spec.stack) make_folder(frames_folder);
    std::ofstream list(spec.folder + "/frames.txt");
    if (!list) throw InputError(spec.folder + "/frames.txt: cannot open for writing");
    std::unique_ptr<TiffWriter> stack;
    if (spec.stack) {
        stack = std::make_unique<TiffWriter>(spec.folder + "/frames.tif");
        list << "frames.tif\n";
    }
    TruthFile truth(spec.folder + "/truth.csv");
    std::unique_ptr<TruthFile> truth_sequence;
    if (spec.kind == SyntheticKind::ebsd) truth_sequence = std::make_unique<TruthFile>(spec.folder + "/truth_sequence.csv");

    FramePainter painter(spec, contrast);
    auto write_frame = [&](int index, const FramePainter& p) {
        if (stack) {
            p.write(*stack);
            return;
        }
        char name[32];
        std::snprintf(name, sizeof name, "frame_%05d.tif", index);
        TiffWriter writer(frames_folder + "/" + name);
        p.write(writer);
        writer.close();
        list << "frames/" << name << "\n";
    };

    // The patterns' spectra: EBSD-like, one per subregion for the whole set; PIV-like, one per
    // subregion per pair.
    std::vector<std::vector<Complex>> spectra(subregions.size());
    auto draw_spectra = [&] {
        for (auto& spectrum : spectra) spectrum = transform.forward(draw_pattern(spec.kind, transform, spec.feature_size, random));
    };
    const double centre = (spec.roi_size - 1) / 2.0;

    if (spec.kind == SyntheticKind::ebsd) {
        draw_spectra();
        painter.clear(random);
        for (size_t r = 0; r < subregions.size(); ++r) {
            painter.paint(transform.shifted(spectra[r], 0, 0), period, pad, subregions[r].y, subregions[r].x, random);
        }
        TiffWriter reference(spec.folder + "/reference.tif");
        painter.write(reference);
        reference.close();
        // The frames are independent (each draws its noise from a generator seeded by the set's
        // seed and its index), so a batch of them is painted on the workers' own transforms and
        // painters at once, then written in order.
        const int workers = std::max(1, std::min(spec.threads > 0 ? spec.threads : int(std::thread::hardware_concurrency()),
                                                 spec.frames));
        std::vector<std::unique_ptr<PatternTransform>> transforms;   // planned here: FFTW's planner is not thread-safe
        std::vector<std::unique_ptr<FramePainter>> painters;
        for (int w = 0; w < workers; ++w) {
            transforms.push_back(std::make_unique<PatternTransform>(period));
            painters.push_back(std::make_unique<FramePainter>(spec, contrast));
        }
        auto paint_frame = [&](int f, int w) {
            std::seed_seq seq{spec.seed, unsigned(f), 0xEB5Du};
            std::mt19937_64 noise(seq);
            painters[size_t(w)]->clear(noise);
            for (size_t r = 0; r < subregions.size(); ++r) {
                const Subregion& s = subregions[r];
                double dy = 0, dx = 0;
                displacement(f, spec.frames, s, dy, dx);
                painters[size_t(w)]->paint(transforms[size_t(w)]->shifted(spectra[r], dy, dx), period, pad, s.y, s.x,
                                           noise);
            }
        };
        std::vector<double> previous(2 * subregions.size());
        for (int base = 0; base < spec.frames; base += workers) {
            const int count = std::min(workers, spec.frames - base);
            std::vector<std::thread> threads;
            for (int w = 1; w < count; ++w) threads.emplace_back(paint_frame, base + w, w);
            paint_frame(base, 0);
            for (std::thread& t : threads) t.join();
            for (int w = 0; w < count; ++w) {
                const int f = base + w;
                for (size_t r = 0; r < subregions.size(); ++r) {
                    const Subregion& s = subregions[r];
                    double dy = 0, dx = 0;
                    displacement(f, spec.frames, s, dy, dx);
                    truth.add(f, int(r), s.y + centre, s.x + centre, dy, dx);
                    if (f > 0) truth_sequence->add(f, int(r), s.y + centre, s.x + centre, dy - previous[2 * r], dx - previous[2 * r + 1]);
                    previous[2 * r] = dy;
                    previous[2 * r + 1] = dx;
                }
                write_frame(f, *painters[size_t(w)]);
            }
        }
    } else {
        const int pairs = spec.frames / 2;
        for (int k = 0; k < pairs; ++k) {
            draw_spectra();
            painter.clear(random);
            for (size_t r = 0; r < subregions.size(); ++r) {
                painter.paint(transform.shifted(spectra[r], 0, 0), period, pad, subregions[r].y, subregions[r].x, random);
            }
            write_frame(2 * k, painter);
            painter.clear(random);
            for (size_t r = 0; r < subregions.size(); ++r) {
                const Subregion& s = subregions[r];
                double dy = 0, dx = 0;
                displacement(k, pairs, s, dy, dx);
                painter.paint(transform.shifted(spectra[r], dy, dx), period, pad, s.y, s.x, random);
                truth.add(2 * k + 1, int(r), s.y + centre, s.x + centre, dy, dx);
            }
            write_frame(2 * k + 1, painter);
        }
    }
    if (stack) stack->close();
    truth.close();
    if (truth_sequence) truth_sequence->close();
    list.close();
    if (!list) throw InputError(spec.folder + "/frames.txt: cannot write");
}

}  // namespace registration
