#include "truth_compare.h"

#include "input_error.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <utility>

namespace registration {

namespace {

std::vector<ResultRecord> read_csv(const std::string& path, const std::string& expected_header, size_t fields)
{
    std::ifstream in(path);
    if (!in) throw InputError(path + ": cannot open: " + std::strerror(errno));
    std::string line;
    if (!std::getline(in, line) || line != expected_header) {
        throw InputError(path + ": the first line is not \"" + expected_header + "\"");
    }
    std::vector<ResultRecord> records;
    for (long number = 2; std::getline(in, line); ++number) {
        std::vector<double> values;
        const char* p = line.c_str();
        for (;;) {
            char* end = nullptr;
            errno = 0;
            const double v = std::strtod(p, &end);
            if (end == p || errno == ERANGE) break;
            values.push_back(v);
            p = end;
            if (*p != ',') break;
            ++p;
        }
        if (values.size() != fields || *p != '\0') {
            throw InputError(path + ": line " + std::to_string(number) + ": expected " + std::to_string(fields) +
                             " numbers, got \"" + line + "\"");
        }
        ResultRecord r;
        r.frame = long(values[0]);
        r.roi = int(values[1]);
        r.y = values[2];
        r.x = values[3];
        r.dy = values[4];
        r.dx = values[5];
        if (fields > 6) {
            r.peak = values[6];
            r.quality = values[7];
        }
        records.push_back(r);
    }
    return records;
}

}  // namespace

std::vector<ResultRecord> read_result_csv(const std::string& path)
{
    return read_csv(path, "frame,roi,y,x,dy,dx,peak,quality", 8);
}

std::vector<ResultRecord> read_truth_csv(const std::string& path)
{
    return read_csv(path, "frame,roi,y,x,dy,dx", 6);
}

OffsetComparison compare_offsets(const std::vector<ResultRecord>& truth, const std::vector<ResultRecord>& result)
{
    std::map<std::pair<long, int>, const ResultRecord*> by_key;
    for (const ResultRecord& r : result) by_key[{r.frame, r.roi}] = &r;
    OffsetComparison c;
    double sum2 = 0, sum2_dy = 0, sum2_dx = 0, sum_dy = 0, sum_dx = 0;
    for (const ResultRecord& t : truth) {
        const auto found = by_key.find({t.frame, t.roi});
        if (found == by_key.end()) {
            ++c.missing;
            continue;
        }
        const ResultRecord& r = *found->second;
        if (std::abs(r.y - t.y) > 0.01 || std::abs(r.x - t.x) > 0.01) {
            ++c.misplaced;
            continue;
        }
        if (!std::isfinite(r.dy) || !std::isfinite(r.dx)) {
            ++c.not_measured;
            continue;
        }
        const double ey = r.dy - t.dy, ex = r.dx - t.dx;
        ++c.compared;
        sum2 += ey * ey + ex * ex;
        sum2_dy += ey * ey;
        sum2_dx += ex * ex;
        sum_dy += ey;
        sum_dx += ex;
        c.max_error = std::max(c.max_error, std::sqrt(ey * ey + ex * ex));
    }
    if (c.compared > 0) {
        c.rms = std::sqrt(sum2 / c.compared);
        c.rms_dy = std::sqrt(sum2_dy / c.compared);
        c.rms_dx = std::sqrt(sum2_dx / c.compared);
        c.mean_dy = sum_dy / c.compared;
        c.mean_dx = sum_dx / c.compared;
    }
    return c;
}

}  // namespace registration
