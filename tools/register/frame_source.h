// The frames of a run: FRAME arguments expanded into files, files into pages.
//
// A FRAME argument is a TIFF file (every page of a multi-page file is a frame, in page order) or
// @LIST, a text file of one path per line (blank lines and lines starting with '#' skipped;
// relative paths are relative to the list file's folder, so a list travels with its data).
#pragma once

#include "tiff_io.h"

#include <string>
#include <vector>

namespace registration {

struct FrameRef {
    std::string path;
    PageInfo page;        // geometry and location, valid when error is empty
    int pages_in_file = 1;
    std::string error;    // why this frame cannot be used (recorded under --keep-going)

    bool usable() const { return error.empty(); }
    // "path", or "path (page N)" for a page of a multi-page file.
    std::string name() const;
};

// The file paths of the FRAME arguments, in order. Throws InputError naming a list file that
// cannot be read or names no file.
std::vector<std::string> expand_frame_arguments(const std::vector<std::string>& arguments);

// Inspects every file (directories only, no pixel data): one FrameRef per page. A file that
// cannot be inspected throws its TiffError, or with keep_going becomes one unusable FrameRef.
std::vector<FrameRef> inspect_frames(const std::vector<std::string>& paths, bool keep_going);

// Checks that every usable frame has the size and bit depth of `expected` (the geometry of the
// frame named `expected_name`). A frame that differs throws InputError naming it, or with
// keep_going is marked unusable.
void check_geometry(std::vector<FrameRef>& frames, const PageInfo& expected, const std::string& expected_name,
                    bool keep_going);

// "HxW B-bit", as the messages say it.
std::string describe_geometry(const PageInfo& page);

}  // namespace registration
