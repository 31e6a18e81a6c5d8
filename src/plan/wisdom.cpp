#include "plan/wisdom.h"

#include "plan/registry.h"

#ifdef FLCC_HAVE_HOST
#include "host/kernels/kernel_set.h"
#endif
#ifdef FLCC_HAVE_CUDA
#include <cuda_runtime.h>
#endif

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
    return t;
}

// Parses text; false when it is not wisdom of this configuration or names unknown solvers.
bool parse(const std::string& text, std::map<std::string, std::string>& out)
{
    std::istringstream in(text);
    std::string line;
    if (!std::getline(in, line) || line != kMagic) return false;
    if (!std::getline(in, line) || line != "signature " + signature()) return false;
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        const size_t arrow = line.find(" => ");
        if (arrow == std::string::npos || arrow == 0) return false;
        const std::string solver = line.substr(arrow + 4);
        if (find_solver(solver.c_str()) == nullptr) return false;
        out[line.substr(0, arrow)] = solver;
    }
    return true;
}

const char* wisdom_file()
{
    const char* f = std::getenv("FLCC_WISDOM_FILE");
    return f != nullptr && *f != '\0' ? f : nullptr;
}

// Imports FLCC_WISDOM_FILE once per process (caller holds the mutex); a missing, corrupt or
// foreign file is ignored.
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
    if (parse(ss.str(), parsed))
        for (const auto& kv : parsed) store().emplace(kv.first, kv.second);
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
    if (!parse(text, parsed)) return FLCC_INVALID_WISDOM;
    std::lock_guard<std::mutex> lock(mutex());
    load_file_once();
    for (const auto& kv : parsed) store()[kv.first] = kv.second;
    return FLCC_SUCCESS;
}

void forget()
{
    std::lock_guard<std::mutex> lock(mutex());
    store().clear();
}

}  // namespace flcc::wisdom
