// Fuzz target: wisdom import (flcc_wisdom_import). The input is the text, after two
// substitutions that let mutations reach past the header checks on any build and machine:
// "@SIG@" becomes this build's signature and "@FFTW@" FFTW's wisdom header line (both taken from
// an export at start-up). Checks, aborting on failure:
//   - the result is FLCC_SUCCESS or FLCC_INVALID_WISDOM, and a refused text changes nothing;
//   - accepted wisdom exports, and that export imports back (into a forgotten state) and
//     exports the same lines again;
//   - every decision it holds for a small problem plans with FLCC_WISDOM_ONLY to a solver that
//     can solve it (or is refused with a documented code), and that plan executes.
#include "flcc.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

namespace {

#define CHECK(cond)                                                                              \
    do {                                                                                         \
        if (!(cond)) {                                                                           \
            std::fprintf(stderr, "fuzz_wisdom: %s:%d: CHECK(%s) failed (last detail: %s)\n",     \
                         __FILE__, __LINE__, #cond, flcc_last_error_detail());                   \
            std::abort();                                                                        \
        }                                                                                        \
    } while (0)

std::string exported()
{
    char* text = nullptr;
    CHECK(flcc_wisdom_export(&text) == FLCC_SUCCESS && text != nullptr);
    std::string s(text);
    flcc_free(text);
    return s;
}

struct Placeholders {
    std::string signature, fftw_header;
};

const Placeholders& placeholders()
{
    static const Placeholders p = [] {
        Placeholders q;
        flcc_wisdom_forget();
        std::istringstream in(exported());
        std::string line;
        while (std::getline(in, line)) {
            if (line.compare(0, 10, "signature ") == 0) q.signature = line.substr(10);
            if (line.compare(0, 6, "(fftw-") == 0) q.fftw_header = line;
        }
        return q;
    }();
    return p;
}

void replace_all(std::string& s, const std::string& from, const std::string& to)
{
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
        s.replace(at, from.size(), to);
}

std::vector<std::string> sorted_lines(const std::string& text)
{
    std::vector<std::string> v;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) v.push_back(line);
    std::sort(v.begin(), v.end());
    return v;
}

// The decisions ("<key> => <solver>" lines) of an exported text.
std::vector<std::string> decisions(const std::string& text)
{
    std::vector<std::string> v;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (line == "fftw-wisdom") break;
        if (line.find(" => ") != std::string::npos) v.push_back(line.substr(0, line.find(" => ")));
    }
    return v;
}

// Plans the problem of a decision key with FLCC_WISDOM_ONLY and executes it once. Keys read
// "<op> <dim>d <image> t<templ> <region> <type> th<threads> <platform>[ resident]".
void plan_from_key(const std::string& key)
{
    char op[16], dims[8], image[40], templ[40], region[16], type[16], platform[16], resident[16] = "";
    int threads = 0;
    if (std::sscanf(key.c_str(), "%15s %7s %39s %39s %15s %15s th%d %15s %15s", op, dims, image,
                    templ, region, type, &threads, platform, resident) < 8)
        return;
    const int dim = std::strcmp(dims, "3d") == 0 ? 3 : std::strcmp(dims, "2d") == 0 ? 2 : 0;
    if (dim == 0) return;
    long long s[3] = {1, 1, 1}, t[3] = {1, 1, 1};
    const int ns = dim == 2 ? std::sscanf(image, "%lldx%lld", &s[0], &s[1])
                            : std::sscanf(image, "%lldx%lldx%lld", &s[0], &s[1], &s[2]);
    const int nt = dim == 2 ? std::sscanf(templ, "t%lldx%lld", &t[0], &t[1])
                            : std::sscanf(templ, "t%lldx%lldx%lld", &t[0], &t[1], &t[2]);
    if (ns != dim || nt != dim) return;
    long long ni = 1, ntp = 1;
    for (int a = 0; a < 3; ++a) {
        if (s[a] < 1 || t[a] < 1 || s[a] > 64 || t[a] > 64) return;
        ni *= s[a];
        ntp *= t[a];
    }
    if (ni * ntp > (1 << 20) || threads < 1 || threads > 4) return;

    flcc_options o;
    flcc_options_init(&o);
    o.rigor = FLCC_WISDOM_ONLY;
    o.threads = threads;
    o.region = std::strcmp(region, "same") == 0 ? FLCC_SAME : std::strcmp(region, "valid") == 0 ? FLCC_VALID : FLCC_FULL;
    o.type = std::strcmp(type, "stream") == 0 ? FLCC_STREAM : FLCC_SINGLE;
    o.platform = std::strcmp(platform, "device") == 0 ? FLCC_DEVICE : std::strcmp(platform, "any") == 0 ? FLCC_ANY : FLCC_HOST;
    o.device_resident = std::strcmp(resident, "resident") == 0;
    const flcc_op fop = std::strcmp(op, "conv") == 0 ? FLCC_CONV : FLCC_LCORR;
    const flcc_size si = {int(s[0]), int(s[1]), int(s[2])}, st = {int(t[0]), int(t[1]), int(t[2])};
    flcc_plan plan = nullptr;
    const flcc_result r = flcc_plan_create(&plan, fop, dim, si, st, &o);
    CHECK(r == FLCC_SUCCESS || r == FLCC_WISDOM_MISS || r == FLCC_INVALID_SIZE ||
          r == FLCC_NO_DEVICE || r == FLCC_METHOD_NOT_APPLICABLE);
    if (r != FLCC_SUCCESS) return;
    flcc_size os;
    CHECK(flcc_plan_output_size(plan, &os) == FLCC_SUCCESS);
    if (o.device_resident == 0) {
        std::vector<float> img(static_cast<size_t>(ni)), tp(static_cast<size_t>(ntp)),
            out(static_cast<size_t>(os.h) * os.w * os.d);
        for (size_t i = 0; i < img.size(); ++i) img[i] = float((i * 7919) % 257);
        for (size_t i = 0; i < tp.size(); ++i) tp[i] = float((i * 104729) % 31);
        const flcc_result e = fop == FLCC_CONV
                                  ? flcc_conv_exec(plan, img.data(), tp.data(), out.data(), 1)
                                  : flcc_lcorr_exec(plan, img.data(), tp.data(), out.data(), 1);
        CHECK(e == FLCC_SUCCESS);
        if (fop == FLCC_LCORR)
            for (float v : out) CHECK(std::isfinite(v) && std::fabs(v) <= 1.0f);
    }
    CHECK(flcc_destroy(plan) == FLCC_SUCCESS);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const Placeholders& ph = placeholders();
    std::string text(reinterpret_cast<const char*>(data), size);
    text = text.substr(0, text.find('\0'));   // what a C string of these bytes holds
    replace_all(text, "@SIG@", ph.signature);
    replace_all(text, "@FFTW@", ph.fftw_header);

    flcc_wisdom_forget();
    const flcc_result r = flcc_wisdom_import(text.c_str());
    CHECK(r == FLCC_SUCCESS || r == FLCC_INVALID_WISDOM);
    CHECK((r == FLCC_SUCCESS) == (flcc_last_error_detail()[0] == '\0'));
    if (r != FLCC_SUCCESS) {
        CHECK(decisions(exported()).empty());
        return 0;
    }
    const std::string first = exported();
    flcc_wisdom_forget();
    CHECK(flcc_wisdom_import(first.c_str()) == FLCC_SUCCESS);
    const std::string second = exported();
    CHECK(decisions(second) == decisions(first));
    CHECK(sorted_lines(second) == sorted_lines(first));   // FFTW writes in its hash table's order
    const std::vector<std::string> keys = decisions(second);
    for (size_t i = 0; i < keys.size() && i < 8; ++i) plan_from_key(keys[i]);
    CHECK(flcc_wisdom_import(nullptr) == FLCC_NULL_POINTER);
    return 0;
}
