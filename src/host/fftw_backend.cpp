// The FFTW backend: the host Fourier solvers, and FFTW's own wisdom as the "fftw-wisdom"
// section of FLCC's wisdom text, so that a plan found in wisdom also makes its FFTW plans
// without timing them.
#include "host/real_fft.h"
#include "plan/backend.h"

#include <cctype>
#include <cstdint>
#include <string>
#include <vector>

namespace flcc {

void register_host_fourier(SolverList& list);          // host/fourier_solver.cpp
void register_host_linear_fourier(SolverList& list);   // host/linear_fourier_solver.cpp

namespace {

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

class FftwBackend final : public Backend {
public:
    void add_solvers(SolverList& list) const override
    {
        register_host_fourier(list);
        register_host_linear_fourier(list);
    }
    const char* wisdom_section() const override { return "fftw-wisdom"; }
    std::string export_wisdom() const override { return host::export_fft_wisdom(); }
    std::string check_wisdom(const std::string& text) const override
    {
        return fftw_text_problem(text);
    }
    bool import_wisdom(const std::string& text) const override
    {
        return host::import_fft_wisdom(text);
    }
    void defer_wisdom(const std::string& text) const override { host::defer_fft_wisdom(text); }
    void forget_wisdom() const override { host::forget_fft_wisdom(); }
};

}  // namespace

const Backend& fftw_backend()
{
    static const FftwBackend b;
    return b;
}

}  // namespace flcc
