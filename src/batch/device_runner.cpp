#include "batch/device_runner.h"

#include "batch/peak_out.h"
#include "geometry/fft_size.h"
#include "plan/backend.h"
#include "plan/error.h"
#include "plan/memory.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace flcc::batch {

namespace {

// FLCC_ESTIMATE's thresholds between the engines (see estimated_kind): they lie between the
// workloads each engine runs faster (docs/performance.md, "Batches on the GPU", gives them in
// products per box element).
constexpr double kDirectProductsPerBoxElement = 512;
constexpr double kDirectProductsPerBlockBoxElement = 64;

EngineSource engine_source(const Source& s)
{
    EngineSource e;
    e.count = s.count;
    e.type = s.type;
    e.cut = s.cut;
    e.frame = s.frame;
    e.origins = s.origins;
    return e;
}

}  // namespace

// Turns the engine's peaks of a frame into flcc_peak, refining each from its patch.
class DeviceRunner::Sink final : public BatchEngine::Sink {
public:
    Sink(const DeviceRunner& r, flcc_peak* out) : r_(r), out_(out) {}
    flcc_result frame(int f, const EnginePeak* peaks, const float* patches) override
    {
        const Spec& s = r_.spec_;
        if (s.peaks == 0) return FLCC_SUCCESS;
        const int maps = s.maps_per_frame();
        const int per_patch = r_.engine_->patch_floats();
        const float nan = std::numeric_limits<float>::quiet_NaN();
        flcc_peak* out = out_ + int64_t(f) * maps * s.peaks;
        for (int m = 0; m < maps; ++m)
            for (int j = 0; j < s.peaks; ++j) {
                const int64_t i = int64_t(m) * s.peaks + j;
                const EnginePeak& e = peaks[i];
                host::MapPeak p{nan, {-1, -1, -1}, {-1, -1, -1}, nan, nan};
                if (e.at[1] >= 0) {
                    p.value = e.value;
                    p.quality = e.quality;
                    p.psr = e.psr;
                    for (int a = 0; a < 3; ++a) p.at[a] = e.at[a];
                    if (e.flat) {
                        for (int a = 0; a < 3; ++a) p.refined[a] = double(e.at[a]);
                    } else {
                        // Refined on the patch, then placed back in the map.
                        const Extent pe{e.patch_extent[0], e.patch_extent[1], e.patch_extent[2]};
                        for (int a = 0; a < 3; ++a) p.at[a] -= e.patch_lo[a];
                        host::refine_peak(patches + i * per_patch, pe, r_.search_, p);
                        for (int a = 0; a < 3; ++a) {
                            p.at[a] += e.patch_lo[a];
                            p.refined[a] += e.patch_lo[a];
                        }
                    }
                }
                const int templ = s.best ? (e.templ >= 0 ? e.templ : 0) : s.templ_of(m);
                write_peak(p, s.pair, templ, out[i]);
            }
        return FLCC_SUCCESS;
    }

private:
    const DeviceRunner& r_;
    flcc_peak* out_;
};

bool DeviceRunner::engine_named(const char* method, EngineKind& kind)
{
    if (method == nullptr) return false;
    for (const EngineKind k : {EngineKind::fourier, EngineKind::direct, EngineKind::block})
        if (std::strcmp(method, engine_name(k)) == 0) {
            kind = k;
            return true;
        }
    return false;
}

EngineKind DeviceRunner::estimated_kind(const Spec& spec)
{
    // Products per pair: per axis, the sum over outputs of the window's overlap with the image.
    const Problem& p = spec.pair;
    double products = 1, box = 1;
    for (int a = 1; a < 3; ++a) {
        double sum = 0;
        for (int64_t o = 0; o < p.out[a]; ++o) {
            const int64_t lo = std::max<int64_t>(0, o - p.pad[a]), hi = std::min(p.image[a], o - p.pad[a] + p.templ[a]);
            sum += double(std::max<int64_t>(0, hi - lo));
        }
        products *= sum;
        box *= double(geometry::correlation_box_size(p.image[a], p.templ[a], p.pad[a]));
    }
    // Pairs that fit the per-block transforms' box: the direct engine only where its sums are
    // few against that box's transforms.
    if (fits_block_fft_box(p.image, p.templ, p.pad))
        return products <= kDirectProductsPerBlockBoxElement * double(kBlockFftBoxSide * kBlockFftBoxSide)
                   ? EngineKind::direct
                   : EngineKind::block;
    return products <= kDirectProductsPerBoxElement * box ? EngineKind::direct : EngineKind::fourier;
}

flcc_result DeviceRunner::make(const Spec& spec, EngineKind kind, std::unique_ptr<DeviceRunner>& out)
{
    const char* where = "options.platform = DEVICE";
    if (spec.pair.dim != 2)
        return fail(FLCC_METHOD_NOT_APPLICABLE, "%s: GPU batch plans are 2D in this version", where);
    if (spec.bandpass_low > 0 || spec.bandpass_high > 0)
        return fail(FLCC_METHOD_NOT_APPLICABLE,
                    "%s: the band-pass preprocessing runs on the host only in this version", where);
    if (spec.peaks > 0 && spec.refine == FLCC_REFINE_UPSAMPLED)
        return fail(FLCC_METHOD_NOT_APPLICABLE,
                    "%s: the UPSAMPLED refinement runs on the host only in this version", where);
    const DeviceRuntime* rt = device_runtime();
    if (rt == nullptr || !rt->available(spec.device))
        return fail(FLCC_NO_DEVICE, "%s: no usable GPU (device %d)", where, spec.device);

    std::unique_ptr<DeviceRunner> r(new DeviceRunner(spec));
    const Problem& p = spec.pair;
    BatchEngineSpec e;
    e.op = p.op;
    e.correlate = spec.op != FLCC_CONV;
    e.image = p.image;
    e.templ = p.templ;
    e.out = p.out;
    e.pad = p.pad;
    e.pairs = spec.pairs;
    e.all_pairs = spec.pairing == FLCC_ALL_PAIRS;
    e.images = engine_source(spec.images);
    e.templates = engine_source(spec.templates);
    e.zero_mean = spec.zero_mean;
    e.hann = spec.hann;
    e.check_finite = spec.check_finite;
    e.peaks = spec.peaks;
    e.exclusion = spec.exclusion;
    e.patch_radius = spec.refine == FLCC_REFINE_QUADRATIC ? spec.fit_size / 2 : 1;
    // A flat map's peak: zero displacement (output index = pad) where the region holds it.
    for (int a = 0; a < 3; ++a) e.flat_at[a] = p.pad[a] < p.out[a] ? p.pad[a] : 0;
    e.keep_maps = spec.keep_maps;
    e.best = spec.best;
    e.templ_per_frame = spec.templ_per_frame;
    e.device = spec.device;
    e.kind = kind;
    flcc_result made = FLCC_METHOD_NOT_APPLICABLE;
    for (const Backend* b : backends())
        if ((made = b->make_batch_engine(e, r->engine_)) != FLCC_METHOD_NOT_APPLICABLE) break;
    if (made == FLCC_METHOD_NOT_APPLICABLE && kind == EngineKind::direct)
        return fail(made, "%s: %s does not apply to %s (one pair's values exceed a block's shared memory)",
                    where, engine_name(kind), p.key().c_str());
    if (made == FLCC_METHOD_NOT_APPLICABLE && kind == EngineKind::block)
        return fail(made, "%s: %s does not apply to %s (a pair's linear correlation exceeds its 64 x 64 box)",
                    where, engine_name(kind), p.key().c_str());
    if (made == FLCC_METHOD_NOT_APPLICABLE)
        return fail(made, "%s: no GPU batch engine applies to %s", where, p.key().c_str());
    if (made == FLCC_ALLOC_FAILED)
        return fail(made, "%s: the GPU batch engine's buffers do not fit the device", where);
    if (made != FLCC_SUCCESS) return fail(made, "%s: the GPU batch engine failed to start", where);
    r->search_.k = spec.peaks;
    r->search_.exclusion = spec.exclusion;
    r->search_.refine = refine_of(spec.refine);
    r->search_.fit = spec.fit_size;
    r->search_.upsample = spec.upsample;
    out = std::move(r);
    return FLCC_SUCCESS;
}

// A set equal by value to the one prepared last is not prepared again (host sets are compared
// where they are, device sets on a host copy); the set is kept only when it is prepared.
flcc_result DeviceRunner::prepare_templates(const void* set)
{
    const size_t bytes = size_t(spec_.templates.frame_bytes());
    std::vector<unsigned char> given;
    const unsigned char* host = static_cast<const unsigned char*>(set);
    if (memory_space(set) == MemorySpace::device) {
        given.resize(bytes);
        if (!copy_to_host(given.data(), set, bytes))
            return fail(FLCC_DEVICE_ERROR, "copying the templates to the host failed");
        host = given.data();
    }
    if (templ_ready_ && templ_input_.size() == bytes && std::memcmp(host, templ_input_.data(), bytes) == 0)
        return FLCC_SUCCESS;
    if (given.empty()) given.assign(host, host + bytes);
    templ_ready_ = false;
    int bad = -1;
    const flcc_result r = engine_->prepare_templates(set, bad);
    if (r == FLCC_NONFINITE_INPUT)
        return fail(r, "templs: template %d holds NaN or Inf", bad);
    if (r != FLCC_SUCCESS) return fail(r, "the GPU batch engine failed preparing the templates");
    templ_input_ = std::move(given);
    templ_ready_ = true;
    return FLCC_SUCCESS;
}

flcc_result DeviceRunner::run(const void* images, const void* templs, float* maps, flcc_peak* peaks,
                              int frames)
{
    const bool per_frame = spec_.templ_per_frame && templs != nullptr;
    if (templs != nullptr && !per_frame) {
        const flcc_result r = prepare_templates(templs);
        if (r != FLCC_SUCCESS) return r;
    }
    // Peaks for device memory are written on the host first.
    std::vector<flcc_peak> staged;
    flcc_peak* out = peaks;
    const int64_t count = int64_t(frames) * spec_.maps_per_frame() * spec_.peaks;
    const bool device_peaks = peaks != nullptr && memory_space(peaks) == MemorySpace::device;
    if (device_peaks) {
        staged.resize(size_t(count));
        out = staged.data();
    }
    Sink sink(*this, out);
    int bad = -1, bad_frame = -1;
    const flcc_result r = engine_->run(images, per_frame ? templs : nullptr, maps, frames, sink, bad,
                                       bad_frame);
    if (per_frame) {   // the sets changed on the device: the next comparison prepares again
        templ_input_.clear();
        templ_ready_ = r == FLCC_SUCCESS;
    }
    if (r == FLCC_NONFINITE_INPUT) {
        if (bad < 0) return fail(r, "templs: frame %d, template %d holds NaN or Inf", bad_frame, -1 - bad);
        return fail(r, "images: frame %d, image %d holds NaN or Inf", bad_frame, bad);
    }
    if (r != FLCC_SUCCESS) return fail(r, "the GPU batch engine failed");
    if (device_peaks && !copy_to_device(peaks, staged.data(), size_t(count) * sizeof(flcc_peak)))
        return fail(FLCC_DEVICE_ERROR, "copying the peaks to the device failed");
    return FLCC_SUCCESS;
}

}  // namespace flcc::batch
