// Helpers of the flcc-register tests: temporary folders, running the tool, reading its output.
#pragma once

#include <string>
#include <vector>

namespace registration_test {

// A new empty folder under $TMPDIR (or /tmp), removed with its files when the object goes.
class TemporaryFolder {
public:
    TemporaryFolder();
    ~TemporaryFolder();
    TemporaryFolder(const TemporaryFolder&) = delete;
    TemporaryFolder& operator=(const TemporaryFolder&) = delete;
    const std::string& path() const { return path_; }
    std::string operator/(const std::string& name) const { return path_ + "/" + name; }

private:
    std::string path_;
};

struct ToolRun {
    int exit_status = -1;     // the exit code, or 128 + the signal that ended it
    std::string out, err;     // standard output and error
};

// Runs flcc-register with `arguments`, waiting for it to end.
ToolRun run_tool(const std::vector<std::string>& arguments);

std::string read_text(const std::string& path);
void write_text(const std::string& path, const std::string& text);
std::vector<std::string> lines_of(const std::string& text);

}  // namespace registration_test

namespace registration_test {

// Starts flcc-register with standard output and error going to files; returns its process id.
int start_tool(const std::vector<std::string>& arguments, const std::string& out_path, const std::string& err_path);
// Waits for a started tool; returns its exit code, or 128 + the signal that ended it.
int wait_tool(int pid);

}  // namespace registration_test
