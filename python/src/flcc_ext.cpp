// flcc._flcc: the thin binding of the C API that the Python package builds on.
//
// Every function returns flcc result codes instead of raising, and the Python layer turns them
// into flcc.Error: the rules for arrays (framework, device, dtype, layout) live in one place,
// python/flcc/_arrays.py, and this file only passes pointers through. Arrays arrive as nanobind
// ndarrays (NumPy buffers, or any object with __dlpack__: CuPy, PyTorch), never converted here,
// so the pointer the library sees is the caller's own; execution releases the GIL. The one
// exception to returning codes: a batch exec given a buffer smaller than its frames need raises
// ValueError, so that no call of this module reads or writes outside the caller's arrays.
#include <flcc.h>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace nb = nanobind;

namespace {

using InArray = nb::ndarray<const float, nb::c_contig>;
using OutArray = nb::ndarray<float, nb::c_contig>;
using Shape = std::tuple<int, int, int>;

flcc_size to_size(const Shape& s) { return flcc_size{std::get<0>(s), std::get<1>(s), std::get<2>(s)}; }

// An flcc_plan owned by Python. The pointers of the last execution are kept so that tests can
// show that the library received the caller's buffers (zero copy).
class Plan {
public:
    Plan() = default;
    Plan(const Plan&) = delete;
    Plan& operator=(const Plan&) = delete;
    ~Plan() { close(); }

    flcc_plan handle = nullptr;
    flcc_op op = FLCC_CONV;
    std::uintptr_t last_image = 0, last_templ = 0, last_out = 0;

    void close()
    {
        if (handle != nullptr) flcc_destroy(handle);
        handle = nullptr;
    }
};

// Plans op on dim-dimensional images; the option values are the C enums' integers, checked by
// the library. Returns (code, plan or None).
std::pair<int, std::optional<nb::object>> plan_create(int op, int dim, Shape image, Shape templ,
                                                      int type, int platform, int region,
                                                      int rigor, int threads,
                                                      std::optional<std::string> method,
                                                      int device, bool check_finite,
                                                      bool device_resident)
{
    if (op != FLCC_CONV && op != FLCC_LCORR) return {FLCC_INVALID_VALUE, std::nullopt};
    flcc_options o;
    flcc_options_init(&o);
    o.type = static_cast<flcc_type>(type);
    o.platform = static_cast<flcc_platform>(platform);
    o.region = static_cast<flcc_region>(region);
    o.rigor = static_cast<flcc_rigor>(rigor);
    o.threads = threads;
    o.method = method ? method->c_str() : nullptr;
    o.device = device;
    o.check_finite = check_finite ? 1 : 0;
    o.device_resident = device_resident ? 1 : 0;
    flcc_plan handle = nullptr;
    flcc_result r;
    {
        nb::gil_scoped_release release;   // MEASURE planning runs for a while
        r = flcc_plan_create(&handle, static_cast<flcc_op>(op), dim, to_size(image), to_size(templ), &o);
    }
    if (r != FLCC_SUCCESS) return {int(r), std::nullopt};
    nb::object obj = nb::cast(new Plan(), nb::rv_policy::take_ownership);
    Plan& p = nb::cast<Plan&>(obj);
    p.handle = handle;
    p.op = static_cast<flcc_op>(op);
    return {0, obj};
}

int plan_exec(Plan& p, const InArray& image, const InArray& templ, const OutArray& out, int count)
{
    if (p.handle == nullptr) return FLCC_INVALID_PLAN;
    const float* im = image.data();
    const float* tp = templ.data();
    float* o = out.data();
    p.last_image = reinterpret_cast<std::uintptr_t>(im);
    p.last_templ = reinterpret_cast<std::uintptr_t>(tp);
    p.last_out = reinterpret_cast<std::uintptr_t>(o);
    nb::gil_scoped_release release;
    return p.op == FLCC_CONV ? flcc_conv_exec(p.handle, im, tp, o, count)
                             : flcc_lcorr_exec(p.handle, im, tp, o, count);
}

// The same call on raw addresses, for CuPy and PyTorch arrays: their DLPack export costs
// microseconds a call, and the Python layer has already checked dtype, layout and shape.
int plan_exec_raw(Plan& p, std::uintptr_t image, std::uintptr_t templ, std::uintptr_t out, int count)
{
    if (p.handle == nullptr) return FLCC_INVALID_PLAN;
    p.last_image = image;
    p.last_templ = templ;
    p.last_out = out;
    const auto* im = reinterpret_cast<const float*>(image);
    const auto* tp = reinterpret_cast<const float*>(templ);
    auto* o = reinterpret_cast<float*>(out);
    nb::gil_scoped_release release;
    return p.op == FLCC_CONV ? flcc_conv_exec(p.handle, im, tp, o, count)
                             : flcc_lcorr_exec(p.handle, im, tp, o, count);
}

// A batch plan (flcc_batch_plan_create) owned by Python, with the bytes its execs read and
// write per frame, so that an exec checks every buffer against them. The pointers of the last
// execution are kept, as for Plan.
class BatchPlan {
public:
    BatchPlan() = default;
    BatchPlan(const BatchPlan&) = delete;
    BatchPlan& operator=(const BatchPlan&) = delete;
    ~BatchPlan() { close(); }

    flcc_plan handle = nullptr;
    int pairs = 0;
    bool templ_per_frame = false;
    // Per frame: the images' input, one template set, the maps (0 without keep_maps), the peaks.
    std::size_t image_bytes = 0, templ_bytes = 0, map_bytes = 0, peak_bytes = 0;
    std::uintptr_t last_images = 0, last_templs = 0, last_maps = 0, last_peaks = 0;

    void close()
    {
        if (handle != nullptr) flcc_destroy(handle);
        handle = nullptr;
    }
};

using Origins = nb::ndarray<const int, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using AnyArray = nb::ndarray<nb::c_contig>;
using PeakBytes = nb::ndarray<std::uint8_t, nb::c_contig, nb::device::cpu>;

// Plans a batch; the enum arguments are the C enums' integers, checked by the library. Origins
// are read here (the library copies them at plan time). Returns (code, plan or None).
std::size_t elem_bytes(int type) { return type == FLCC_UINT16 ? 2 : type == FLCC_UINT8 ? 1 : 4; }

std::size_t volume(int dim, const flcc_size& s)
{
    return std::size_t(s.h) * std::size_t(s.w) * std::size_t(dim == 3 ? s.d : 1);
}

std::pair<int, std::optional<nb::object>> batch_plan_create(
    int op, int dim, Shape image, Shape templ, int pairing, int images, int templates,
    int image_type, int templ_type, std::optional<Origins> image_origins, Shape image_frame,
    std::optional<Origins> templ_origins, Shape templ_frame, bool zero_mean, bool hann,
    float bandpass_low, float bandpass_high, int peaks, int exclusion, int refine, int fit_size,
    int upsample, bool keep_maps, bool best_over_templates, bool templ_per_frame, int region,
    int platform, int rigor, int threads, std::optional<std::string> method, bool check_finite)
{
    // The library reads `count` origins of `dim` ints each: the arrays must hold them.
    for (const auto* o : {&image_origins, &templ_origins}) {
        const int count = o == &image_origins ? images : templates;
        if (*o && ((*o)->shape(0) != size_t(count) || (*o)->shape(1) != size_t(dim)))
            throw nb::value_error("origins must be a (count, dim) array");
    }
    flcc_batch b;
    flcc_batch_init(&b);
    b.pairing = static_cast<flcc_pairing>(pairing);
    b.images = images;
    b.templates = templates;
    b.image_type = static_cast<flcc_dtype>(image_type);
    b.templ_type = static_cast<flcc_dtype>(templ_type);
    b.image_origins = image_origins ? image_origins->data() : nullptr;
    b.image_frame = to_size(image_frame);
    b.templ_origins = templ_origins ? templ_origins->data() : nullptr;
    b.templ_frame = to_size(templ_frame);
    b.zero_mean = zero_mean ? 1 : 0;
    b.hann = hann ? 1 : 0;
    b.bandpass_low = bandpass_low;
    b.bandpass_high = bandpass_high;
    b.peaks = peaks;
    b.exclusion = exclusion;
    b.refine = static_cast<flcc_refine>(refine);
    b.fit_size = fit_size;
    b.upsample = upsample;
    b.keep_maps = keep_maps ? 1 : 0;
    b.best_over_templates = best_over_templates ? 1 : 0;
    b.templ_per_frame = templ_per_frame ? 1 : 0;
    flcc_options o;
    flcc_options_init(&o);
    o.region = static_cast<flcc_region>(region);
    o.platform = static_cast<flcc_platform>(platform);
    o.rigor = static_cast<flcc_rigor>(rigor);
    o.threads = threads;
    o.method = method ? method->c_str() : nullptr;
    o.check_finite = check_finite ? 1 : 0;
    flcc_plan handle = nullptr;
    flcc_result r;
    {
        nb::gil_scoped_release release;
        r = flcc_batch_plan_create(&handle, static_cast<flcc_op>(op), dim, to_size(image),
                                   to_size(templ), &b, &o);
    }
    if (r != FLCC_SUCCESS) return {int(r), std::nullopt};
    int pairs = 0;
    flcc_size out{0, 0, 0};
    if ((r = flcc_batch_pairs(handle, &pairs)) != FLCC_SUCCESS ||
        (r = flcc_plan_output_size(handle, &out)) != FLCC_SUCCESS) {
        flcc_destroy(handle);
        return {int(r), std::nullopt};
    }
    nb::object obj = nb::cast(new BatchPlan(), nb::rv_policy::take_ownership);
    BatchPlan& p = nb::cast<BatchPlan&>(obj);
    p.handle = handle;
    p.pairs = pairs;
    p.templ_per_frame = templ_per_frame;
    // The layout of flcc_batch_exec's arguments (flcc.h).
    p.image_bytes = elem_bytes(image_type) * (image_origins ? volume(dim, b.image_frame)
                                                            : images * volume(dim, to_size(image)));
    p.templ_bytes = elem_bytes(templ_type) * (templ_origins ? volume(dim, b.templ_frame)
                                                            : templates * volume(dim, to_size(templ)));
    const std::size_t maps_per_frame = best_over_templates ? images : pairs;
    if (keep_maps)
        p.map_bytes = sizeof(float) * maps_per_frame * volume(dim, out) * (best_over_templates ? 2 : 1);
    p.peak_bytes = sizeof(flcc_peak) * maps_per_frame * std::size_t(peaks);
    return {0, obj};
}

std::size_t bytes_of(const AnyArray& a) { return a.size() * a.itemsize(); }

// One flcc_batch_exec of `frames` frames. Each buffer must hold what the plan reads or writes
// for them (templates: one set, or one per frame), so that no call of this function reads or
// writes outside the caller's arrays.
int batch_exec(BatchPlan& p, const AnyArray& images, std::optional<AnyArray> templs,
               std::optional<AnyArray> maps, std::optional<PeakBytes> peaks, int frames)
{
    if (p.handle == nullptr) return FLCC_INVALID_PLAN;
    if (frames < 1) return FLCC_INVALID_VALUE;
    const std::size_t f = std::size_t(frames);
    if (bytes_of(images) < f * p.image_bytes ||
        (templs && bytes_of(*templs) < (p.templ_per_frame ? f : 1) * p.templ_bytes) ||
        (maps && bytes_of(*maps) < f * p.map_bytes) || (peaks && peaks->size() < f * p.peak_bytes))
        throw nb::value_error("batch_exec: a buffer is smaller than the plan's frames need");
    if (maps && maps->dtype() != nb::dtype<float>())
        throw nb::type_error("batch_exec: maps must be float32");
    const void* im = images.data();
    const void* tp = templs ? templs->data() : nullptr;
    float* mp = maps ? static_cast<float*>(maps->data()) : nullptr;
    auto* pk = peaks ? reinterpret_cast<flcc_peak*>(peaks->data()) : nullptr;
    p.last_images = reinterpret_cast<std::uintptr_t>(im);
    p.last_templs = reinterpret_cast<std::uintptr_t>(tp);
    p.last_maps = reinterpret_cast<std::uintptr_t>(mp);
    p.last_peaks = reinterpret_cast<std::uintptr_t>(pk);
    nb::gil_scoped_release release;
    return flcc_batch_exec(p.handle, im, tp, mp, pk, frames);
}

// flcc_peak's size and its fields' (name, offset, kind), kind 'f' float or 'i' int: the NumPy
// structured dtype of peaks is built from them, so that it matches the struct on every build.
std::pair<std::size_t, std::vector<std::tuple<std::string, std::size_t, char>>> peak_layout()
{
#define FLCC_FIELD(name, kind) {#name, offsetof(flcc_peak, name), kind}
    return {sizeof(flcc_peak),
            {FLCC_FIELD(value, 'f'), FLCC_FIELD(h, 'i'), FLCC_FIELD(w, 'i'), FLCC_FIELD(d, 'i'),
             FLCC_FIELD(y, 'f'), FLCC_FIELD(x, 'f'), FLCC_FIELD(z, 'f'), FLCC_FIELD(dy, 'f'),
             FLCC_FIELD(dx, 'f'), FLCC_FIELD(dz, 'f'), FLCC_FIELD(quality, 'f'),
             FLCC_FIELD(psr, 'f'), FLCC_FIELD(templ, 'i')}};
#undef FLCC_FIELD
}

std::vector<std::pair<std::string, double>> plan_candidates(const Plan& p)
{
    std::vector<std::pair<std::string, double>> v;
    if (p.handle == nullptr) return v;
    const int n = flcc_plan_candidate_count(p.handle);
    for (int i = 0; i < n; ++i) {
        const char* name = nullptr;
        double seconds = 0;
        if (flcc_plan_candidate(p.handle, i, &name, &seconds) == FLCC_SUCCESS && name != nullptr)
            v.emplace_back(name, seconds);
    }
    return v;
}

std::pair<int, std::string> wisdom_export()
{
    char* text = nullptr;
    const flcc_result r = flcc_wisdom_export(&text);
    std::string s = text != nullptr ? std::string(text) : std::string();
    flcc_free(text);
    return {int(r), s};
}

// Times `calls` executions made straight from C++, `rounds` times, and returns each round's
// seconds per call (after the plan's work is waited for): the baseline of the package's
// overhead benchmark (bench/python/overhead.py), which makes the same calls through flcc.Plan.
std::vector<double> bench_execute(Plan& p, const InArray& image, const InArray& templ,
                                  const OutArray& out, int count, int calls, int rounds)
{
    std::vector<double> seconds;
    if (p.handle == nullptr || calls < 1) return seconds;
    const float* im = image.data();
    const float* tp = templ.data();
    float* o = out.data();
    nb::gil_scoped_release release;
    for (int r = 0; r < rounds; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int c = 0; c < calls; ++c)
            if (p.op == FLCC_CONV) flcc_conv_exec(p.handle, im, tp, o, count);
            else flcc_lcorr_exec(p.handle, im, tp, o, count);
        flcc_plan_synchronize(p.handle);
        const std::chrono::duration<double> d = std::chrono::steady_clock::now() - t0;
        seconds.push_back(d.count() / calls);
    }
    return seconds;
}

std::uintptr_t data_pointer(nb::ndarray<> a) { return reinterpret_cast<std::uintptr_t>(a.data()); }

}  // namespace

NB_MODULE(_flcc, m)
{
    m.doc() = "The C API of FLCC, as the flcc package uses it (not a public interface).";

    nb::class_<Plan>(m, "Plan")
        .def_prop_ro("method",
                     [](const Plan& p) -> std::optional<std::string> {
                         const char* s = p.handle ? flcc_plan_method(p.handle) : nullptr;
                         return s ? std::optional<std::string>(s) : std::nullopt;
                     })
        .def_prop_ro("output_size",
                     [](const Plan& p) {
                         flcc_size s{0, 0, 0};
                         const int r = p.handle ? int(flcc_plan_output_size(p.handle, &s))
                                                : int(FLCC_INVALID_PLAN);
                         return std::make_tuple(r, s.h, s.w, s.d);
                     })
        .def_prop_ro("candidates", &plan_candidates)
        .def_prop_ro("last_pointers",
                     [](const Plan& p) { return std::make_tuple(p.last_image, p.last_templ, p.last_out); })
        .def("execute", &plan_exec, nb::arg("image").noconvert(), nb::arg("templ").noconvert(),
             nb::arg("out").noconvert(), nb::arg("count"))
        .def("execute_raw", &plan_exec_raw, nb::arg("image"), nb::arg("templ"), nb::arg("out"),
             nb::arg("count"))
        .def("set_stream",
             [](Plan& p, std::uintptr_t stream) {
                 if (p.handle == nullptr) return int(FLCC_INVALID_PLAN);
                 return int(flcc_plan_set_stream(p.handle, reinterpret_cast<void*>(stream)));
             })
        .def("synchronize",
             [](Plan& p) {
                 if (p.handle == nullptr) return int(FLCC_INVALID_PLAN);
                 nb::gil_scoped_release release;
                 return int(flcc_plan_synchronize(p.handle));
             })
        .def("close", &Plan::close);

    nb::class_<BatchPlan>(m, "BatchPlan")
        .def_prop_ro("method",
                     [](const BatchPlan& p) -> std::optional<std::string> {
                         const char* s = p.handle ? flcc_plan_method(p.handle) : nullptr;
                         return s ? std::optional<std::string>(s) : std::nullopt;
                     })
        .def_prop_ro("output_size",
                     [](const BatchPlan& p) {
                         flcc_size s{0, 0, 0};
                         const int r = p.handle ? int(flcc_plan_output_size(p.handle, &s))
                                                : int(FLCC_INVALID_PLAN);
                         return std::make_tuple(r, s.h, s.w, s.d);
                     })
        .def_ro("pairs", &BatchPlan::pairs)
        .def_prop_ro("last_pointers",
                     [](const BatchPlan& p) {
                         return std::make_tuple(p.last_images, p.last_templs, p.last_maps,
                                                p.last_peaks);
                     })
        .def("execute", &batch_exec, nb::arg("images").noconvert(),
             nb::arg("templs").noconvert().none(), nb::arg("maps").noconvert().none(),
             nb::arg("peaks").noconvert().none(), nb::arg("frames"))
        .def("close", &BatchPlan::close);

    m.attr("MAX_THREADS") = FLCC_MAX_THREADS;
    m.def("plan_create", &plan_create);
    m.def("batch_plan_create", &batch_plan_create, nb::arg("op"), nb::arg("dim"), nb::arg("image"),
          nb::arg("templ"), nb::arg("pairing"), nb::arg("images"), nb::arg("templates"),
          nb::arg("image_type"), nb::arg("templ_type"), nb::arg("image_origins").none(),
          nb::arg("image_frame"), nb::arg("templ_origins").none(), nb::arg("templ_frame"),
          nb::arg("zero_mean"), nb::arg("hann"), nb::arg("bandpass_low"), nb::arg("bandpass_high"),
          nb::arg("peaks"), nb::arg("exclusion"), nb::arg("refine"), nb::arg("fit_size"),
          nb::arg("upsample"), nb::arg("keep_maps"), nb::arg("best_over_templates"),
          nb::arg("templ_per_frame"), nb::arg("region"), nb::arg("platform"), nb::arg("rigor"),
          nb::arg("threads"), nb::arg("method").none(), nb::arg("check_finite"));
    m.def("peak_layout", &peak_layout);
    m.def("last_error_detail", [] {
        const char* d = flcc_last_error_detail();
        return std::string(d != nullptr ? d : "");
    });
    m.def("result_string", [](int r) { return std::string(flcc_result_string(static_cast<flcc_result>(r))); });
    m.def("version", &flcc_version);
    m.def("solver_names", [] {
        std::vector<std::string> v;
        for (int i = 0, n = flcc_solver_count(); i < n; ++i) v.emplace_back(flcc_solver_name(i));
        return v;
    });
    m.def("wisdom_export", &wisdom_export);
    m.def("wisdom_import", [](const std::string& text) { return int(flcc_wisdom_import(text.c_str())); });
    m.def("wisdom_export_file", [](const std::string& path) { return int(flcc_wisdom_export_file(path.c_str())); });
    m.def("wisdom_import_file", [](const std::string& path) { return int(flcc_wisdom_import_file(path.c_str())); });
    m.def("wisdom_forget", &flcc_wisdom_forget);
    m.def("bench_execute", &bench_execute, nb::arg("plan"), nb::arg("image").noconvert(),
          nb::arg("templ").noconvert(), nb::arg("out").noconvert(), nb::arg("count"),
          nb::arg("calls"), nb::arg("rounds"));
    m.def("data_pointer", &data_pointer, nb::arg("array").noconvert(),
          "The address nanobind resolves for an array (what execute passes to the library).");
}
