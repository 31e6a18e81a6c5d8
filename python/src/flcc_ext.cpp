// flcc._flcc: the thin binding of the C API that the Python package builds on.
//
// Every function returns flcc result codes instead of raising, and the Python layer turns them
// into flcc.Error: the rules for arrays (framework, device, dtype, layout) live in one place,
// python/flcc/_arrays.py, and this file only passes pointers through. Arrays arrive as nanobind
// ndarrays (NumPy buffers, or any object with __dlpack__: CuPy, PyTorch), never converted here,
// so the pointer the library sees is the caller's own; execution releases the GIL.
#include <flcc.h>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <chrono>
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

    m.attr("MAX_THREADS") = FLCC_MAX_THREADS;
    m.def("plan_create", &plan_create);
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
