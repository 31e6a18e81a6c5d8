#include "host/real_fft.h"

#include <atomic>
#include <map>
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
// solvers imports only once they are registered, so imports call this too.
bool threads_ready()
{
    static const bool ready = fftwf_init_threads() != 0;
    return ready;
}

// FFTW's wisdom text per measured transform shape (see real_fft.h); caller holds the planner
// mutex.
std::map<std::string, std::string>& shape_wisdom()
{
    static std::map<std::string, std::string> m;
    return m;
}
std::atomic<long> measured_shapes{0};

// FFTW's whole wisdom as text (caller holds the planner mutex).
std::string fftw_wisdom_text()
{
    char* text = fftwf_export_wisdom_to_string();
    if (text == nullptr) return std::string();
    std::string s(text);
    fftwf_free(text);
    return s;
}

std::string shape_key(const std::vector<int>& d, int threads)
{
    std::string k;
    for (size_t i = 0; i < d.size(); ++i) k += (i ? "x" : "") + std::to_string(d[i]);
    return k + " th" + std::to_string(threads);
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
        if (!threads_ready()) threads = 1;
        fftwf_plan_with_nthreads(threads);
        fftwf_set_timelimit(kPlanSecondsLimit);
        auto make = [&] {
            // The forward transform may destroy its input: the caller's box buffer is scratch.
            forward_ = fftwf_plan_dft_r2c(int(d.size()), d.data(), real, spectrum,
                                          flags | FFTW_DESTROY_INPUT);
            inverse_ = fftwf_plan_dft_c2r(int(d.size()), d.data(), spectrum, real, flags);
        };
        // Every plan starts from empty FFTW wisdom plus, for a measured shape FLCC knows, that
        // shape's text: FFTW then plans it without timing, and a shape it has to measure is
        // measured alone, so that what FFTW records is exactly this shape's. Shapes share
        // subproblems (rows of one length) that each measured differently, and short edge
        // shapes planned by estimate would pick up whatever wisdom was lying about: from a
        // clean start one plan problem always gets the same algorithms, and the same results
        // to the bit, whatever was planned before (a STREAM plan equals its SINGLE twin). Wisdom
        // of the program's own FFTW use is put back afterwards.
        const std::string program_wisdom = fftw_wisdom_text();
        fftwf_forget_wisdom();
        std::map<std::string, std::string>& known = shape_wisdom();
        const std::string key = shape_key(d, threads);
        auto it = measure ? known.find(key) : known.end();
        if (it != known.end() && fftwf_import_wisdom_from_string(it->second.c_str()) == 0) {
            known.erase(it);   // refused: measured afresh
            it = known.end();
        }
        make();
        if (measure && it == known.end() && forward_ != nullptr && inverse_ != nullptr) {
            known[key] = fftw_wisdom_text();
            measured_shapes.fetch_add(1, std::memory_order_relaxed);
        }
        fftwf_forget_wisdom();
        fftwf_import_wisdom_from_string(program_wisdom.c_str());
        if (forward_ != nullptr && inverse_ != nullptr) return;
        if (forward_ != nullptr) fftwf_destroy_plan(forward_);
        if (inverse_ != nullptr) fftwf_destroy_plan(inverse_);
    }
    throw std::bad_alloc();
}

std::vector<std::pair<std::string, std::string>> fft_wisdom()
{
    std::lock_guard<std::mutex> lock(planner_mutex());
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& kv : shape_wisdom()) out.push_back(kv);
    return out;
}

bool plausible_fft_wisdom(const std::string& text)
{
    const size_t last = text.find_last_not_of(" \n");
    return text.compare(0, 6, "(fftw-") == 0 && last != std::string::npos && text[last] == ')';
}

void add_fft_wisdom(const std::string& key, const std::string& text)
{
    std::lock_guard<std::mutex> lock(planner_mutex());
    shape_wisdom()[key] = text;
}

void forget_fft_wisdom()
{
    std::lock_guard<std::mutex> lock(planner_mutex());
    shape_wisdom().clear();
    fftwf_forget_wisdom();
}

long fft_shapes_measured() { return measured_shapes.load(std::memory_order_relaxed); }

RealFft::~RealFft()
{
    std::lock_guard<std::mutex> lock(planner_mutex());
    fftwf_destroy_plan(forward_);
    fftwf_destroy_plan(inverse_);
}

}  // namespace flcc::host
