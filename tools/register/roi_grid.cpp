#include "roi_grid.h"

#include "input_error.h"

#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <sstream>

namespace registration {

namespace {

// Positions of the grid along one axis of `extent` pixels.
std::vector<int> grid_axis(int extent, int size, int step, int margin)
{
    std::vector<int> positions;
    const long long room = (long long)extent - 2LL * margin - size;   // origins run over [margin, margin + room]
    if (room < 0 || step < 1) return positions;
    const long long count = room / step + 1;
    const long long first = margin + (room - (count - 1) * step) / 2;
    for (long long i = 0; i < count; ++i) positions.push_back(int(first + i * step));
    return positions;
}

}  // namespace

std::vector<Subregion> grid_subregions(int frame_height, int frame_width, int size, int step, int margin)
{
    std::vector<Subregion> subregions;
    for (int y : grid_axis(frame_height, size, step, margin)) {
        for (int x : grid_axis(frame_width, size, step, margin)) subregions.push_back({y, x});
    }
    return subregions;
}

std::vector<Subregion> read_subregion_file(const std::string& path)
{
    std::ifstream in(path);
    if (!in) throw InputError(path + ": cannot open the subregion file: " + std::strerror(errno));
    std::vector<Subregion> subregions;
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
        for (char& c : line) {
            if (c == ',' || c == '\r' || c == '\t') c = ' ';
        }
        const size_t start = line.find_first_not_of(' ');
        if (start == std::string::npos || line[start] == '#') continue;
        std::istringstream fields(line);
        long long y = 0, x = 0;
        std::string rest;
        if (!(fields >> y >> x) || (fields >> rest) || y < INT_MIN || y > INT_MAX || x < INT_MIN || x > INT_MAX) {
            throw InputError(path + ": line " + std::to_string(number) + ": expected two integers \"y x\" (a subregion's top-left pixel), got \"" + line + "\"");
        }
        subregions.push_back({int(y), int(x)});
    }
    if (in.bad()) throw InputError(path + ": cannot read the subregion file");
    if (subregions.empty()) throw InputError(path + ": the subregion file lists no subregion");
    return subregions;
}

void check_subregions_inside(const std::vector<Subregion>& subregions, int size, int frame_height, int frame_width,
                             const std::string& source)
{
    for (size_t i = 0; i < subregions.size(); ++i) {
        const Subregion& s = subregions[i];
        if (s.y >= 0 && s.x >= 0 && (long long)s.y + size <= frame_height && (long long)s.x + size <= frame_width) {
            continue;
        }
        throw InputError(source + ": subregion " + std::to_string(i) + " at (" + std::to_string(s.y) + ", " +
                         std::to_string(s.x) + ") of " + std::to_string(size) + "x" + std::to_string(size) +
                         " leaves the " + std::to_string(frame_height) + "x" + std::to_string(frame_width) + " frame");
    }
}

}  // namespace registration
