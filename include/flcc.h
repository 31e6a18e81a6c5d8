/*
 * flcc.h - FLCC, Fast Local Correlation Coefficients.
 *
 * Convolution and local correlation coefficients (zero-mean normalised cross-correlation at
 * every template placement) of 2D and 3D float images, on CPUs and NVIDIA GPUs, with a
 * plan/execute interface in the spirit of FFTW: plan once for a problem shape, execute per frame.
 *
 * This is the only public header (plus flcc13.h, the FLCC 1.3 compatibility names). It is C99
 * and C++ clean. No function of the library throws, aborts or prints: every failure is a
 * flcc_result code, flcc_result_string() names it, and flcc_last_error_detail() says which
 * argument broke which rule. Running out of memory (FFTW's included) or of threads is
 * FLCC_ALLOC_FAILED: a failed create leaves *plan NULL, a failed exec leaves the plan usable
 * (docs/semantics.md, "Error handling").
 *
 * Memory layout: an image of size {h, w, d} is row-major with d fastest, then w, then h
 * (2D images ignore d). A stream of `count` images of one shape is stored back to back, and
 * so are the outputs.
 *
 * Thread safety: every function may be called from several threads at once. Planning is safe
 * from any number of threads (FLCC serialises its calls into FFTW's planner). Distinct plans
 * execute concurrently; one plan executes one call at a time (concurrent calls on the same plan
 * are serialised, each with its own arguments). A plan destroyed while another thread executes
 * it is freed when that exec returns (docs/semantics.md, "Thread safety").
 */
#ifndef FLCC_H
#define FLCC_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && defined(FLCC_SHARED_BUILD)
#define FLCC_API __declspec(dllexport)
#elif defined(__GNUC__)
#define FLCC_API __attribute__((visibility("default")))
#else
#define FLCC_API
#endif

/** @name Version
 *  FLCC_VERSION = MAJOR*10000 + MINOR*100 + PATCH; flcc_version() returns the library's value,
 *  so a program can detect a header/library mismatch. */
/**@{*/
#define FLCC_VERSION_MAJOR 2
#define FLCC_VERSION_MINOR 0
#define FLCC_VERSION_PATCH 0
#define FLCC_VERSION (FLCC_VERSION_MAJOR * 10000 + FLCC_VERSION_MINOR * 100 + FLCC_VERSION_PATCH)
#define FLCC_VERSION_STRING "2.0.0"
/**@}*/

/** Extent of an image or template: h rows, w columns, d slices (d is ignored in 2D). */
typedef struct {
    int h, w, d;
} flcc_size;

/** SINGLE: frames come one at a time, possibly with a new template each time (the planner
 *  times template preparation plus one frame). STREAM: many frames share one template (the
 *  planner times the per-frame steady state; GPU plans overlap transfers with compute). */
typedef enum { FLCC_SINGLE = 0, FLCC_STREAM = 1 } flcc_type;

/** Where the work runs. ANY picks the fastest usable platform. */
typedef enum { FLCC_HOST = 0, FLCC_DEVICE = 1, FLCC_ANY = 2 } flcc_platform;

/** The operation: convolution (scipy.signal.convolve), local correlation coefficients, and
 *  cross-correlation (scipy.signal.correlate). */
typedef enum { FLCC_CONV = 0, FLCC_LCORR = 1, FLCC_XCORR = 2 } flcc_op;

/** Output region, per axis: FULL = S+T-1 (default), SAME = S (the centre of full, starting at
 *  full index floor((T-1)/2), as scipy's "same"), VALID = S-T+1 (needs T <= S). */
typedef enum { FLCC_FULL = 0, FLCC_SAME = 1, FLCC_VALID = 2 } flcc_region;

/** Planner rigour. MEASURE times every applicable solver; ESTIMATE picks by a cost model;
 *  WISDOM_ONLY plans only from recorded wisdom (FLCC_WISDOM_MISS otherwise). */
typedef enum { FLCC_MEASURE = 0, FLCC_ESTIMATE = 1, FLCC_WISDOM_ONLY = 2 } flcc_rigor;

/** Result codes. The first nine are FLCC 1.3's, in its order. */
typedef enum {
    FLCC_SUCCESS = 0,
    FLCC_INVALID_PLAN = 1,         /**< NULL, destroyed or unknown plan handle */
    FLCC_INVALID_DIMENSION = 2,    /**< dim is not 2 or 3 */
    FLCC_INVALID_SIZE = 3,         /**< a size <= 0, an output extent over INT_MAX, one frame's
                                        arrays (image, template, output) over 2^47 bytes (more
                                        than a process can map), a count of frames whose bytes
                                        overflow, or VALID region with the template larger than
                                        the image */
    FLCC_INVALID_TYPE = 4,         /**< flcc_type out of range */
    FLCC_INVALID_PLATFORM = 5,     /**< flcc_platform out of range */
    FLCC_INVALID_VALUE = 6,        /**< another argument out of range (count < 1, region,
                                        rigor, op, threads < 0 or > FLCC_MAX_THREADS, device) */
    FLCC_ALLOC_FAILED = 7,         /**< host or device memory could not be allocated, or a
                                        worker thread could not be started (the call is
                                        undone; see docs/semantics.md, "Error handling") */
    FLCC_EXEC_FAILED = 8,          /**< execution failed for a reason not listed below */
    /* codes added after FLCC 1.3 */
    FLCC_NULL_POINTER = 9,         /**< a required pointer argument is NULL */
    FLCC_NONFINITE_INPUT = 10,     /**< image or template holds NaN or Inf (output undefined) */
    FLCC_UNKNOWN_METHOD = 11,      /**< options.method names no solver of this build */
    FLCC_METHOD_NOT_APPLICABLE = 12, /**< the named solver cannot solve this problem */
    FLCC_OPERATION_MISMATCH = 13,  /**< conv exec on an LCC plan or the reverse */
    FLCC_NO_DEVICE = 14,           /**< DEVICE platform asked for, but no usable GPU */
    FLCC_DEVICE_ERROR = 15,        /**< a CUDA call failed */
    FLCC_WISDOM_MISS = 16,         /**< WISDOM_ONLY and no wisdom for this problem */
    FLCC_INVALID_WISDOM = 17,      /**< wisdom text is corrupt or from another configuration */
    FLCC_IO_ERROR = 18,            /**< a wisdom file could not be read or written */
    FLCC_INTERNAL_ERROR = 19       /**< a bug: please report it */
} flcc_result;

/* Enum arguments and fields are checked as integers: a C program may pass any int value in
 * them and gets FLCC_INVALID_TYPE, FLCC_INVALID_PLATFORM or FLCC_INVALID_VALUE. */

/** The most CPU threads a plan may ask for (flcc_options.threads). Each is a worker thread the
 *  process keeps once a plan has asked for it. */
#define FLCC_MAX_THREADS 1024

/** Opaque plan handle. */
typedef struct flcc_plan_s *flcc_plan;

/** Planner options. Fill with flcc_options_init() before setting fields: new fields are only
 *  ever appended, and flcc_options_init() gives each its default. */
typedef struct {
    flcc_type type;         /**< default FLCC_SINGLE */
    flcc_platform platform; /**< default FLCC_ANY */
    flcc_region region;     /**< default FLCC_FULL */
    flcc_rigor rigor;       /**< default FLCC_MEASURE */
    int threads;            /**< CPU threads, 0 = all hardware threads (default; at most
                                 FLCC_MAX_THREADS); 1 to FLCC_MAX_THREADS */
    const char *method;     /**< NULL = the planner decides; else force a solver by name
                                 (see flcc_solver_name) */
    int device;             /**< CUDA device ordinal, -1 = current (default) */
    int check_finite;       /**< 1 (default): report NaN/Inf input as FLCC_NONFINITE_INPUT;
                                 0: skip the check (non-finite input then gives undefined
                                 output, never a crash) */
    int device_resident;    /**< 0 (default): images and outputs will be host memory, so the
                                 planner times GPU solvers with their transfers; 1: they will be
                                 GPU memory (exec accepts either kind whatever this says) */
} flcc_options;

/** Sets every field of *opts to its default. NULL is ignored. */
FLCC_API void flcc_options_init(flcc_options *opts);

/**
 * Creates a plan for `op` on `dim`-dimensional (2 or 3) images of size `image` and templates of
 * size `templ`. `opts` may be NULL for the defaults. On success *plan holds the new plan; on
 * failure *plan is set to NULL (when plan itself is not NULL). Invalid arguments are reported
 * before any memory is allocated. Planning with FLCC_MEASURE times candidate solvers on
 * planner-owned data, never on user buffers. A candidate that cannot get its memory is passed
 * over for the next one (and that decision is not recorded as wisdom); FLCC_ALLOC_FAILED when
 * none fits, or when a forced method (options.method) does not.
 */
FLCC_API flcc_result flcc_plan_create(flcc_plan *plan, flcc_op op, int dim, flcc_size image,
                                      flcc_size templ, const flcc_options *opts);

/** FLCC 1.3 style planners: FULL region, MEASURE, all threads. */
FLCC_API flcc_result flcc_conv_plan(flcc_plan *plan, int dim, flcc_size image, flcc_size templ,
                                    flcc_type type, flcc_platform platform);
FLCC_API flcc_result flcc_lcorr_plan(flcc_plan *plan, int dim, flcc_size image, flcc_size templ,
                                     flcc_type type, flcc_platform platform);

/**
 * Executes a convolution plan on `count` (>= 1) images stored back to back in `image`, with one
 * template, writing `count` outputs back to back in `out` (see flcc_plan_output_size).
 * Pointers may be host memory (page-locked or not) or, in a build with CUDA, device memory;
 * the kind is detected. GPU plans overlap transfers with compute for host frames; host plans
 * given device memory copy it through host memory. On its own stream, a GPU plan given device
 * memory first waits for the work queued on the legacy default stream (such as the DMA of a
 * cudaMemcpy from pageable memory, which may outlive the call); bound to a caller's stream
 * (flcc_plan_set_stream), it is ordered by that stream alone.
 * out[i] = sum_k image[k] * templ[i - k] over the zero-padded image (scipy.signal.convolve).
 *
 * The plan keeps the prepared template (normalised template, spectra): when `templ` holds the
 * same values as in the previous call, no template work is done. The template is compared by
 * value (a byte comparison against the plan's copy), so a buffer reused with new contents is
 * always noticed. A template in device memory given to a GPU direct plan or a device.fourier2/3.tN
 * plan is compared (and, when changed, prepared) on the GPU in stream order, with no host round
 * trip (the tN plans then transform it at every exec); device.fourier3.slabs prepares it on the
 * GPU in stream order at every exec, uncompared; so does device.fourier2.box, inside each frame's
 * graph, reading it where it lies; other plans copy it to the host first.
 */
FLCC_API flcc_result flcc_conv_exec(flcc_plan plan, const float *image, const float *templ,
                                    float *out, int count);

/**
 * Executes a local-correlation plan: out = Pearson correlation coefficient between the template
 * and the image panel under it, at every placement of the region (the image zero-padded by T-1
 * on every side in FULL, the padded zeros being data). Conventions: a panel of zero variance
 * gives exactly 0; a constant template gives an all-zero output; |r| <= 1; no NaN or Inf for
 * finite input. Template caching as for flcc_conv_exec.
 */
FLCC_API flcc_result flcc_lcorr_exec(flcc_plan plan, const float *image, const float *templ,
                                     float *out, int count);

/**
 * Executes a cross-correlation plan (FLCC_XCORR, made by flcc_plan_create):
 * out[i] = sum_k image[k] * templ[k - i + (T - 1)] in FULL, i.e. scipy.signal.correlate(image,
 * templ, mode) with the same regions as convolution: convolution with the template reversed
 * along every axis, computed by the convolution solvers. Template caching as for
 * flcc_conv_exec; a template in device memory is compared (and reversed) on the host.
 */
FLCC_API flcc_result flcc_xcorr_exec(flcc_plan plan, const float *image, const float *templ,
                                     float *out, int count);

/** Destroys a plan. NULL is a no-op returning FLCC_SUCCESS; a destroyed or unknown handle
 *  returns FLCC_INVALID_PLAN. */
FLCC_API flcc_result flcc_destroy(flcc_plan plan);

/** The chosen solver's stable name (e.g. "host.direct2.k16"), or NULL for an invalid plan. */
FLCC_API const char *flcc_plan_method(flcc_plan plan);

/** The output extent of one frame (2D plans report d = 1). */
FLCC_API flcc_result flcc_plan_output_size(flcc_plan plan, flcc_size *out);

/** The type (FLCC_SINGLE or FLCC_STREAM) the plan was made for. */
FLCC_API flcc_result flcc_plan_type(flcc_plan plan, flcc_type *type);

/** Number of candidates the planner considered for this plan (MEASURE: all applicable
 *  solvers it timed; ESTIMATE: all it costed; forced or wisdom: 1). A Fourier variant whose box
 *  is larger than the problem needs, so that a smaller variant makes the same computation, is
 *  not a candidate (it can still be forced by name). */
FLCC_API int flcc_plan_candidate_count(flcc_plan plan);

/** The i-th candidate's solver name and its measured (MEASURE) or estimated (ESTIMATE) time per
 *  frame in seconds. A candidate skipped by the planner's time budget reports a negative time.
 *  MEASURE times the close contenders again in alternation before it decides; they report
 *  those times, and the plan's method is the candidate with the lowest time. */
FLCC_API flcc_result flcc_plan_candidate(flcc_plan plan, int index, const char **name,
                                         double *seconds);

/**
 * Binds a GPU plan to a caller's CUDA stream (a cudaStream_t, passed as void*), like
 * cufftSetStream. Execs whose image and output are both device memory are then enqueued on that
 * stream and return without waiting; errors found by the work itself (non-finite input) are
 * reported by the next flcc_plan_synchronize. Execs on host memory still return when the output
 * is ready. NULL restores the plan's own stream. FLCC_INVALID_PLATFORM for a host plan.
 */
FLCC_API flcc_result flcc_plan_set_stream(flcc_plan plan, void *stream);

/** Waits for the plan's enqueued work and returns the first error it found since the last call
 *  (FLCC_SUCCESS when none). Host plans have nothing pending and return FLCC_SUCCESS. */
FLCC_API flcc_result flcc_plan_synchronize(flcc_plan plan);

/** @name Wisdom
 * The planner's decisions (problem -> solver), reused by later plans without timing, FFTW
 * style. Wisdom is keyed by the problem (operation, sizes, region, type, threads, platform,
 * data residency) and signed with this build's configuration (version, solver list, CPU
 * instruction set, GPU); wisdom from another configuration or a corrupt text is rejected with
 * FLCC_INVALID_WISDOM and planning goes on as usual. If the environment variable
 * FLCC_WISDOM_FILE names a file, every plan consults it and adds its new decisions to it.
 * FLCC_WISDOM_ONLY plans fail with FLCC_WISDOM_MISS when no decision is recorded.
 */
/**@{*/
/** The wisdom as text in *text (free with flcc_free). */
FLCC_API flcc_result flcc_wisdom_export(char **text);
/** Merges wisdom text into the process's wisdom. */
FLCC_API flcc_result flcc_wisdom_import(const char *text);
/** Writes the wisdom to a file, atomically (a new file beside it, renamed over it). An existing
 *  file is replaced only when it is empty or FLCC wisdom: any other file, a directory, FIFO or
 *  device is left untouched. FLCC_IO_ERROR when it cannot be written or is not replaced. The
 *  same rules hold for FLCC_WISDOM_FILE. */
FLCC_API flcc_result flcc_wisdom_export_file(const char *path);
/** Merges wisdom from a file. Only a regular file is read (a directory, FIFO or device gives
 *  FLCC_IO_ERROR without blocking or reading), of at most 4 MiB (a larger one gives
 *  FLCC_INVALID_WISDOM unread); FLCC_IO_ERROR when it cannot be read. */
FLCC_API flcc_result flcc_wisdom_import_file(const char *path);
/** Forgets all wisdom of this process. */
FLCC_API void flcc_wisdom_forget(void);
/**@}*/

/** @name Batched correlation and peaks
 * Many small correlations per call, and their peaks: the subregion-registration regime (EBSD
 * pattern registration, PIV, digital image correlation, many-template matching). A batch plan
 * correlates `pairs` image/template pairs per frame with one operation and one region (the plan's
 * options.region), optionally preprocesses every image and template, finds the peaks of every
 * map where the maps are computed, and returns only the peaks unless the maps are asked for.
 * docs/semantics.md ("Batches and peaks") gives every formula.
 *
 * Pairing. PAIRWISE: `images` and `templates` are equal, or one is a multiple of the other;
 * pairs = the larger, and pair p is image p * images / pairs with template p * templates / pairs
 * (one-to-one, or each image with its own m templates, or m images with one template each).
 * ALL_PAIRS: every image with every template, pairs = images * templates, pair p is image
 * p / templates with template p % templates.
 *
 * Inputs. Without origins, images are a stack of `images` arrays of the plan's image size per
 * frame (likewise templates). With origins (h, w[, d] per subregion, `dim` ints each; read at
 * plan time), each image is the subregion of that size at its origin, cut from a frame of size
 * image_frame (likewise templates from templ_frame): overlapping subregions are allowed, and a
 * subregion that leaves its frame is FLCC_INVALID_SIZE at plan time. Element types: FLOAT32,
 * UINT16 or UINT8, converted where the subregions are cut.
 *
 * Preprocessing, in this order, of every image and template (after conversion to float):
 * zero_mean subtracts its mean; hann multiplies by the separable symmetric Hann window
 * w(i) = 0.5 - 0.5 cos(2 pi i / (n - 1)) per axis (numpy.hanning; 1 for n = 1); bandpass
 * multiplies its DFT (periodic, f in cycles per pixel) by
 * exp(-2 pi^2 bandpass_low^2 |f|^2) * (1 - exp(-2 pi^2 bandpass_high^2 |f|^2)): bandpass_low is
 * the sigma (pixels) of a Gaussian smoothing (noise), bandpass_high the sigma of the Gaussian
 * background that is removed; 0 leaves that factor out.
 *
 * Peaks. `peaks` highest maxima per map with `exclusion` (Chebyshev radius, pixels) between
 * them, each refined: PARABOLIC and GAUSSIAN fit 3 points per axis; QUADRATIC fits a
 * least-squares quadratic over fit_size^dim points (fit_size 3, 5 or 7); UPSAMPLED evaluates the
 * map on a grid of spacing 1/upsample (upsample >= 2) over +-0.75 pixel around the integer peak
 * from the DFT interpolations of the pair's band-limited full-region correlations (for LCC: its
 * numerator and the image's window sums; the matrix-multiply DFT of Guizar-Sicairos et al.),
 * and refines the grid maximum by a parabola through its grid neighbours. quality = peak / the highest value farther than `exclusion` (infinity when that is
 * not positive), psr = (peak - mean) / standard deviation of the values farther than
 * `exclusion`. A flat map (every finite value equal, as LCC gives for an image or template of
 * zero variance) gives one peak of that value, quality 0 and psr 0, at the zero-displacement
 * position (dy = dx = dz = 0) when the region holds it, else at the region's origin; peaks not
 * found (fewer than `peaks` maxima) have value NaN and position -1.
 */
/**@{*/
/** Element type of batch inputs. */
typedef enum { FLCC_FLOAT32 = 0, FLCC_UINT16 = 1, FLCC_UINT8 = 2 } flcc_dtype;

/** How images and templates pair up (see above). */
typedef enum { FLCC_PAIRWISE = 0, FLCC_ALL_PAIRS = 1 } flcc_pairing;

/** Sub-pixel refinement of a peak. */
typedef enum {
    FLCC_REFINE_NONE = 0,
    FLCC_REFINE_PARABOLIC = 1,
    FLCC_REFINE_GAUSSIAN = 2,
    FLCC_REFINE_QUADRATIC = 3,  /**< fit_size^dim least squares */
    FLCC_REFINE_UPSAMPLED = 4   /**< DFT interpolation, factor `upsample` */
} flcc_refine;

/** One peak of a map. Positions are in the plan's output region; 2D maps give d = 0, z = 0,
 *  dz = 0. */
typedef struct {
    float value;        /**< map value at the integer peak */
    int h, w, d;        /**< integer peak position */
    float y, x, z;      /**< refined (sub-pixel) position */
    float dy, dx, dz;   /**< refined displacement: full-region position - (T - 1) per axis, i.e.
                             where the template's origin lies in the image (positive: the
                             image's content lies down / right of the template's) */
    float quality;      /**< peak / second peak; 0 for a flat map */
    float psr;          /**< peak-to-sidelobe ratio */
    int templ;          /**< the template of the pair (best_over_templates: the best one) */
} flcc_peak;

/** Batch description. Fill with flcc_batch_init() before setting fields: new fields are only
 *  ever appended, and flcc_batch_init() gives each its default. */
typedef struct {
    flcc_pairing pairing;     /**< default FLCC_PAIRWISE */
    int images, templates;    /**< per frame, >= 1 (default 1, 1) */
    flcc_dtype image_type, templ_type;   /**< default FLCC_FLOAT32 */
    const int *image_origins; /**< NULL (default): images come as a stack; else `images` origins */
    flcc_size image_frame;    /**< the frame images are cut from (with image_origins) */
    const int *templ_origins; /**< likewise for templates */
    flcc_size templ_frame;
    int zero_mean, hann;      /**< preprocessing switches, 0 (default) or 1 */
    float bandpass_low, bandpass_high;   /**< Gaussian band-pass sigmas (pixels), 0 = off */
    int peaks;                /**< peaks per map, 0 to 64 (default 1; 0 = none) */
    int exclusion;            /**< exclusion radius in pixels, >= 0 (default 2) */
    flcc_refine refine;       /**< default FLCC_REFINE_PARABOLIC */
    int fit_size;             /**< QUADRATIC neighbourhood, 3, 5 or 7 (default 5) */
    int upsample;             /**< UPSAMPLED factor, 2 to 1000 (default 10) */
    int keep_maps;            /**< 1: also write every map (default 0) */
    int best_over_templates;  /**< ALL_PAIRS only, 1: per image, the best value over templates
                                   at every position; peaks are found on that map (default 0) */
    int templ_per_frame;      /**< 0 (default): templs holds one set of templates for every
                                   frame of a call; 1: one set per frame */
} flcc_batch;

/** Sets every field of *batch to its default. NULL is ignored. */
FLCC_API void flcc_batch_init(flcc_batch *batch);

/**
 * Creates a batch plan: `op` (CONV, LCORR or XCORR) of `dim`-dimensional images of size `image`
 * with templates of size `templ` (the subregion sizes when cut from frames), per the batch
 * description. `opts` as for flcc_plan_create (NULL: defaults); options.type is ignored, the
 * pairs of a frame are always many. The planner picks the per-pair solver (options.method may
 * force one by name, any host solver of the pair problem) and runs pairs in parallel over
 * options.threads, on the host for platform HOST. Platform DEVICE runs the 2D pairs on the GPU,
 * on one of three engines: "device.batch.fourier" (batched cuFFT linear correlations),
 * "device.batch.direct" (one thread block per pair summing the products in shared memory: small
 * pairs; FLCC_METHOD_NOT_APPLICABLE where a pair's values exceed a block's shared memory, or for
 * LCC images wider than 256) or "device.batch.blockfft" (one thread block per pair transforming
 * a 64 x 64 box in shared memory; FLCC_METHOD_NOT_APPLICABLE where a pair's linear correlation,
 * image plus the region's padding per axis, exceeds 64), the fastest by timing (FLCC_ESTIMATE: by an estimate of their
 * costs) unless options.method names one; the peaks are found there (the fits made from the map
 * values around each peak, as on the host); band-pass, UPSAMPLED and 3D then give
 * FLCC_METHOD_NOT_APPLICABLE, no usable GPU FLCC_NO_DEVICE. Platform ANY (with no options.method)
 * runs on the fastest of the host and the engines that run the plan: FLCC_MEASURE times one
 * synthetic frame on each at plan time, FLCC_ESTIMATE takes the estimated engine wherever one
 * runs; otherwise the host. flcc_plan_output_size gives one map's extent; flcc_plan_method the
 * per-pair solver or the engine; flcc_destroy frees the plan. The other exec functions refuse a
 * batch plan (FLCC_OPERATION_MISMATCH), and flcc_batch_exec refuses other plans.
 */
FLCC_API flcc_result flcc_batch_plan_create(flcc_plan *plan, flcc_op op, int dim, flcc_size image,
                                            flcc_size templ, const flcc_batch *batch,
                                            const flcc_options *opts);

/**
 * Runs `frames` (>= 1) frames. images: per frame, the image stack (images arrays) or, with
 * image_origins, one frame of image_frame size, frames back to back, in image_type. templs:
 * likewise in templ_type, one set for the call or one per frame (templ_per_frame); NULL
 * correlates with the templates prepared by the last call again (FLCC_NULL_POINTER before any
 * were given). A set equal by value to the one prepared is not prepared again. maps: NULL
 * unless keep_maps; then [frame][pair][map] (best_over_templates: [frame][image][2][map], the
 * best value then the template index as a float). peaks: [frame][pair][peaks]
 * (best_over_templates: [frame][image][peaks]); may be NULL when batch.peaks is 0. Host or
 * device pointers. Host plans stage device data through host memory with copies on the legacy
 * default stream (cudaMemcpy); GPU plans read and write it in place, their work ordered after
 * the caller's on the legacy default stream. Either way, work on the caller's non-blocking
 * streams is not waited for (finish it before the call, e.g. with cudaStreamSynchronize).
 * Page-locked host frames (flcc_malloc) let a GPU plan upload the next frames while it computes.
 */
FLCC_API flcc_result flcc_batch_exec(flcc_plan plan, const void *images, const void *templs,
                                     float *maps, flcc_peak *peaks, int frames);

/** Pairs per frame of a batch plan (FLCC_OPERATION_MISMATCH for other plans). */
FLCC_API flcc_result flcc_batch_pairs(flcc_plan plan, int *pairs);
/**@}*/

/** Allocates `bytes` aligned to 64 bytes (page-locked when this build has CUDA and a device is
 *  usable, which speeds up transfers). Returns NULL on failure or for 0 bytes. */
FLCC_API void *flcc_malloc(size_t bytes);

/** Frees memory from flcc_malloc (or from flcc_wisdom_export). NULL is a no-op. */
FLCC_API void flcc_free(void *p);

/** A short English description of a result code ("unknown result code" outside the enum). */
FLCC_API const char *flcc_result_string(flcc_result r);

/**
 * The detail of this thread's last failure: which argument broke which rule, e.g.
 * "image.w = 0: sizes must be >= 1", "options.region = 7: not a flcc_region", "template 20x20
 * larger than image 10x10 for the VALID region (axis h)" or, for wisdom, the line at fault.
 * Every function that returns an flcc_result sets it when it fails and clears it (to "") when
 * it succeeds; other functions leave it as it is. Never NULL; the text stays valid until this
 * thread's next call of such a function. English for people, not for parsing.
 */
FLCC_API const char *flcc_last_error_detail(void);

/** The library's FLCC_VERSION. */
FLCC_API int flcc_version(void);

/** Number of solvers compiled into this build. */
FLCC_API int flcc_solver_count(void);

/** The stable name of solver `index`, NULL outside [0, flcc_solver_count()). */
FLCC_API const char *flcc_solver_name(int index);

#ifdef __cplusplus
}
#endif

#endif /* FLCC_H */
