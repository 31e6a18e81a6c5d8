#include "plan/wisdom.h"

#include "plan/error.h"
#include "plan/registry.h"
#include "plan/wisdom_file.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <sstream>
#include <utility>
#include <vector>

namespace flcc::wisdom {

namespace {

constexpr const char* kMagic = "flcc-wisdom 1";

// The sections of backends that keep wisdom of their own (FFTW's), parsed from a text.
using Sections = std::vector<std::pair<const Backend*, std::string>>;

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
        for (const Backend* b : backends()) text += b->signature();
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
    for (const Backend* b : backends()) {
        const char* section = b->wisdom_section();
        if (section == nullptr) continue;
        const std::string own = b->export_wisdom();
        if (own.empty()) continue;
        t += std::string(section) + "\n" + own;
        if (own.back() != '\n') t += "\n";
        t += std::string("end ") + section + "\n";
    }
    return t;
}

// The backend whose wisdom section a line opens, or nullptr.
const Backend* section_of(const std::string& line)
{
    for (const Backend* b : backends())
        if (b->wisdom_section() != nullptr && line == b->wisdom_section()) return b;
    return nullptr;
}

// Parses text into decisions and the backends' sections. Returns "" when it is wisdom of this
// configuration, else why it is not (the first broken rule).
std::string parse(const std::string& text, std::map<std::string, std::string>& out, Sections& sections)
{
    std::istringstream in(text);
    in.exceptions(std::ios::badbit);   // a failed allocation is std::bad_alloc, not corrupt text
    std::string line;
    if (!std::getline(in, line) || line != kMagic)
        return std::string("line 1: not \"") + kMagic + "\"";
    if (!std::getline(in, line) || line.compare(0, 10, "signature ") != 0)
        return "line 2: no signature";
    if (line != "signature " + signature())
        return "line 2: " + line + ": wisdom of another configuration (this build: " +
               signature() + ")";
    sections.clear();
    for (int number = 3; std::getline(in, line); ++number) {
        if (line.empty()) continue;
        if (const Backend* b = section_of(line)) {   // up to its end line (a cut file has none)
            const std::string name = line, end = "end " + line;
            std::string own;
            bool closed = false;
            while (std::getline(in, line)) {
                ++number;
                if (line == end) {
                    closed = true;
                    break;
                }
                own += line + "\n";
            }
            if (!closed) return "no \"" + end + "\" line";
            if (own.empty()) return "an empty " + name + " section";
            const std::string bad = b->check_wisdom(own);
            if (!bad.empty()) return name + " section: " + bad;
            sections.emplace_back(b, std::move(own));
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

// Imports FLCC_WISDOM_FILE once per process (caller holds the mutex); a missing, unreadable,
// corrupt or foreign file is ignored. The backends' sections are handed over for when they are
// next needed (FFTW's: the next transform plan).
void load_file_once()
{
    static bool done = false;
    if (done) return;
    done = true;
    const char* f = wisdom_file();
    if (f == nullptr) return;
    std::string text, why;
    if (read_file(f, text, why) != FLCC_SUCCESS) return;
    std::map<std::string, std::string> parsed;
    Sections sections;
    if (!parse(text, parsed, sections).empty()) return;
    for (const auto& kv : parsed) store().emplace(kv.first, kv.second);
    for (const auto& s : sections) s.first->defer_wisdom(s.second);
}

// Writes the store to FLCC_WISDOM_FILE (caller holds the mutex); a file that cannot be written
// or is not wisdom is left as it is (see write_file).
void save_file()
{
    const char* f = wisdom_file();
    if (f == nullptr) return;
    std::string why;
    write_file(f, text_of(store()), why);
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
    Sections sections;
    const std::string why = parse(text, parsed, sections);
    if (!why.empty()) return fail(FLCC_INVALID_WISDOM, "wisdom %s", why.c_str());
    for (const auto& s : sections)
        if (!s.first->import_wisdom(s.second))
            return fail(FLCC_INVALID_WISDOM, "wisdom: the %s section was refused (%s)",
                        s.first->wisdom_section(), s.second.substr(0, s.second.find('\n')).c_str());
    std::lock_guard<std::mutex> lock(mutex());
    load_file_once();
    for (const auto& kv : parsed) store()[kv.first] = kv.second;
    return FLCC_SUCCESS;
}

flcc_result import_file(const char* path)
{
    std::string text, why;
    const flcc_result r = read_file(path, text, why);
    if (r != FLCC_SUCCESS) return fail(r, "%s", why.c_str());
    return import_text(text);
}

flcc_result export_file(const char* path)
{
    const std::string text = export_text();
    std::string why;
    const flcc_result r = write_file(path, text, why);
    if (r != FLCC_SUCCESS) return fail(r, "%s", why.c_str());
    return FLCC_SUCCESS;
}

void forget()
{
    std::lock_guard<std::mutex> lock(mutex());
    store().clear();
    for (const Backend* b : backends()) b->forget_wisdom();
}

}  // namespace flcc::wisdom
