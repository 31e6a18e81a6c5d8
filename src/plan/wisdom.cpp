#include "plan/wisdom.h"

#include "plan/registry.h"

#ifdef FLCC_HAVE_HOST
#include "host/kernels/kernel_set.h"
#endif
#ifdef FLCC_HAVE_FFTW
#include "host/real_fft.h"
#endif
#ifdef FLCC_HAVE_CUDA
#include <cuda_runtime.h>
#endif

#include "plan/error.h"

#include <atomic>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace flcc::wisdom {

namespace {

constexpr const char* kMagic = "flcc-wisdom 1";
// Every version's text begins with this: a file that does not is not FLCC wisdom.
constexpr const char* kMagicWord = "flcc-wisdom ";
// The largest wisdom file read or written. Wisdom is far smaller (a decision is one line; FFTW's
// part grows by a few lines per transform size), so a larger file is not wisdom, and a bounded
// read keeps a wrong path (a disk image, /dev/zero) from costing time and memory.
constexpr size_t kMaxFileBytes = size_t(4) << 20;
// FFTW's wisdom text sits between these two lines (builds with FFTW).
constexpr const char* kFftSection = "fftw-wisdom";
constexpr const char* kFftEnd = "end fftw-wisdom";

std::string fft_wisdom()
{
#ifdef FLCC_HAVE_FFTW
    return host::export_fft_wisdom();
#else
    return std::string();
#endif
}

// Deferred: FFTW reads it when a host Fourier plan next needs a transform.
void defer_fft(const std::string& text)
{
#ifdef FLCC_HAVE_FFTW
    host::defer_fft_wisdom(text);
#else
    (void)text;
#endif
}

bool import_fft(const std::string& text)
{
#ifdef FLCC_HAVE_FFTW
    return host::import_fft_wisdom(text);
#else
    return text.empty();   // FFTW wisdom where this build has no FFTW: foreign
#endif
}

std::mutex& mutex()
{
    static std::mutex m;
    return m;
}

std::map<std::string, std::string>& store()
{
    static std::map<std::string, std::string> s;
    return s;
}

uint64_t fnv1a(const std::string& s, uint64_t h = 1469598103934665603ull)
{
    for (unsigned char c : s) {
        h ^= c;
        h *= 1099511628211ull;
    }
    return h;
}

// What makes a decision portable: the same library, solvers, instruction set and GPU.
std::string signature()
{
    static const std::string sig = [] {
        std::string text = FLCC_VERSION_STRING;
        for (const Solver* s : all_solvers()) text += std::string(" ") + s->name();
#ifdef FLCC_HAVE_HOST
        text += std::string(" isa=") + host::select_kernel_set().isa;
#endif
#ifdef FLCC_HAVE_CUDA
        int dev = 0;
        cudaDeviceProp prop;
        if (cudaGetDevice(&dev) == cudaSuccess && cudaGetDeviceProperties(&prop, dev) == cudaSuccess)
            text += std::string(" gpu=") + prop.name + " sm" + std::to_string(prop.major * 10 + prop.minor);
        else
            cudaGetLastError();
#endif
        char hex[17];
        std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(fnv1a(text)));
        return std::string(hex);
    }();
    return sig;
}

std::string text_of(const std::map<std::string, std::string>& s)
{
    std::string t = std::string(kMagic) + "\nsignature " + signature() + "\n";
    for (const auto& kv : s) t += kv.first + " => " + kv.second + "\n";
    const std::string fft = fft_wisdom();
    if (!fft.empty()) {
        t += std::string(kFftSection) + "\n" + fft;
        if (fft.back() != '\n') t += "\n";
        t += std::string(kFftEnd) + "\n";
    }
    return t;
}

// Whether FFTW's wisdom text has the form FFTW 3.3 writes, with values FFTW can hold: "" when
// it has, else why not. FFTW's own reader aborts the process on values that overflow the
// bit fields of its flags_t (l and u 20 bits, timelimit_impatience 9 bits: "assertion failed:
// flags.u == u"), so text from a file or a caller reaches FFTW only after this check. The form:
//   (fftw-<version> fftwf_wisdom #x<md5> #x<md5> #x<md5> #x<md5>
//     (<solver> <reg_id> #x<l> #x<u> #x<timelimit_impatience> #x<md5> #x<md5> #x<md5> #x<md5>)
//     ...
//   )
// with whitespace anywhere between tokens, hex numbers of 1 to 8 digits, solver names of at most
// 64 letters, digits and underscores (FFTW's MAXNAM), reg_id of at most 9 decimal digits.
std::string fftw_text_problem(const std::string& text)
{
    std::vector<std::string> tok;
    for (size_t i = 0; i < text.size();) {
        const unsigned char c = static_cast<unsigned char>(text[i]);
        if (std::isspace(c)) {
            ++i;
        } else if (c == '(' || c == ')') {
            tok.emplace_back(1, char(c));
            ++i;
        } else {
            size_t j = i;
            while (j < text.size() && !std::isspace(static_cast<unsigned char>(text[j])) &&
                   text[j] != '(' && text[j] != ')')
                ++j;
            tok.push_back(text.substr(i, j - i));
            i = j;
        }
    }
    // A "#x" hex number of 1-8 digits below `limit`.
    const auto hex = [](const std::string& t, uint64_t limit) {
        if (t.size() < 3 || t.size() > 10 || t.compare(0, 2, "#x") != 0) return false;
        uint64_t v = 0;
        for (size_t i = 2; i < t.size(); ++i) {
            const int c = static_cast<unsigned char>(t[i]);
            if (!std::isxdigit(c)) return false;
            v = v * 16 + uint64_t(std::isdigit(c) ? c - '0' : std::tolower(c) - 'a' + 10);
        }
        return v < limit;
    };
    const auto name = [](const std::string& t) {
        if (t.empty() || t.size() > 64) return false;
        for (char c : t)
            if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
        return true;
    };
    const auto number = [](const std::string& t) {
        if (t.empty() || t.size() > 9) return false;
        for (char c : t)
            if (!std::isdigit(static_cast<unsigned char>(c))) return false;
        return true;
    };
    constexpr uint64_t any = uint64_t(1) << 32;
    if (tok.size() < 7 || tok[0] != "(" || tok[1].compare(0, 5, "fftw-") != 0 ||
        tok[2] != "fftwf_wisdom" || !hex(tok[3], any) || !hex(tok[4], any) || !hex(tok[5], any) ||
        !hex(tok[6], any))
        return "no FFTW wisdom header";
    size_t k = 7;
    for (int entry = 1; k < tok.size() && tok[k] == "("; ++entry) {
        if (k + 11 > tok.size() || !name(tok[k + 1]) || !number(tok[k + 2]) ||
            !hex(tok[k + 3], uint64_t(1) << 20) || !hex(tok[k + 4], uint64_t(1) << 20) ||
            !hex(tok[k + 5], uint64_t(1) << 9) || !hex(tok[k + 6], any) || !hex(tok[k + 7], any) ||
            !hex(tok[k + 8], any) || !hex(tok[k + 9], any) || tok[k + 10] != ")")
            return "FFTW entry " + std::to_string(entry) + " malformed or out of range";
        k += 11;
    }
    if (k + 1 != tok.size() || tok[k] != ")") return "FFTW wisdom not closed by \")\" alone";
    return std::string();
}

// Parses text into decisions and FFTW's wisdom text (empty when absent). Returns "" when it is
// wisdom of this configuration, else why it is not (the first broken rule).
std::string parse(const std::string& text, std::map<std::string, std::string>& out, std::string& fft)
{
    std::istringstream in(text);
    in.exceptions(std::ios::badbit);   // a failed allocation is std::bad_alloc, not corrupt text
    std::string line;
    if (!std::getline(in, line) || line != kMagic)
        return std::string("line 1: not \"") + kMagic + "\"";
    if (!std::getline(in, line) || line.compare(0, 10, "signature ") != 0)
        return "line 2: no signature";
    if (line != "signature " + signature())
        return "line 2: " + line + ": wisdom of another configuration (this build: " +
               signature() + ")";
    fft.clear();
    for (int number = 3; std::getline(in, line); ++number) {
        if (line.empty()) continue;
        if (line == kFftSection) {   // FFTW's text, up to its end line (a cut file has none)
            bool closed = false;
            while (std::getline(in, line)) {
                ++number;
                if (line == kFftEnd) {
                    closed = true;
                    break;
                }
                fft += line + "\n";
            }
            if (!closed) return std::string("no \"") + kFftEnd + "\" line";
            if (fft.empty()) return std::string("an empty ") + kFftSection + " section";
            const std::string bad = fftw_text_problem(fft);
            if (!bad.empty()) return std::string(kFftSection) + " section: " + bad;
            continue;
        }
        const size_t arrow = line.find(" => ");
        if (arrow == std::string::npos || arrow == 0)
            return "line " + std::to_string(number) + ": not \"<problem> => <solver>\"";
        const std::string solver = line.substr(arrow + 4);
        if (find_solver(solver.c_str()) == nullptr)
            return "line " + std::to_string(number) + ": \"" + solver +
                   "\" names no solver of this build";
        out[line.substr(0, arrow)] = solver;
    }
    return std::string();
}

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

const char* wisdom_file()
{
    const char* f = std::getenv("FLCC_WISDOM_FILE");
    return f != nullptr && *f != '\0' ? f : nullptr;
}

// Imports FLCC_WISDOM_FILE once per process (caller holds the mutex); a missing, unreadable,
// corrupt or foreign file is ignored. FFTW's part is handed over for the next transform plan.
void load_file_once()
{
    static bool done = false;
    if (done) return;
    done = true;
    const char* f = wisdom_file();
    if (f == nullptr) return;
    std::string text, why;
    if (read_file(f, text, why) != FLCC_SUCCESS) return;
    std::map<std::string, std::string> parsed;
    std::string fft;
    if (!parse(text, parsed, fft).empty()) return;
    for (const auto& kv : parsed) store().emplace(kv.first, kv.second);
    if (!fft.empty()) defer_fft(fft);
}

// Writes the store to FLCC_WISDOM_FILE (caller holds the mutex); a file that cannot be written
// or is not wisdom is left as it is (see write_file).
void save_file()
{
    const char* f = wisdom_file();
    if (f == nullptr) return;
    std::string why;
    write_file(f, text_of(store()), why);
}

}  // namespace

std::string lookup(const std::string& key)
{
    std::lock_guard<std::mutex> lock(mutex());
    load_file_once();
    const auto it = store().find(key);
    return it == store().end() ? std::string() : it->second;
}

void record(const std::string& key, const std::string& solver)
{
    std::lock_guard<std::mutex> lock(mutex());
    load_file_once();
    auto& s = store();
    const auto it = s.find(key);
    if (it != s.end() && it->second == solver) return;
    s[key] = solver;
    save_file();
}

std::string export_text()
{
    std::lock_guard<std::mutex> lock(mutex());
    load_file_once();
    return text_of(store());
}

flcc_result import_text(const std::string& text)
{
    std::map<std::string, std::string> parsed;
    std::string fft;
    const std::string why = parse(text, parsed, fft);
    if (!why.empty()) return fail(FLCC_INVALID_WISDOM, "wisdom %s", why.c_str());
    if (!fft.empty() && !import_fft(fft))
        return fail(FLCC_INVALID_WISDOM, "wisdom: FFTW refused its section (%s)",
                    fft.substr(0, fft.find('\n')).c_str());
    std::lock_guard<std::mutex> lock(mutex());
    load_file_once();
    for (const auto& kv : parsed) store()[kv.first] = kv.second;
    return FLCC_SUCCESS;
}

flcc_result import_file(const char* path)
{
    std::string text, why;
    const flcc_result r = read_file(path, text, why);
    if (r != FLCC_SUCCESS) return fail(r, "%s", why.c_str());
    return import_text(text);
}

flcc_result export_file(const char* path)
{
    const std::string text = export_text();
    std::string why;
    const flcc_result r = write_file(path, text, why);
    if (r != FLCC_SUCCESS) return fail(r, "%s", why.c_str());
    return FLCC_SUCCESS;
}

void forget()
{
    std::lock_guard<std::mutex> lock(mutex());
    store().clear();
#ifdef FLCC_HAVE_FFTW
    host::forget_fft_wisdom();
#endif
}

}  // namespace flcc::wisdom
