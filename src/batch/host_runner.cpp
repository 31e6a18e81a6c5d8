#include "batch/host_runner.h"

#include "batch/cut.h"
#include "batch/peak_out.h"
#include "host/peaks.h"
#include "plan/error.h"
#include "plan/template.h"

#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>

namespace flcc::batch {

namespace {

// The first failure of a parallel loop's tasks (FLCC_SUCCESS while there is none).
class FirstError {
public:
    void set(flcc_result r)
    {
        int expected = FLCC_SUCCESS;
        if (r != FLCC_SUCCESS) code_.compare_exchange_strong(expected, int(r));
    }
    flcc_result get() const { return static_cast<flcc_result>(code_.load()); }
    bool failed() const { return code_.load() != FLCC_SUCCESS; }

private:
    std::atomic<int> code_{FLCC_SUCCESS};
};

// The most memory the resident executors (one per template) may hold together.
constexpr int64_t kResidentBudget = int64_t(512) << 20;

}  // namespace

HostRunner::HostRunner(const Spec& spec) : spec_(spec), pool_(spec.threads) {}

flcc_result HostRunner::make(const Spec& spec, const Solver& solver, std::unique_ptr<Executor> first,
                             std::unique_ptr<HostRunner>& out)
{
    std::unique_ptr<HostRunner> r(new HostRunner(spec));
    r->method_ = solver.name();
    const Problem& p = spec.pair;
    const int64_t image_elems = p.image_elems(), templ_elems = p.templ_elems(),
                  out_elems = p.out_elems();
    host::PreprocessSpec pre;
    pre.zero_mean = spec.zero_mean;
    pre.hann = spec.hann;
    pre.bandpass_low = spec.bandpass_low;
    pre.bandpass_high = spec.bandpass_high;
    if (pre.any()) {
        r->image_pre_ = std::make_unique<host::Preprocessor>(p.image, pre, spec.threads);
        r->templ_pre_ = std::make_unique<host::Preprocessor>(p.templ, pre, spec.threads);
    }
    if (spec.refine == FLCC_REFINE_UPSAMPLED && spec.peaks > 0) {
        r->refiner_ = std::make_unique<host::FullCorrelation>(p.image, p.templ, spec.threads);
        if (p.op == Op::lcorr) {
            r->taps_ = host::AlignedArray<float>(int64_t(spec.templates.count) * templ_elems);
            r->ones_ = host::AlignedArray<float>(templ_elems);
            std::fill(r->ones_.data(), r->ones_.data() + templ_elems, 1.f);
        }
    }
    r->workers_.resize(size_t(r->pool_.size()));
    const std::unique_ptr<Candidate> candidate = solver.plan(p);
    if (candidate == nullptr)
        return fail(FLCC_INTERNAL_ERROR, "%s: no longer applies to %s", solver.name(), p.key().c_str());
    // Resident executors: one per template, within the memory budget.
    const int64_t per_executor = first->memory_bytes();
    const bool resident = !spec.best && spec.templates.count > 1 &&
                          per_executor * spec.templates.count <= kResidentBudget;
    if (resident) {
        r->resident_.resize(size_t(spec.templates.count));
        for (size_t t = 0; t < r->resident_.size(); ++t) {
            if (t == 0) {
                r->resident_[t].executor = std::move(first);
            } else {
                const flcc_result made = candidate->create(r->resident_[t].executor);
                if (made != FLCC_SUCCESS) return made;
            }
        }
    }
    for (size_t i = 0; i < r->workers_.size(); ++i) {
        Worker& w = r->workers_[i];
        if (!resident) {
            if (i == 0) {
                w.slot.executor = std::move(first);
            } else {
                const flcc_result made = candidate->create(w.slot.executor);
                if (made != FLCC_SUCCESS) return made;
            }
        }
        w.map = host::AlignedArray<float>(out_elems);
        if (spec.best) w.best = host::AlignedArray<float>(2 * out_elems);
        if (spec.op == FLCC_XCORR) w.reversed = host::AlignedArray<float>(templ_elems);
        if (r->image_pre_ != nullptr) {
            w.image_scratch = std::make_unique<host::Preprocessor::Scratch>(*r->image_pre_);
            w.templ_scratch = std::make_unique<host::Preprocessor::Scratch>(*r->templ_pre_);
        }
        if (r->refiner_ != nullptr) {
            const bool lcc = p.op == Op::lcorr;
            const host::UpsampledGrid g = host::grid_shape(r->refiner_->box(), spec.upsample);
            w.full = std::make_unique<host::FullCorrelation::Scratch>(*r->refiner_);
            w.spectrum = host::AlignedArray<float>(r->refiner_->spectrum_floats());
            for (int m = 0; m < (lcc ? 3 : 1); ++m) w.grid[m].resize(size_t(g.G[0] * g.G[1] * g.G[2]));
            if (lcc) {
                w.squares_spectrum = host::AlignedArray<float>(r->refiner_->spectrum_floats());
                w.centred = host::AlignedArray<float>(image_elems);
                w.squared = host::AlignedArray<float>(image_elems);
            }
            w.peak_scratch.resize(
                size_t(host::upsample_scratch_doubles(r->refiner_->box(), spec.upsample)));
        }
    }
    if (r->refiner_ != nullptr) {
        const int64_t floats = r->refiner_->spectrum_floats();
        r->taps_spectra_ = host::AlignedArray<float>(int64_t(spec.templates.count) * floats);
        if (p.op == Op::lcorr) {
            r->ones_spectrum_ = host::AlignedArray<float>(floats);
            r->refiner_->forward(r->ones_.data(), p.templ, r->ones_spectrum_.data(),
                                 *r->workers_[0].full);
        }
    }
    r->images_ = host::AlignedArray<float>(int64_t(spec.images.count) * image_elems);
    r->templates_ = host::AlignedArray<float>(int64_t(spec.templates.count) * templ_elems);
    r->constant_.assign(size_t(spec.templates.count), 0);
    out = std::move(r);
    return FLCC_SUCCESS;
}

// Cuts, converts and preprocesses every template of a set; for cross-correlation reverses
// them (the solver convolves). Remembers the set as given, so that an equal one is not
// prepared again.
flcc_result HostRunner::prepare_templates(const void* set)
{
    const Source& s = spec_.templates;
    const size_t bytes = size_t(s.frame_bytes());
    if (templ_ready_ && std::memcmp(templ_input_.data(), set, bytes) == 0) return FLCC_SUCCESS;
    templ_ready_ = false;
    const int64_t n = spec_.pair.templ_elems();
    std::atomic<int> bad{-1};
    pool_.parallel_for(s.count, [&](int64_t t, int thread) {
        Worker& w = workers_[size_t(thread)];
        float* dst = templates_.data() + t * n;
        if (!cut(s, set, int(t), dst) && spec_.check_finite) bad.store(int(t));
        if (templ_pre_ != nullptr) templ_pre_->apply(dst, *w.templ_scratch);
        constant_[size_t(t)] = spec_.pair.op == Op::lcorr && template_is_constant(dst, n);
        if (taps_.size() > 0) {   // the LCC numerator's taps: the zero-mean template, reversed
            double sum = 0;
            for (int64_t i = 0; i < n; ++i) sum += dst[i];
            const double mean = sum / double(n);
            float* taps = taps_.data() + t * n;
            for (int64_t i = 0; i < n; ++i) taps[n - 1 - i] = float(double(dst[i]) - mean);
        }
        if (spec_.op == FLCC_XCORR) {
            flipped_template(dst, n, w.reversed.data());
            std::memcpy(dst, w.reversed.data(), size_t(n) * sizeof(float));
        }
        // UPSAMPLED: the spectrum of the taps the map convolves with (LCC: its numerator's).
        if (refiner_ != nullptr)
            refiner_->forward(taps_.size() > 0 ? taps_.data() + t * n : dst, spec_.pair.templ,
                              taps_spectra_.data() + t * refiner_->spectrum_floats(), *w.full);
    });
    if (templ_pre_ != nullptr && templ_pre_->take_fft_failure())
        return fail(FLCC_ALLOC_FAILED, "templs: the band-pass transform ran out of memory");
    if (bad.load() >= 0)
        return fail(FLCC_NONFINITE_INPUT, "templs: template %d holds NaN or Inf", bad.load());
    templ_input_.assign(static_cast<const unsigned char*>(set),
                        static_cast<const unsigned char*>(set) + bytes);
    templ_ready_ = true;
    ++generation_;
    return FLCC_SUCCESS;
}

flcc_result HostRunner::prepare_images(const void* frame)
{
    const Source& s = spec_.images;
    const int64_t n = spec_.pair.image_elems();
    std::atomic<int> bad{-1};
    pool_.parallel_for(s.count, [&](int64_t i, int thread) {
        float* dst = images_.data() + i * n;
        if (!cut(s, frame, int(i), dst) && spec_.check_finite) bad.store(int(i));
        if (image_pre_ != nullptr) image_pre_->apply(dst, *workers_[size_t(thread)].image_scratch);
    });
    if (image_pre_ != nullptr && image_pre_->take_fft_failure())
        return fail(FLCC_ALLOC_FAILED, "images: the band-pass transform ran out of memory");
    if (bad.load() >= 0)
        return fail(FLCC_NONFINITE_INPUT, "images: image %d holds NaN or Inf", bad.load());
    return FLCC_SUCCESS;
}

// One pair's map, by the slot's executor (its template prepared when it holds another).
flcc_result HostRunner::correlate(Slot& slot, int image, int templ, float* map)
{
    if (slot.loaded != templ || slot.loaded_generation != generation_) {
        slot.loaded = -1;
        const int64_t n = spec_.pair.templ_elems();
        const flcc_result r = slot.executor->set_template(templates_.data() + int64_t(templ) * n,
                                                          constant_[size_t(templ)]);
        if (r != FLCC_SUCCESS) return r;
        slot.loaded = templ;
        slot.loaded_generation = generation_;
    }
    return slot.executor->execute(images_.data() + int64_t(image) * spec_.pair.image_elems(), map,
                                  1, MemorySpace::host);
}

// UPSAMPLED: the map's value is evaluated off the integer grid from the DFT interpolations of
// the pair's full-region correlations, which are band-limited: the map itself for convolution
// and cross-correlation; for LCC its numerator (the image with the zero-mean template) over the
// square root of the image's windowed variance, from its window sums of values and squares (the
// image centred first, which changes neither). The highest grid point, refined by the parabola
// through it and its two grid neighbours along each axis, is the peak.
void HostRunner::refine(Worker& w, int image, int templ, host::MapPeak& peak) const
{
    const Problem& p = spec_.pair;
    const bool lcc = p.op == Op::lcorr;
    const int64_t n = p.templ_elems(), in = p.image_elems();
    const float* img = images_.data() + int64_t(image) * in;
    const float* taps = taps_spectra_.data() + int64_t(templ) * refiner_->spectrum_floats();
    const Extent& box = refiner_->box();
    // Output index i is full-region index i + (T - 1) - pad.
    int64_t at[3];
    for (int a = 0; a < 3; ++a) at[a] = peak.at[a] + p.templ[a] - 1 - p.pad[a];
    const host::UpsampledGrid g = host::grid_shape(box, spec_.upsample);
    const int64_t points = g.G[0] * g.G[1] * g.G[2];
    // The maps are interpolated at one place: the kernel matrices are made for the first alone.
    const auto values = [&](const float* a, const float* b, std::vector<double>& out, bool first) {
        const float* full = refiner_->product_inverse(a, b, *w.full);
        return host::upsampled_values(full, box, at, spec_.upsample, w.peak_scratch.data(),
                                      int64_t(w.peak_scratch.size()), out.data(), !first);
    };
    double* v = w.grid[0].data();
    if (!lcc) {
        refiner_->forward(img, p.image, w.spectrum.data(), *w.full);
        if (!values(w.spectrum.data(), taps, w.grid[0], true)) return;
    } else {
        double sum = 0;
        for (int64_t i = 0; i < in; ++i) sum += img[i];
        const float mean = float(sum / double(in));
        for (int64_t i = 0; i < in; ++i) {
            w.centred.data()[i] = img[i] - mean;
            w.squared.data()[i] = w.centred.data()[i] * w.centred.data()[i];
        }
        refiner_->forward(w.centred.data(), p.image, w.spectrum.data(), *w.full);
        refiner_->forward(w.squared.data(), p.image, w.squares_spectrum.data(), *w.full);
        if (!values(w.spectrum.data(), taps, w.grid[0], true) ||
            !values(w.spectrum.data(), ones_spectrum_.data(), w.grid[1], false) ||
            !values(w.squares_spectrum.data(), ones_spectrum_.data(), w.grid[2], false))
            return;
        const double* s1 = w.grid[1].data();
        const double* s2 = w.grid[2].data();
        const double scale = 1.0 / double(volume(box));   // the maps come scaled by the box
        for (int64_t i = 0; i < points; ++i) {
            const double var = scale * (s2[i] - scale * s1[i] * s1[i] / double(n));
            v[i] = var > 0 ? v[i] / std::sqrt(var) : 0.0;
        }
    }
    const int64_t best = host::upsampled_grid_argmax(g, v);
    const int64_t j[3] = {best / (g.G[1] * g.G[2]), best / g.G[2] % g.G[1], best % g.G[2]};
    for (int a = 0; a < 3; ++a) {
        double offset = double(host::grid_offset(g, best, a));
        if (j[a] > 0 && j[a] < g.G[a] - 1) {
            const int64_t stride = a == 0 ? g.G[1] * g.G[2] : a == 1 ? g.G[2] : 1;
            const double lo = v[best - stride], mid = v[best], hi = v[best + stride];
            const double den = lo - 2 * mid + hi;
            if (den < 0) offset += 0.5 * (lo - hi) / den;
        }
        peak.refined[a] = double(peak.at[a]) + offset / spec_.upsample;
    }
}

void HostRunner::find(Worker& w, const float* map, const float* index, int image, int templ,
                      flcc_peak* out) const
{
    const Problem& p = spec_.pair;
    host::PeakSearch search;
    search.k = spec_.peaks;
    search.exclusion = spec_.exclusion;
    // UPSAMPLED refines on the full correlation (refine), not on the plan's map.
    search.refine = refiner_ != nullptr ? host::Refine::none : refine_of(spec_.refine);
    search.fit = spec_.fit_size;
    search.upsample = spec_.upsample;
    // A flat map's peak: zero displacement (output index = pad) where the region holds it.
    for (int a = 0; a < 3; ++a) search.flat_at[a] = p.pad[a] < p.out[a] ? p.pad[a] : 0;
    host::MapPeak found[64];
    host::find_peaks(map, p.out, search, found);
    // A flat map's peak (quality 0) stays where the rule puts it.
    if (refiner_ != nullptr)
        for (int j = 0; j < spec_.peaks; ++j)
            if (found[j].at[0] >= 0 && found[j].quality != 0)
                refine(w, image, index != nullptr ? int(index[(found[j].at[0] * p.out[1] +
                                                               found[j].at[1]) * p.out[2] +
                                                              found[j].at[2]])
                                                  : templ,
                       found[j]);
    for (int j = 0; j < spec_.peaks; ++j) {
        const host::MapPeak& m = found[j];
        int t = templ;
        if (index != nullptr && m.at[0] >= 0)
            t = int(index[(m.at[0] * p.out[1] + m.at[1]) * p.out[2] + m.at[2]]);
        write_peak(m, p, t, out[j]);
    }
}

flcc_result HostRunner::run_pairs(float* maps, flcc_peak* peaks)
{
    const int64_t out_elems = spec_.pair.out_elems();
    FirstError error;
    const auto run_pair = [&](Worker& w, int64_t pair) {
        const int t = spec_.templ_of(int(pair));
        float* map = spec_.keep_maps ? maps + pair * out_elems : w.map.data();
        const flcc_result r = correlate(slot_for(w, t), spec_.image_of(int(pair)), t, map);
        if (r != FLCC_SUCCESS) return error.set(r);
        if (spec_.peaks > 0)
            find(w, map, nullptr, spec_.image_of(int(pair)), t, peaks + pair * spec_.peaks);
    };
    if (resident_.empty()) {
        pool_.parallel_for(spec_.pairs, [&](int64_t pair, int thread) {
            if (!error.failed()) run_pair(workers_[size_t(thread)], pair);
        });
        return error.get();
    }
    // One task per template: its pairs on its resident executor.
    const int templates = spec_.templates.count;
    pool_.parallel_for(templates, [&](int64_t t, int thread) {
        Worker& w = workers_[size_t(thread)];
        if (spec_.pairing == FLCC_ALL_PAIRS) {
            for (int i = 0; i < spec_.images.count && !error.failed(); ++i)
                run_pair(w, int64_t(i) * templates + t);
            return;
        }
        const int64_t per = spec_.pairs / templates;   // pairs of one template, contiguous
        for (int64_t p = t * per; p < (t + 1) * per && !error.failed(); ++p) run_pair(w, p);
    });
    return error.get();
}

// best_over_templates: per image, every template's map folded into the best value and its
// template index (the lower index on ties), then the peaks of that map.
flcc_result HostRunner::run_best(float* maps, flcc_peak* peaks)
{
    const int64_t out_elems = spec_.pair.out_elems();
    FirstError error;
    pool_.parallel_for(spec_.images.count, [&](int64_t image, int thread) {
        if (error.failed()) return;
        Worker& w = workers_[size_t(thread)];
        float* best = spec_.keep_maps ? maps + image * 2 * out_elems : w.best.data();
        float* index = best + out_elems;
        for (int t = 0; t < spec_.templates.count; ++t) {
            float* map = t == 0 ? best : w.map.data();
            const flcc_result r = correlate(w.slot, int(image), t, map);
            if (r != FLCC_SUCCESS) return error.set(r);
            if (t == 0) {
                std::fill(index, index + out_elems, 0.f);
                continue;
            }
            for (int64_t i = 0; i < out_elems; ++i)
                if (map[i] > best[i]) {
                    best[i] = map[i];
                    index[i] = float(t);
                }
        }
        if (spec_.peaks > 0) find(w, best, index, int(image), 0, peaks + image * spec_.peaks);
    });
    return error.get();
}

flcc_result HostRunner::run(const void* images, const void* templs, float* maps, flcc_peak* peaks,
                            int frames)
{
    const Source &is = spec_.images, &ts = spec_.templates;
    for (int f = 0; f < frames; ++f) {
        if (templs != nullptr && (f == 0 || spec_.templ_per_frame)) {
            const int set = spec_.templ_per_frame ? f : 0;
            const flcc_result r =
                prepare_templates(static_cast<const unsigned char*>(templs) + set * ts.frame_bytes());
            if (r != FLCC_SUCCESS) return r;
        }
        flcc_result r =
            prepare_images(static_cast<const unsigned char*>(images) + f * is.frame_bytes());
        if (r != FLCC_SUCCESS) return r;
        float* frame_maps = maps == nullptr ? nullptr : maps + f * spec_.map_floats_per_frame();
        flcc_peak* frame_peaks =
            peaks == nullptr ? nullptr : peaks + int64_t(f) * spec_.maps_per_frame() * spec_.peaks;
        r = spec_.best ? run_best(frame_maps, frame_peaks) : run_pairs(frame_maps, frame_peaks);
        if (r != FLCC_SUCCESS) return r;
        if (refiner_ != nullptr && refiner_->take_fft_failure())
            return fail(FLCC_ALLOC_FAILED, "the refinement transform ran out of memory");
    }
    return FLCC_SUCCESS;
}

}  // namespace flcc::batch
