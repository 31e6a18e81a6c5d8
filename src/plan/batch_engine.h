// The device side of batch plans, as the batch layer reaches it through a device backend
// (Backend::make_batch_engine): the per-frame work described in plain values, and the engine
// that runs it where the data is. The engine cuts, converts and preprocesses the subregions,
// correlates every pair, and finds each map's peaks with their quality and the map values
// around them; the batch layer refines the positions from those values (host/peaks), so the
// fits are one implementation for every platform and no full map leaves the device unless asked.
#pragma once

#include "flcc.h"
#include "geometry/fft_size.h"
#include "plan/problem.h"

#include <memory>
#include <vector>

namespace flcc {

// One side of the pairs, per frame: a stack of `count` arrays, or one frame they are cut from
// at their origins (plane, row, column).
struct EngineSource {
    int count = 1;
    flcc_dtype type = FLCC_FLOAT32;
    bool cut = false;
    Extent frame{};
    std::vector<Extent> origins;
};

// How an engine correlates a pair: batched cuFFT linear correlations in boxes of fast size
// ("device.batch.fourier"), one block per pair summing the products in shared memory
// ("device.batch.direct": small pairs, whose boxes would be mostly padding and whose transforms
// cost more than the sums), or one block per pair transforming a 64 x 64 box in shared memory
// ("device.batch.blockfft": pairs whose linear correlation fits that box, such as PIV's windows).
enum class EngineKind { fourier, direct, block };

// The engine's name, as options.method takes it and flcc_plan_method gives it.
inline const char* engine_name(EngineKind kind)
{
    return kind == EngineKind::direct  ? "device.batch.direct"
           : kind == EngineKind::block ? "device.batch.blockfft"
                                       : "device.batch.fourier";
}

// The per-block transforms' box, per axis, and whether a pair's linear correlation fits it (where
// "device.batch.blockfft" applies).
constexpr int64_t kBlockFftBoxSide = 64;

inline bool fits_block_fft_box(const Extent& image, const Extent& templ, const Extent& pad)
{
    for (int a = 1; a < 3; ++a)
        if (geometry::correlation_box_size(image[a], templ[a], pad[a]) > kBlockFftBoxSide ||
            templ[a] > kBlockFftBoxSide)
            return false;
    return true;
}

struct BatchEngineSpec {
    EngineKind kind = EngineKind::fourier;
    Op op = Op::lcorr;
    bool correlate = true;     // the map correlates (LCC, XCORR); false: it convolves (CONV)
    Extent image{}, templ{}, out{}, pad{};   // of one pair, as in Problem
    int pairs = 1;
    bool all_pairs = false;    // pair p: image p / templates, template p % templates
    EngineSource images, templates;
    bool zero_mean = false, hann = false, check_finite = true;
    int peaks = 1, exclusion = 2;
    int patch_radius = 1;      // the map values kept around each peak: (2 r + 1) per axis
    Extent flat_at{};          // the position of a flat map's peak
    bool keep_maps = false, best = false, templ_per_frame = false;
    int device = -1;
};

// A peak as the engine finds it (integer position in the map; value NaN and position -1 when
// not found), the quality measures of host/peaks.h, and where its patch of map values lies.
struct EnginePeak {
    float value;
    int at[3];
    float quality, psr;
    int flat;              // 1: the map is flat (the peak sits at flat_at, unrefined)
    int templ;             // best_over_templates: the template of the peak, else -1
    int patch_lo[3];       // the patch is the map's values from patch_lo, patch_extent long
    int patch_extent[3];   // per axis (cut at the map's edges); row-major, (2 r + 1)^dim floats
};

class BatchEngine {
public:
    virtual ~BatchEngine() = default;

    // Receives each frame's peaks, frame by frame in order: maps_per_frame * peaks EnginePeaks
    // and as many patches of patch_floats() floats. A failure it returns stops the run.
    class Sink {
    public:
        virtual flcc_result frame(int f, const EnginePeak* peaks, const float* patches) = 0;

    protected:
        ~Sink() = default;
    };

    virtual const char* name() const = 0;
    virtual int patch_floats() const = 0;
    // Prepares one template set (host or device memory, the side's frame bytes). A non-finite
    // value gives FLCC_NONFINITE_INPUT with `bad` set to the template's index.
    virtual flcc_result prepare_templates(const void* set, int& bad) = 0;
    // Runs `frames` frames: images (host or device memory), templs (templ_per_frame: one set per
    // frame, or NULL: the set prepared last; else NULL), maps (keep_maps: host or device memory, else NULL).
    // A non-finite image gives FLCC_NONFINITE_INPUT with `bad` set to the image's index and
    // `bad_frame` to its frame (negative `bad`: a template of that frame's set).
    virtual flcc_result run(const void* images, const void* templs, float* maps, int frames,
                            Sink& sink, int& bad, int& bad_frame) = 0;
};

}  // namespace flcc
