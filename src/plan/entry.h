// The frame of every C entry point that returns an flcc_result: exceptions become codes, and
// the thread's error detail describes this call alone.
#pragma once

#include "flcc.h"
#include "plan/error.h"

#include <new>
#include <system_error>

namespace flcc {

// Exceptions become codes: std::bad_alloc, and a std::system_error that says the system is out
// of memory or of threads (std::thread, std::mutex), are FLCC_ALLOC_FAILED; anything else is a
// bug.
template <class F>
flcc_result guarded(F&& f)
{
    try {
        return f();
    } catch (const std::bad_alloc&) {
        return FLCC_ALLOC_FAILED;
    } catch (const std::system_error& e) {
        if (e.code() == std::errc::resource_unavailable_try_again ||
            e.code() == std::errc::not_enough_memory)
            return fail(FLCC_ALLOC_FAILED, "the system refused a resource: %s", e.what());
        return fail(FLCC_INTERNAL_ERROR, "unexpected system error: %s", e.what());
    } catch (...) {
        return FLCC_INTERNAL_ERROR;
    }
}

// The body of an entry point that returns an flcc_result: the detail describes this call alone
// (empty after a success; a failure that set none gets its code's description).
template <class F>
flcc_result entry(F&& f)
{
    clear_detail();
    const flcc_result r = guarded(f);
    if (r == FLCC_SUCCESS)
        clear_detail();
    else if (detail_is_empty())
        set_detail("%s", flcc_result_string(r));
    return r;
}

}  // namespace flcc
