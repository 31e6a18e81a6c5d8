// The detail of the last failure on this thread (flcc_last_error_detail): which argument broke
// which rule. A fixed per-thread buffer, so that setting it never allocates (it also describes
// allocation failures) and reading it never returns NULL.
#pragma once

#include "flcc.h"

namespace flcc {

// Sets the detail, printf style (cut to the buffer's size).
void set_detail(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// Sets the detail and returns `code`: `return fail(FLCC_INVALID_VALUE, "count = %d ...", n);`.
flcc_result fail(flcc_result code, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

void clear_detail();
bool detail_is_empty();

// An enum argument's value as an integer. A C caller may pass any int in an enum (C gives the
// enum type every value of its underlying integer type), but C++ gives these enums only the
// values of their enumerators' bit range: loading an out-of-range value as the enum type is
// undefined behaviour. Reading its bytes as an int is not.
template <class E>
int enum_value(const E& e)
{
    static_assert(sizeof(E) == sizeof(int), "the public enums have the size of int");
    int v;
    __builtin_memcpy(&v, &e, sizeof v);
    return v;
}

}  // namespace flcc
