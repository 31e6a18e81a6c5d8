#include "frame_source.h"

#include <cerrno>
#include <cstring>
#include <fstream>

namespace registration {

std::string FrameRef::name() const
{
    if (pages_in_file <= 1) return path;
    return path + " (page " + std::to_string(page.index + 1) + ")";
}

std::string describe_geometry(const PageInfo& page)
{
    return std::to_string(page.height) + "x" + std::to_string(page.width) + " " + std::to_string(page.bits) + "-bit";
}

namespace {

std::string folder_of(const std::string& path)
{
    const size_t slash = path.rfind('/');
    return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

void read_list_file(const std::string& list_path, std::vector<std::string>& paths)
{
    std::ifstream in(list_path);
    if (!in) throw InputError(list_path + ": cannot open the frame list: " + std::strerror(errno));
    const std::string folder = folder_of(list_path);
    const size_t before = paths.size();
    std::string line;
    while (std::getline(in, line)) {
        if (!line.empty() && line.back() == '\r') line.pop_back();   // lists written on Windows
        const size_t start = line.find_first_not_of(" \t");
        if (start == std::string::npos || line[start] == '#') continue;
        const size_t end = line.find_last_not_of(" \t");
        std::string path = line.substr(start, end - start + 1);
        if (path[0] != '/') path = folder + path;
        paths.push_back(path);
    }
    if (in.bad()) throw InputError(list_path + ": cannot read the frame list");
    if (paths.size() == before) throw InputError(list_path + ": the frame list names no file");
}

}  // namespace

std::vector<std::string> expand_frame_arguments(const std::vector<std::string>& arguments)
{
    std::vector<std::string> paths;
    for (const std::string& argument : arguments) {
        if (argument.size() > 1 && argument[0] == '@') {
            read_list_file(argument.substr(1), paths);
        } else {
            paths.push_back(argument);
        }
    }
    return paths;
}

std::vector<FrameRef> inspect_frames(const std::vector<std::string>& paths, bool keep_going)
{
    std::vector<FrameRef> frames;
    frames.reserve(paths.size());
    for (const std::string& path : paths) {
        std::vector<PageInfo> pages;
        try {
            pages = inspect_tiff(path);
        } catch (const TiffError& e) {
            if (!keep_going) throw;
            FrameRef bad;
            bad.path = path;
            bad.error = e.what();
            frames.push_back(bad);
            continue;
        }
        for (const PageInfo& page : pages) {
            FrameRef frame;
            frame.path = path;
            frame.page = page;
            frame.pages_in_file = int(pages.size());
            frames.push_back(frame);
        }
    }
    return frames;
}

void check_geometry(std::vector<FrameRef>& frames, const PageInfo& expected, const std::string& expected_name,
                    bool keep_going)
{
    for (FrameRef& frame : frames) {
        if (!frame.usable()) continue;
        if (frame.page.height == expected.height && frame.page.width == expected.width &&
            frame.page.bits == expected.bits) {
            continue;
        }
        const std::string message = frame.name() + ": " + describe_geometry(frame.page) + ", but " + expected_name +
                                    " is " + describe_geometry(expected) + " (every frame must match)";
        if (!keep_going) throw InputError(message);
        frame.error = message;
    }
}

}  // namespace registration
