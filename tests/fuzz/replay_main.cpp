// Runs a fuzz target's inputs without libFuzzer: every file named on the command line and
// every regular file in every directory named (not recursively), in name order, through
// LLVMFuzzerTestOneInput. Fails when it finds no input at all (a wrong corpus path is an error,
// not a pass). A target's failed check aborts, naming the input it was given just before.
//
// At the end, with every plan destroyed, it calls fftwf_cleanup_threads(): this program is
// FFTW's only user in its process, so FFTW's memory is freed and a leak checker sees the
// library's memory alone. (The library itself never calls it: FFTW's state is process-wide,
// shared with the host program's own FFTW plans, which the cleanup would invalidate.)
#include "flcc.h"

#ifdef FLCC_REPLAY_FFTW_CLEANUP
#include <fftw3.h>
#endif

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv)
{
    namespace fs = std::filesystem;
    std::vector<fs::path> files;
    for (int i = 1; i < argc; ++i) {
        const fs::path p(argv[i]);
        if (fs::is_directory(p)) {
            for (const auto& e : fs::directory_iterator(p))
                if (e.is_regular_file()) files.push_back(e.path());
        } else {
            files.push_back(p);
        }
    }
    std::sort(files.begin(), files.end());
    if (files.empty()) {
        std::fprintf(stderr, "replay: no inputs\n");
        return 1;
    }
    for (const fs::path& f : files) {
        std::ifstream in(f, std::ios::binary);
        if (!in) {
            std::fprintf(stderr, "replay: cannot read %s\n", f.c_str());
            return 1;
        }
        std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        std::fprintf(stderr, "replay: %s\n", f.c_str());
        // A copy of exactly the input's size, so that a read past its end is an error that
        // sanitizers see.
        std::vector<uint8_t> exact(bytes);
        LLVMFuzzerTestOneInput(exact.data(), exact.size());
    }
    std::printf("replay: %zu inputs\n", files.size());
    flcc_wisdom_forget();
#ifdef FLCC_REPLAY_FFTW_CLEANUP
    fftwf_cleanup_threads();
#endif
    return 0;
}
