#include "device_test_support.h"

namespace dt {

bool skip_without_gpu()
{
    if (th::have_device()) return false;
    WARN("skipped: no usable GPU on this machine");
    return true;
}

bool have_host_solvers()
{
    for (int i = 0; i < flcc_solver_count(); ++i)
        if (std::string(flcc_solver_name(i)).rfind("host.", 0) == 0) return true;
    return false;
}

th::RunOptions device_opts(const std::string& name)
{
    th::RunOptions o;
    o.method = name.c_str();
    o.platform = FLCC_DEVICE;
    return o;
}

void check_lcc(const ref::Shape& s, const std::vector<double>& want, const std::vector<bool>& flat,
               const float* out)
{
    INFO("worst " << th::worst(s, want, out));
    CHECK(ref::max_abs_diff(want, out) <= 1e-5);
    size_t misses = 0;
    for (size_t i = 0; i < want.size(); ++i)
        if (flat[i] && out[i] != 0.0f) ++misses;
    CHECK(misses == 0);
}

flcc_result forced_plan(flcc_plan* p, const std::string& name, flcc_op op, const ref::Shape& s, bool resident)
{
    flcc_options o;
    flcc_options_init(&o);
    o.platform = FLCC_DEVICE;
    o.method = name.c_str();
    o.region = s.region;
    o.device_resident = resident ? 1 : 0;
    return flcc_plan_create(p, op, s.dim, s.image, s.templ, &o);
}

}  // namespace dt
