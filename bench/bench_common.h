// Small helpers shared by the benchmark programs (flcc-bench, flcc-planner-map, npp_bench):
// splitting lists, the CPU's name, JSON string escaping. Header-only, so that npp_bench.cpp,
// built alone by nvcc on the GPU machine, needs nothing else.
#pragma once

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

// The CPU's model name from /proc/cpuinfo, or "unknown".
inline std::string cpu_model()
{
    std::ifstream f("/proc/cpuinfo");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
    return "unknown";
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
