#include "plan/wisdom_file.h"

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace flcc::wisdom {

namespace {

// errno's text, thread-safe (both strerror_r variants).
[[maybe_unused]] const char* error_text(int, const char* r, char*) { return r; }
[[maybe_unused]] const char* error_text(int, int r, char* buf) { return r == 0 ? buf : "error"; }
std::string errno_text(int e)
{
    char buf[128] = "error";
    return error_text(e, strerror_r(e, buf, sizeof buf), buf);
}

// Closes a descriptor when it goes out of scope.
struct Fd {
    int fd;
    ~Fd()
    {
        if (fd >= 0) close(fd);
    }
};

}  // namespace

// Reads a wisdom file: a regular file of at most kMaxFileBytes. It is opened without blocking
// (a FIFO opens at once, then is refused like a device or a directory: none is a regular file),
// and the size is checked before anything is read. Returns FLCC_SUCCESS, FLCC_IO_ERROR or
// FLCC_INVALID_WISDOM (too large), with the reason in `why`.
flcc_result read_file(const char* path, std::string& text, std::string& why)
{
    const std::string name = std::string("wisdom file \"") + path + "\": ";
    Fd f{open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)};
    if (f.fd < 0) {
        why = name + errno_text(errno);
        return FLCC_IO_ERROR;
    }
    struct stat st;
    if (fstat(f.fd, &st) != 0) {
        why = name + errno_text(errno);
        return FLCC_IO_ERROR;
    }
    if (!S_ISREG(st.st_mode)) {
        why = name + "not a regular file";
        return FLCC_IO_ERROR;
    }
    const auto too_large = [&] {
        why = name + "larger than " + std::to_string(kMaxFileBytes) + " bytes: not wisdom";
        return FLCC_INVALID_WISDOM;
    };
    if (uint64_t(st.st_size) > kMaxFileBytes) return too_large();
    text.clear();
    text.reserve(size_t(st.st_size));
    char buf[65536];
    for (;;) {   // to the end, which may have moved since fstat
        const ssize_t n = read(f.fd, buf, sizeof buf);
        if (n == 0) break;
        if (n < 0) {
            if (errno == EINTR) continue;
            why = name + errno_text(errno);
            return FLCC_IO_ERROR;
        }
        if (text.size() + size_t(n) > kMaxFileBytes) return too_large();
        text.append(buf, size_t(n));
    }
    return FLCC_SUCCESS;
}

// Writes wisdom text to `path` atomically: into a new file beside the target (same directory,
// so the rename never crosses file systems), flushed to the disk, then renamed over the
// target, so a reader sees the old file or the new one, never half of one. The target must be
// absent, an empty regular file or FLCC wisdom (text that begins with kMagicWord): any other
// file, device, FIFO or directory is left untouched (FLCC_IO_ERROR). A symbolic link is followed:
// the file it names is replaced, the link stays. No temporary file remains on failure.
flcc_result write_file(const char* path, const std::string& text, std::string& why)
{
    std::string target = path;
    const std::string name = "wisdom file \"" + target + "\": ";
    if (target.empty() || target.back() == '/') {
        why = name + "not a file name";
        return FLCC_IO_ERROR;
    }
    if (text.size() > kMaxFileBytes) {
        why = name + "the wisdom (" + std::to_string(text.size()) + " bytes) exceeds the " +
              std::to_string(kMaxFileBytes) + " bytes of a wisdom file";
        return FLCC_IO_ERROR;
    }
    struct stat st;
    bool exists = false;
    {
        Fd f{open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)};
        if (f.fd < 0 && errno != ENOENT) {
            why = name + errno_text(errno);
            return FLCC_IO_ERROR;
        }
        if (f.fd >= 0) {
            exists = true;
            if (fstat(f.fd, &st) != 0) {
                why = name + errno_text(errno);
                return FLCC_IO_ERROR;
            }
            if (!S_ISREG(st.st_mode)) {
                why = name + "not a regular file: left unchanged";
                return FLCC_IO_ERROR;
            }
            const size_t want = std::strlen(kMagicWord);
            char head[32] = {};
            size_t got = 0;
            while (got < want) {
                const ssize_t n = read(f.fd, head + got, want - got);
                if (n < 0 && errno == EINTR) continue;
                if (n <= 0) break;
                got += size_t(n);
            }
            if (got != 0 && (got < want || std::memcmp(head, kMagicWord, want) != 0)) {
                why = name + "exists and is not FLCC wisdom: left unchanged";
                return FLCC_IO_ERROR;
            }
            char resolved[PATH_MAX];
            if (realpath(path, resolved) != nullptr) target = resolved;
        }
    }
    // The temporary file: a hidden name beside the target, unique to this process and call.
    static std::atomic<unsigned> counter{0};
    const size_t slash = target.rfind('/');
    const std::string dir = slash == std::string::npos ? std::string() : target.substr(0, slash + 1);
    const std::string base = slash == std::string::npos ? target : target.substr(slash + 1);
    std::string tmp;
    int fd = -1;
    for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
        tmp = dir + "." + base + ".tmp-" + std::to_string(getpid()) + "-" +
              std::to_string(counter.fetch_add(1));
        fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOCTTY | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) {
        why = name + "cannot create a file beside it: " + errno_text(errno);
        return FLCC_IO_ERROR;
    }
    if (exists) (void)fchmod(fd, st.st_mode & 07777);   // the replaced file's permissions
    const char* p = text.data();
    size_t left = text.size();
    int error = 0;
    while (left > 0 && error == 0) {
        const ssize_t n = write(fd, p, left);
        if (n < 0) {
            if (errno != EINTR) error = errno;
            continue;
        }
        p += n;
        left -= size_t(n);
    }
    if (error == 0 && fsync(fd) != 0) error = errno;
    if (close(fd) != 0 && error == 0) error = errno;
    if (error == 0 && std::rename(tmp.c_str(), target.c_str()) != 0) error = errno;
    if (error != 0) {
        unlink(tmp.c_str());
        why = name + errno_text(error);
        return FLCC_IO_ERROR;
    }
    return FLCC_SUCCESS;
}

}  // namespace flcc::wisdom
