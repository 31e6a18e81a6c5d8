#include "host/real_fft.h"

#include <mutex>
#include <new>
#include <vector>

namespace flcc::host {

namespace {

// Guards every call into FFTW's planner (plan, destroy, thread count, time limit).
std::mutex& planner_mutex()
{
    static std::mutex m;
    return m;
}

// FFTW's threads, set up once (caller holds the planner mutex). Wisdom naming FFTW's threaded
// solvers imports only once they are registered, and the wisdom header differs with and
// without them, so imports and exports call this too.
bool threads_ready()
{
    static const bool ready = fftwf_init_threads() != 0;
    return ready;
}

// Wisdom text waiting for the next plan (defer_fft_wisdom); caller holds the planner mutex.
std::string& deferred_wisdom()
{
    static std::string text;
    return text;
}

void import_deferred()
{
    std::string& text = deferred_wisdom();
    if (text.empty()) return;
    threads_ready();
    fftwf_import_wisdom_from_string(text.c_str());   // refused text: FFTW plans by measuring
    text.clear();
}

// FFTW's dimensions of n: the axes longer than 1 (at least one axis).
std::vector<int> fft_dims(const Extent& n)
{
    std::vector<int> d;
    for (int64_t v : n)
        if (v > 1) d.push_back(int(v));
    if (d.empty()) d.push_back(1);
    return d;
}

// Planning with FFTW_MEASURE times candidate algorithms (a 2048^2 pair: ~1 s, 4096^2: ~3 s;
// FFTW remembers them for the process). The limit caps one plan's search; past it FFTW falls
// back to estimates, which cost 1.7-2x at 1024^2 and beyond.
constexpr double kPlanSecondsLimit = 5.0;

}  // namespace

int64_t fast_fft_size(int64_t n)
{
    for (int64_t m = n < 1 ? 1 : n;; ++m) {
        int64_t r = m;
        for (int64_t f : {2, 3, 5, 7})
            while (r % f == 0) r /= f;
        if (r == 1) return m;
    }
}

int64_t RealFft::complex_elems(const Extent& n)
{
    const std::vector<int> d = fft_dims(n);
    int64_t c = d.back() / 2 + 1;
    for (size_t i = 0; i + 1 < d.size(); ++i) c *= d[i];
    return c;
}

RealFft::RealFft(const Extent& n, float* real, fftwf_complex* spectrum, int threads, bool measure)
{
    const std::vector<int> d = fft_dims(n);
    const unsigned flags = measure ? FFTW_MEASURE : FFTW_ESTIMATE;
    {
        std::lock_guard<std::mutex> lock(planner_mutex());
        import_deferred();
        fftwf_plan_with_nthreads(threads_ready() ? threads : 1);
        fftwf_set_timelimit(kPlanSecondsLimit);
        // The forward transform may destroy its input: the caller's box buffer is scratch.
        forward_ = fftwf_plan_dft_r2c(int(d.size()), d.data(), real, spectrum,
                                      flags | FFTW_DESTROY_INPUT);
        inverse_ = fftwf_plan_dft_c2r(int(d.size()), d.data(), spectrum, real, flags);
        if (forward_ != nullptr && inverse_ != nullptr) return;
        if (forward_ != nullptr) fftwf_destroy_plan(forward_);
        if (inverse_ != nullptr) fftwf_destroy_plan(inverse_);
    }
    throw std::bad_alloc();
}

std::string export_fft_wisdom()
{
    std::lock_guard<std::mutex> lock(planner_mutex());
    // FFTW's wisdom header hashes the set of its registered solvers, which its threads extend:
    // the export is made with them, as every import and plan is, so that any export imports back.
    threads_ready();
    import_deferred();   // what was read but not used yet is still wisdom to pass on
    char* text = fftwf_export_wisdom_to_string();
    if (text == nullptr) return std::string();
    std::string s(text);
    fftwf_free(text);
    return s;
}

bool import_fft_wisdom(const std::string& text)
{
    std::lock_guard<std::mutex> lock(planner_mutex());
    threads_ready();
    return fftwf_import_wisdom_from_string(text.c_str()) != 0;
}

void defer_fft_wisdom(const std::string& text)
{
    std::lock_guard<std::mutex> lock(planner_mutex());
    deferred_wisdom() = text;
}

void forget_fft_wisdom()
{
    std::lock_guard<std::mutex> lock(planner_mutex());
    deferred_wisdom().clear();
    fftwf_forget_wisdom();
}

RealFft::~RealFft()
{
    std::lock_guard<std::mutex> lock(planner_mutex());
    fftwf_destroy_plan(forward_);
    fftwf_destroy_plan(inverse_);
}

}  // namespace flcc::host
