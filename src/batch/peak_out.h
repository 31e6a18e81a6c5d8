// The batch API's peaks and host/peaks.h's, one rule for every runner: the refinement asked for,
// and a map's peak as flcc_peak (positions in the plan's output region, the displacement =
// refined full-region position - (T - 1), i.e. output position - pad, and the quality measures).
#pragma once

#include "flcc.h"
#include "host/peaks.h"
#include "plan/problem.h"

#include <limits>

namespace flcc::batch {

inline host::Refine refine_of(flcc_refine r)
{
    switch (r) {
    case FLCC_REFINE_NONE: return host::Refine::none;
    case FLCC_REFINE_GAUSSIAN: return host::Refine::gaussian;
    case FLCC_REFINE_QUADRATIC: return host::Refine::quadratic;
    case FLCC_REFINE_UPSAMPLED: return host::Refine::upsampled;
    case FLCC_REFINE_PARABOLIC: break;
    }
    return host::Refine::parabolic;
}

inline void write_peak(const host::MapPeak& m, const Problem& p, int templ, flcc_peak& o)
{
    const int first = p.dim == 2 ? 1 : 0;
    const float nan = std::numeric_limits<float>::quiet_NaN();
    int at[3] = {0, 0, 0};
    float pos[3] = {0, 0, 0}, shift[3] = {0, 0, 0};
    for (int a = first; a < 3; ++a) {
        at[a - first] = int(m.at[a]);
        pos[a - first] = float(m.refined[a]);
        shift[a - first] = m.at[a] < 0 ? nan : float(m.refined[a] - double(p.pad[a]));
    }
    o.value = m.value;
    o.h = at[0];
    o.w = at[1];
    o.d = at[2];
    o.y = pos[0];
    o.x = pos[1];
    o.z = pos[2];
    o.dy = shift[0];
    o.dx = shift[1];
    o.dz = shift[2];
    o.quality = m.quality;
    o.psr = m.psr;
    o.templ = templ;
}

}  // namespace flcc::batch
