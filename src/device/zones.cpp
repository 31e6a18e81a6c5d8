#include "device/zones.h"

#include "geometry/guard.h"
#include "geometry/interior.h"

#include <algorithm>

namespace flcc::device {

void fill_extents(const Problem& q, TileParams& p)
{
    for (int a = 0; a < 3; ++a) {
        p.S[a] = int(q.image[a]);
        p.O[a] = int(q.out[a]);
        p.P[a] = int(q.pad[a]);
        p.T[a] = int(q.templ[a]);
    }
    p.image_frame = q.image_elems();
    p.out_frame = q.out_elems();
    p.n = double(q.templ_elems());
    p.lcorr = q.op == Op::lcorr;
    p.check_finite = q.check_finite;
}

int make_zones(const Problem& q, const int ot[3], TileParams& p)
{
    // Per axis up to three runs: [0, lo) boundary, [lo, hi) interior, [hi, out) boundary
    // (geometry/interior.h).
    struct Run {
        int start, size, boundary;
    };
    Run runs[3][3];
    int nruns[3];
    for (int a = 0; a < 3; ++a) {
        const geometry::Interior in = geometry::axis_interior(q.image[a], q.templ[a], q.out[a], q.pad[a]);
        nruns[a] = 0;
        const int64_t cuts[4] = {0, in.lo, in.hi, q.out[a]};
        for (int k = 0; k < 3; ++k)
            if (cuts[k + 1] > cuts[k])
                runs[a][nruns[a]++] = {int(cuts[k]), int(cuts[k + 1] - cuts[k]), k != 1};
    }
    int n = 0;
    for (int i = 0; i < nruns[0]; ++i)
        for (int j = 0; j < nruns[1]; ++j)
            for (int k = 0; k < nruns[2]; ++k) {
                ZoneRect& r = p.rects[n++];
                const Run* rr[3] = {&runs[0][i], &runs[1][j], &runs[2][k]};
                r.boundary = 0;
                for (int a = 0; a < 3; ++a) {
                    r.origin[a] = rr[a]->start;
                    r.size[a] = rr[a]->size;
                    r.blocks[a] = (rr[a]->size + ot[a] - 1) / ot[a];
                    r.boundary |= rr[a]->boundary;
                }
            }
    // The interior rectangle first, then the boundary ones: blocks start in blockIdx order, so
    // the thin boundary tiles (a few outputs each, the cheapest blocks) fill the last wave.
    std::stable_partition(p.rects, p.rects + n, [](const ZoneRect& r) { return r.boundary == 0; });
    int blocks = 0;
    for (int r = 0; r < n; ++r) {
        p.rects[r].first_block = blocks;
        blocks += p.rects[r].blocks[0] * p.rects[r].blocks[1] * p.rects[r].blocks[2];
    }
    p.nrects = n;
    return blocks;
}

double guard_factor(const Extent& t, const int ot[3])
{
    return geometry::tile_kernel_guard(double(t[0]), double(t[1]), double(t[2]), ot[0], ot[1], ot[2]);
}

}  // namespace flcc::device
