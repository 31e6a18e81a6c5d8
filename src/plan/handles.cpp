// The set of live plan handles (plan/plan.h): every entry point looks its handle up here, so a
// destroyed or foreign handle is rejected instead of touching freed memory.
#include "plan/error.h"
#include "plan/plan.h"

#include <mutex>
#include <unordered_map>

namespace flcc {

namespace {

std::mutex& live_mutex()
{
    static std::mutex m;
    return m;
}
std::unordered_map<const flcc_plan_s*, std::shared_ptr<flcc_plan_s>>& live_plans()
{
    static std::unordered_map<const flcc_plan_s*, std::shared_ptr<flcc_plan_s>> s;
    return s;
}

}  // namespace

void plan_register(std::shared_ptr<flcc_plan_s> plan)
{
    std::lock_guard<std::mutex> lock(live_mutex());
    const flcc_plan_s* key = plan.get();
    live_plans().emplace(key, std::move(plan));
}

std::shared_ptr<flcc_plan_s> plan_acquire(const flcc_plan_s* handle)
{
    if (handle == nullptr) return nullptr;
    std::lock_guard<std::mutex> lock(live_mutex());
    const auto it = live_plans().find(handle);
    return it == live_plans().end() ? nullptr : it->second;
}

bool plan_release(const flcc_plan_s* handle)
{
    std::shared_ptr<flcc_plan_s> keep;   // destroyed outside the lock
    std::lock_guard<std::mutex> lock(live_mutex());
    const auto it = live_plans().find(handle);
    if (it == live_plans().end()) return false;
    keep = std::move(it->second);
    live_plans().erase(it);
    return true;
}

flcc_result invalid_plan(const flcc_plan_s* handle)
{
    if (handle == nullptr) return fail(FLCC_INVALID_PLAN, "plan = NULL");
    return fail(FLCC_INVALID_PLAN, "plan = %p: not a live plan (destroyed or unknown)",
                static_cast<const void*>(handle));
}

}  // namespace flcc
