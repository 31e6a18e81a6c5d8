// Small helpers shared by the benchmark programs (flcc-bench, flcc-planner-map, npp_bench):
// splitting lists, the CPU's name, JSON string escaping. Header-only, so that npp_bench.cpp,
// built alone by nvcc on the GPU machine, needs nothing else.
#pragma once

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace bench {

// "a,b,,c" -> {"a", "b", "c"} (empty items dropped).
inline std::vector<std::string> split(const std::string& s, char sep)
{
    std::vector<std::string> out;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, sep))
        if (!item.empty()) out.push_back(item);
    return out;
}

// The CPU's model name with its family, model and widest vector ISA, from /proc/cpuinfo (a
// VM's model name alone, "AMD EPYC", does not tell a Zen 3 from a Zen 4), or "unknown". The
// same text as cpu_model() in bench/peers/common.py.
inline std::string cpu_model()
{
    std::ifstream f("/proc/cpuinfo");
    std::string line, name, family = "?", model = "?", flags;
    const auto value = [&] {
        const size_t colon = line.find(':');
        return colon == std::string::npos ? std::string() : line.substr(std::min(line.size(), colon + 2));
    };
    while (std::getline(f, line) && !line.empty()) {   // the first processor is enough
        if (line.rfind("model name", 0) == 0) name = value();
        else if (line.rfind("cpu family", 0) == 0) family = value();
        else if (line.rfind("model", 0) == 0) model = value();
        else if (line.rfind("flags", 0) == 0) flags = " " + value() + " ";
    }
    if (name.empty()) return "unknown";
    const char* isa = flags.find(" avx512f ") != std::string::npos ? "AVX-512"
                      : flags.find(" avx2 ") != std::string::npos  ? "AVX2"
                                                                   : "SSE2";
    return name + " (family " + family + ", model " + model + ", " + isa + ")";
}

// s with '"' and '\' escaped, for use inside a JSON string.
inline std::string json_escape(const std::string& s)
{
    std::string o;
    for (char c : s) {
        if (c == '"' || c == '\\') o += '\\';
        o += c;
    }
    return o;
}

}  // namespace bench
