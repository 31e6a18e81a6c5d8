#include "plan/wisdom.h"

#include "plan/registry.h"

#ifdef FLCC_HAVE_HOST
#include "host/kernels/kernel_set.h"
#endif
#ifdef FLCC_HAVE_FFTW
#include "host/real_fft.h"
#endif
#ifdef FLCC_HAVE_CUDA
#include <cuda_runtime.h>
#endif

#include "plan/error.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <unistd.h>

namespace flcc::wisdom {

namespace {

constexpr const char* kMagic = "flcc-wisdom 1";
// FFTW's wisdom text sits between these two lines (builds with FFTW).
constexpr const char* kFftSection = "fftw-wisdom";
constexpr const char* kFftEnd = "end fftw-wisdom";

std::string fft_wisdom()
{
#ifdef FLCC_HAVE_FFTW
    return host::export_fft_wisdom();
#else
    return std::string();
#endif
}

// Deferred: FFTW reads it when a host Fourier plan next needs a transform.
void defer_fft(const std::string& text)
{
#ifdef FLCC_HAVE_FFTW
    host::defer_fft_wisdom(text);
#else
    (void)text;
#endif
}

bool import_fft(const std::string& text)
{
#ifdef FLCC_HAVE_FFTW
    return host::import_fft_wisdom(text);
#else
    return text.empty();   // FFTW wisdom where this build has no FFTW: foreign
#endif
}

std::mutex& mutex()
{
    static std::mutex m;
    return m;
}

std::map<std::string, std::string>& store()
{
    static std::map<std::string, std::string> s;
    return s;
}

uint64_t fnv1a(const std::string& s, uint64_t h = 1469598103934665603ull)
{
    for (unsigned char c : s) {
        h ^= c;
        h *= 1099511628211ull;
    }
    return h;
}

// What makes a decision portable: the same library, solvers, instruction set and GPU.
std::string signature()
{
    static const std::string sig = [] {
        std::string text = FLCC_VERSION_STRING;
        for (const Solver* s : all_solvers()) text += std::string(" ") + s->name();
#ifdef FLCC_HAVE_HOST
        text += std::string(" isa=") + host::select_kernel_set().isa;
#endif
#ifdef FLCC_HAVE_CUDA
        int dev = 0;
        cudaDeviceProp prop;
        if (cudaGetDevice(&dev) == cudaSuccess && cudaGetDeviceProperties(&prop, dev) == cudaSuccess)
            text += std::string(" gpu=") + prop.name + " sm" + std::to_string(prop.major * 10 + prop.minor);
        else
            cudaGetLastError();
#endif
        char hex[17];
        std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(fnv1a(text)));
        return std::string(hex);
    }();
    return sig;
}

std::string text_of(const std::map<std::string, std::string>& s)
{
    std::string t = std::string(kMagic) + "\nsignature " + signature() + "\n";
    for (const auto& kv : s) t += kv.first + " => " + kv.second + "\n";
    const std::string fft = fft_wisdom();
    if (!fft.empty()) {
        t += std::string(kFftSection) + "\n" + fft;
        if (fft.back() != '\n') t += "\n";
        t += std::string(kFftEnd) + "\n";
    }
    return t;
}

// Parses text into decisions and FFTW's wisdom text (empty when absent). Returns "" when it is
// wisdom of this configuration, else why it is not (the first broken rule).
std::string parse(const std::string& text, std::map<std::string, std::string>& out, std::string& fft)
{
    std::istringstream in(text);
    std::string line;
    if (!std::getline(in, line) || line != kMagic)
        return std::string("line 1: not \"") + kMagic + "\"";
    if (!std::getline(in, line) || line.compare(0, 10, "signature ") != 0)
        return "line 2: no signature";
    if (line != "signature " + signature())
        return "line 2: " + line + ": wisdom of another configuration (this build: " +
               signature() + ")";
    fft.clear();
    for (int number = 3; std::getline(in, line); ++number) {
        if (line.empty()) continue;
        if (line == kFftSection) {   // FFTW's text, up to its end line (a cut file has none)
            bool closed = false;
            while (std::getline(in, line)) {
                ++number;
                if (line == kFftEnd) {
                    closed = true;
                    break;
                }
                fft += line + "\n";
            }
            if (!closed) return std::string("no \"") + kFftEnd + "\" line";
            if (fft.empty()) return std::string("an empty ") + kFftSection + " section";
            continue;
        }
        const size_t arrow = line.find(" => ");
        if (arrow == std::string::npos || arrow == 0)
            return "line " + std::to_string(number) + ": not \"<problem> => <solver>\"";
        const std::string solver = line.substr(arrow + 4);
        if (find_solver(solver.c_str()) == nullptr)
            return "line " + std::to_string(number) + ": \"" + solver +
                   "\" names no solver of this build";
        out[line.substr(0, arrow)] = solver;
    }
    return std::string();
}

const char* wisdom_file()
{
    const char* f = std::getenv("FLCC_WISDOM_FILE");
    return f != nullptr && *f != '\0' ? f : nullptr;
}

// Imports FLCC_WISDOM_FILE once per process (caller holds the mutex); a missing, corrupt or
// foreign file is ignored. FFTW's part is handed over for the next transform plan.
void load_file_once()
{
    static bool done = false;
    if (done) return;
    done = true;
    const char* f = wisdom_file();
    if (f == nullptr) return;
    std::ifstream in(f);
    if (!in) return;
    std::stringstream ss;
    ss << in.rdbuf();
    std::map<std::string, std::string> parsed;
    std::string fft;
    if (!parse(ss.str(), parsed, fft).empty()) return;
    for (const auto& kv : parsed) store().emplace(kv.first, kv.second);
    if (!fft.empty()) defer_fft(fft);
}

// Writes the store to FLCC_WISDOM_FILE (caller holds the mutex), through a temporary file
// renamed into place so a reader never sees half a file.
void save_file()
{
    const char* f = wisdom_file();
    if (f == nullptr) return;
    const std::string tmp = std::string(f) + ".tmp" + std::to_string(getpid());
    {
        std::ofstream out(tmp, std::ios::trunc);
        if (!out) return;
        out << text_of(store());
        if (!out) return;
    }
    std::rename(tmp.c_str(), f);
}

}  // namespace

std::string lookup(const std::string& key)
{
    std::lock_guard<std::mutex> lock(mutex());
    load_file_once();
    const auto it = store().find(key);
    return it == store().end() ? std::string() : it->second;
}

void record(const std::string& key, const std::string& solver)
{
    std::lock_guard<std::mutex> lock(mutex());
    load_file_once();
    auto& s = store();
    const auto it = s.find(key);
    if (it != s.end() && it->second == solver) return;
    s[key] = solver;
    save_file();
}

std::string export_text()
{
    std::lock_guard<std::mutex> lock(mutex());
    load_file_once();
    return text_of(store());
}

flcc_result import_text(const std::string& text)
{
    std::map<std::string, std::string> parsed;
    std::string fft;
    const std::string why = parse(text, parsed, fft);
    if (!why.empty()) return fail(FLCC_INVALID_WISDOM, "wisdom %s", why.c_str());
    if (!fft.empty() && !import_fft(fft))
        return fail(FLCC_INVALID_WISDOM, "wisdom: FFTW refused its section (%s)",
                    fft.substr(0, fft.find('\n')).c_str());
    std::lock_guard<std::mutex> lock(mutex());
    load_file_once();
    for (const auto& kv : parsed) store()[kv.first] = kv.second;
    return FLCC_SUCCESS;
}

void forget()
{
    std::lock_guard<std::mutex> lock(mutex());
    store().clear();
#ifdef FLCC_HAVE_FFTW
    host::forget_fft_wisdom();
#endif
}

}  // namespace flcc::wisdom
