// Reading flcc-register's CSV output back, and comparing its offsets with a synthetic set's
// truth file (frame,roi,y,x,dy,dx).
#pragma once

#include <string>
#include <vector>

namespace registration {

struct ResultRecord {
    long frame = 0;
    int roi = 0;
    double y = 0, x = 0, dy = 0, dx = 0, peak = 0, quality = 0;
};

// Reads a CSV file whose header is `expected_header` and whose rows have as many numeric fields
// (the first two integers). Throws InputError naming the file and line on anything else.
std::vector<ResultRecord> read_result_csv(const std::string& path);
std::vector<ResultRecord> read_truth_csv(const std::string& path);

struct OffsetComparison {
    long compared = 0;       // truth rows found in the result with finite offsets
    long not_measured = 0;   // found, with NaN offsets (skipped frame, peak on the map's edge)
    long missing = 0;        // truth rows absent from the result
    long misplaced = 0;      // found, but centred elsewhere (the result used another subregion layout)
    double rms = 0;          // root mean square of the error vector's length, pixels
    double rms_dy = 0, rms_dx = 0;
    double mean_dy = 0, mean_dx = 0;   // mean error (bias)
    double max_error = 0;    // largest error vector length
};

OffsetComparison compare_offsets(const std::vector<ResultRecord>& truth, const std::vector<ResultRecord>& result);

}  // namespace registration
