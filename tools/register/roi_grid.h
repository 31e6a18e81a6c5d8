// The subregions (ROIs) compared in every frame: a regular grid or the origins listed in a file.
// Every subregion is roi_size x roi_size; its origin is its top-left pixel, (row, column) in the
// frame. The order of the grid is row-major (top row first); a file's order is kept. The index in
// that order is the `roi` column of the output.
#pragma once

#include <string>
#include <vector>

namespace registration {

struct Subregion {
    int y = 0;   // row of the top-left pixel
    int x = 0;   // column of the top-left pixel
};

// The grid of size x size subregions, `step` apart, inside a border of `margin` pixels, centred in
// that area (the pixels left over are split between both sides). Empty when none fits.
std::vector<Subregion> grid_subregions(int frame_height, int frame_width, int size, int step, int margin);

// Reads a file of origins: one subregion per line, "y x" or "y,x" (integers); blank lines and
// lines starting with '#' are skipped. Throws InputError naming the file and line.
std::vector<Subregion> read_subregion_file(const std::string& path);

// Throws InputError when a subregion leaves the frame; the message starts with `source` (the
// origins file, or the frame the grid was laid on) and names the subregion.
void check_subregions_inside(const std::vector<Subregion>& subregions, int size, int frame_height, int frame_width,
                             const std::string& source);

}  // namespace registration
