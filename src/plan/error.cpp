// This thread's error detail (plan/error.h) and the descriptions of the result codes.
#include "plan/error.h"

#include <cstdarg>
#include <cstdio>

namespace flcc {

namespace {

// This thread's error detail: plain bytes, so it needs no construction, destruction or
// allocation, and an empty detail is the empty string.
thread_local char t_detail[512];

}  // namespace

void set_detail(const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(t_detail, sizeof t_detail, fmt, ap);
    va_end(ap);
}

flcc_result fail(flcc_result code, const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(t_detail, sizeof t_detail, fmt, ap);
    va_end(ap);
    return code;
}

void clear_detail() { t_detail[0] = '\0'; }

bool detail_is_empty() { return t_detail[0] == '\0'; }

}  // namespace flcc

using namespace flcc;

extern "C" {

const char* flcc_last_error_detail(void) { return t_detail; }

const char* flcc_result_string(flcc_result code)
{
    // Read as an integer: any int may arrive from C (see enum_value).
    const int r = enum_value(code);
    switch (r) {
    case FLCC_SUCCESS: return "success";
    case FLCC_INVALID_PLAN: return "invalid plan (NULL, destroyed or unknown handle)";
    case FLCC_INVALID_DIMENSION: return "invalid dimension (must be 2 or 3)";
    case FLCC_INVALID_SIZE: return "invalid size (non-positive, overflowing, or template larger than image for the valid region)";
    case FLCC_INVALID_TYPE: return "invalid plan type";
    case FLCC_INVALID_PLATFORM: return "invalid platform";
    case FLCC_INVALID_VALUE: return "invalid argument value";
    case FLCC_ALLOC_FAILED: return "memory allocation failed";
    case FLCC_EXEC_FAILED: return "execution failed";
    case FLCC_NULL_POINTER: return "a required pointer argument is NULL";
    case FLCC_NONFINITE_INPUT: return "image or template holds NaN or Inf";
    case FLCC_UNKNOWN_METHOD: return "unknown method name";
    case FLCC_METHOD_NOT_APPLICABLE: return "the forced method cannot solve this problem";
    case FLCC_OPERATION_MISMATCH: return "plan was made for the other operation";
    case FLCC_NO_DEVICE: return "no usable GPU device";
    case FLCC_DEVICE_ERROR: return "a CUDA call failed";
    case FLCC_WISDOM_MISS: return "no wisdom for this problem";
    case FLCC_INVALID_WISDOM: return "wisdom is corrupt or from another configuration";
    case FLCC_IO_ERROR: return "wisdom file could not be read or written";
    case FLCC_INTERNAL_ERROR: return "internal error";
    }
    return "unknown result code";
}

}  // extern "C"
