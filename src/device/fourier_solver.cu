// The GPU Fourier solvers: overlap-save on batched cuFFT transforms, for convolution and LCC,
// 2D and 3D. Names give the largest FFT box edge, which the planner chooses by measurement:
//   device.fourier2.t256 .t512 .t1024 .t2048     device.fourier3.t32 .t64 .t128 .t256
// The output is cut into zone-aligned tiles (boundary runs uncentred, interior runs centred per
// tile, as on the host); every tile's FFT box is the next 2^a 3^b 5^c 7^d size of its input
// box, and tiles with equal boxes form a group with one batched R2C/C2R plan pair and its own
// template spectrum. cuFFT plans are made at plan time, template spectra when a host template
// changes and at every exec with a device template (compared and prepared on the GPU); per
// frame each group runs stats, gather, R2C, product, C2R and the window sums and finalisation
// (kernels/fourier.cuh), all captured once into a CUDA graph.
#include "device/cufft_util.h"
#include "device/executor.h"
#include "device/kernels/fourier.cuh"
#include "device/template_prep.h"
#include "geometry/fft_size.h"
#include "geometry/guard.h"
#include "geometry/interior.h"
#include "plan/registry.h"
#include "plan/template.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <vector>

namespace flcc::device {

namespace {

// Runs of one axis cut into pieces of at most `longest` outputs, balanced. LCC cuts at the
// interior's bounds (geometry/interior.h: windows touching the padding run uncentred, as on the
// host); convolution, never centred, needs no zones.
struct Piece {
    int start, size, boundary;
};
std::vector<Piece> pieces(const Problem& p, int axis, int longest)
{
    const geometry::Interior in = p.op == Op::lcorr
                                      ? geometry::axis_interior(p.image[axis], p.templ[axis], p.out[axis], p.pad[axis])
                                      : geometry::Interior{0, p.out[axis]};
    const int64_t cuts[4] = {0, in.lo, in.hi, p.out[axis]};
    std::vector<Piece> v;
    for (int k = 0; k < 3; ++k) {
        const int64_t len = cuts[k + 1] - cuts[k];
        if (len <= 0) continue;
        const int64_t n = (len + longest - 1) / longest, each = (len + n - 1) / n;
        for (int64_t s = cuts[k]; s < cuts[k + 1]; s += each)
            v.push_back({int(s), int(std::min(each, cuts[k + 1] - s)), k != 1});
    }
    return v;
}

// The tiles of a problem for FFT boxes of at most `edge`, each with its FFT box. Every tile may
// get the box its own input needs (fewest flops), or all tiles the largest box per axis (one
// group: one batched plan pair and few graph nodes); the latter is chosen unless it more than
// doubles the transformed volume.
struct TilePlan {
    std::vector<std::pair<std::array<int, 3>, FftTile>> tiles;
    double volume = 0;   // box elements transformed per frame
    int groups = 0;
};

TilePlan plan_tiles(const Problem& p, int edge)
{
    std::vector<Piece> axes[3];
    int uniform[3] = {1, 1, 1};
    for (int a = 0; a < 3; ++a) {
        const bool flat = p.dim == 2 && a == 0;
        axes[a] = pieces(p, a, flat ? 1 : std::max(1, edge - int(p.templ[a]) + 1));
        if (!flat)
            for (const Piece& pc : axes[a]) uniform[a] = std::max(uniform[a], int(geometry::gpu_fft_size(pc.size + int(p.templ[a]) - 1)));
    }
    TilePlan plan;
    double exact_volume = 0;
    for (const Piece& z : axes[0])
        for (const Piece& y : axes[1])
            for (const Piece& x : axes[2]) {
                const Piece* pc[3] = {&z, &y, &x};
                std::array<int, 3> F;
                FftTile t;
                t.boundary = 0;
                double box = 1;
                for (int a = 0; a < 3; ++a) {
                    t.origin[a] = pc[a]->start;
                    t.size[a] = pc[a]->size;
                    t.boundary |= pc[a]->boundary;
                    F[size_t(a)] = (p.dim == 2 && a == 0) ? 1 : int(geometry::gpu_fft_size(t.size[a] + int(p.templ[a]) - 1));
                    box *= F[size_t(a)];
                }
                exact_volume += box;
                plan.tiles.push_back({F, t});
            }
    const double uniform_volume = double(plan.tiles.size()) * uniform[0] * uniform[1] * uniform[2];
    if (uniform_volume <= 2 * exact_volume) {
        for (auto& tile : plan.tiles) tile.first = {uniform[0], uniform[1], uniform[2]};
        plan.volume = uniform_volume;
    } else {
        plan.volume = exact_volume;
    }
    std::map<std::array<int, 3>, int> shapes;
    for (const auto& tile : plan.tiles) shapes[tile.first] = 0;
    plan.groups = int(shapes.size());
    return plan;
}

struct Group {
    int F[3];
    std::vector<FftTile> tiles;
    int tz = 0, ty = 0, tx = 0;   // largest tile extent per axis
    int row_warps = 1;            // 2D: warps per block of row_sums (each holds a row's prefix)
    int chunk = 0, ring = 0;      // 3D: window_sums_finalise's planes per block, ring planes
    size_t march_bytes = 0;       // 3D: its dynamic shared memory
    MarchKernel march = nullptr;  // 3D: its instance for the template's extents
    int march_x = kMarchWide;     // 3D: its block's columns (rows: march_rows)
    DeviceBuffer d_tiles, stats, modes, in, spec, tspec, num, v1, v2, tbox;
    CufftPlan r2c, c2r, t2c;   // batched forward, batched inverse, template forward
    FftGroupParams params{};

    int64_t box() const { return int64_t(F[0]) * F[1] * F[2]; }
    int64_t half() const { return int64_t(F[0]) * F[1] * (F[2] / 2 + 1); }
};

class FourierExecutor final : public DeviceExecutor {
public:
    // `tiles`: the candidate's layout (plan_tiles).
    FourierExecutor(const Problem& p, const TilePlan& tiles) : DeviceExecutor(p), tiles_(tiles) {}

    flcc_result create()
    {
        flcc_result r = init();
        if (r != FLCC_SUCCESS) return r;
        DeviceGuard guard(p_.device);
        if ((r = slot_.allocate(sizeof(FrameSlot))) != FLCC_SUCCESS) return r;
        if ((r = tap_sum_.allocate(sizeof(double))) != FLCC_SUCCESS) return r;
        tap_row_ = int((p_.templ[2] + 3) / 4 * 4);
        const size_t taps = size_t(p_.templ[0] * p_.templ[1] * tap_row_) * sizeof(float);
        if ((r = taps_.allocate(taps)) != FLCC_SUCCESS || (r = staged_.allocate(taps + sizeof(double))) != FLCC_SUCCESS ||
            (r = last_.allocate(size_t(p_.templ_elems()) * sizeof(float))) != FLCC_SUCCESS)
            return r;

        // Tiles grouped by FFT box (see plan_tiles).
        std::map<std::array<int, 3>, size_t> index;
        for (const auto& [F, t] : tiles_.tiles) {
            auto it = index.find(F);
            if (it == index.end()) {
                it = index.emplace(F, groups_.size()).first;
                groups_.push_back(std::make_unique<Group>());
                std::copy(F.begin(), F.end(), groups_.back()->F);
            }
            Group& g = *groups_[it->second];
            g.tiles.push_back(t);
            g.tz = std::max(g.tz, t.size[0]);
            g.ty = std::max(g.ty, t.size[1]);
            g.tx = std::max(g.tx, t.size[2]);
        }
        for (auto& g : groups_)
            if ((r = make_group(*g)) != FLCC_SUCCESS) return r;
        return FLCC_SUCCESS;
    }

    flcc_result set_template(const float* templ, bool constant) override
    {
        std::vector<float> prepared(size_t(p_.templ_elems()));
        prepare_template(p_.op == Op::lcorr, templ, p_.templ_elems(), constant, prepared.data());
        // Staged in page-locked memory once the previous frames are done with it, then every
        // step on the work stream, ahead of the next frames (see DeviceExecutor::work_stream).
        DeviceGuard guard(p_.device);
        const flcc_result q = quiesce();
        if (q != FLCC_SUCCESS) return q;
        const size_t taps = taps_.bytes();
        float* rows = staged_.as<float>();
        std::fill(rows, rows + taps / sizeof(float), 0.f);
        for (int64_t r = 0; r < p_.templ[0] * p_.templ[1]; ++r)
            std::copy(prepared.begin() + r * p_.templ[2], prepared.begin() + (r + 1) * p_.templ[2], rows + r * tap_row_);
        double sum = 0;
        for (float v : prepared) sum += v;
        std::memcpy(staged_.as<char>() + taps, &sum, sizeof sum);
        const cudaStream_t s = work_stream();
        FLCC_CUDA_TRY(cudaMemcpyAsync(taps_.as<float>(), rows, taps, cudaMemcpyHostToDevice, s));
        FLCC_CUDA_TRY(cudaMemcpyAsync(tap_sum_.as<double>(), staged_.as<char>() + taps, sizeof sum,
                                      cudaMemcpyHostToDevice, s));
        last_valid_ = false;   // last_ no longer describes the taps
        return template_spectra(s);
    }

    // A template in device memory: compared with the last one and, when it changed, prepared by
    // one small kernel (template_prep.h), then the groups' spectra from the taps, all in stream
    // order ahead of the frame: no host round trip and no wait. The spectra are transformed at
    // every exec, changed or not (the host cannot know): one R2C of a group's box each, which
    // costs an unchanged template a little and saves a new one the host round trip.
    bool prepares_device_templates() const override { return true; }

    flcc_result set_device_template(const float* templ) override
    {
        DeviceGuard guard(p_.device);
        if (!guard.ok()) return FLCC_DEVICE_ERROR;
        TemplatePrep t{};
        t.user = templ;
        t.last = last_.as<float>();
        t.n = p_.templ_elems();
        t.rows = int(p_.templ[0] * p_.templ[1]);
        t.cols = int(p_.templ[2]);
        t.tap_row = tap_row_;
        t.lcorr = p_.op == Op::lcorr;
        t.force = !last_valid_;
        t.check_finite = p_.check_finite;
        t.taps = taps_.as<float>();
        t.tap_sum = tap_sum_.as<double>();
        t.status = status();
        const cudaStream_t s = work_stream();
        FLCC_CUDA_TRY(enqueue_template_prep(t, s));
        last_valid_ = true;
        return template_spectra(s);
    }

    int64_t memory_bytes() const override
    {
        int64_t b = DeviceExecutor::memory_bytes() + int64_t(last_.bytes());
        for (const auto& g : groups_)
            for (const DeviceBuffer* d : {&g->in, &g->spec, &g->tspec, &g->num, &g->v1, &g->v2, &g->tbox})
                b += int64_t(d->bytes());
        return b;
    }

private:
    // Each group's spectrum, on the device, from the taps: the template zero-padded to the
    // group's box and transformed (the product conjugates it, for correlation, and scales it by
    // 1/N, the inverse transform's missing factor); no host round trip of box-sized data.
    flcc_result template_spectra(cudaStream_t s)
    {
        for (auto& gp : groups_) {
            Group& g = *gp;
            template_box<<<unsigned(g.F[0] * g.F[1]), 256, 0, s>>>(g.params, g.tbox.as<float>());
            FLCC_CUDA_TRY(cudaGetLastError());
            FLCC_CUFFT_TRY(cufftSetStream(g.t2c.h, s));
            FLCC_CUFFT_TRY(cufftExecR2C(g.t2c.h, g.tbox.as<float>(), g.tspec.as<cufftComplex>()));
        }
        return FLCC_SUCCESS;
    }

    flcc_result make_group(Group& g)
    {
        flcc_result r;
        const int nt = int(g.tiles.size());
        const bool lcorr = p_.op == Op::lcorr;
        if ((r = g.d_tiles.allocate(sizeof(FftTile) * size_t(nt))) != FLCC_SUCCESS ||
            (r = g.stats.allocate(sizeof(detail::Stats) * size_t(nt))) != FLCC_SUCCESS ||
            (r = g.modes.allocate(sizeof(TileMode) * size_t(nt))) != FLCC_SUCCESS ||
            (r = g.in.allocate(sizeof(float) * size_t(g.box() * nt))) != FLCC_SUCCESS ||
            (r = g.spec.allocate(sizeof(cufftComplex) * size_t(g.half() * nt))) != FLCC_SUCCESS ||
            (r = g.tspec.allocate(sizeof(cufftComplex) * size_t(g.half()))) != FLCC_SUCCESS ||
            (r = g.num.allocate(sizeof(float) * size_t(g.box() * nt))) != FLCC_SUCCESS ||
            (r = g.tbox.allocate(sizeof(float) * size_t(g.box()))) != FLCC_SUCCESS)
            return r;
        FLCC_CUDA_TRY(cudaMemcpy(g.d_tiles.as<FftTile>(), g.tiles.data(), sizeof(FftTile) * size_t(nt),
                                 cudaMemcpyHostToDevice));
        // From pageable memory cudaMemcpy may return before its DMA ends, on the legacy stream
        // that the plan's non-blocking streams do not wait for: finish it here.
        FLCC_CUDA_TRY(cudaStreamSynchronize(cudaStreamLegacy));
        if (lcorr && p_.dim == 2) {
            // row_sums keeps a row's prefix (2 x (wx + 1) doubles) per warp in shared memory: as
            // many warps as fit the default 48 KB, at least one (raising the limit if need be).
            const size_t wy = size_t(g.ty + p_.templ[1] - 1), wx = size_t(g.tx + p_.templ[2] - 1);
            const size_t v = size_t(nt) * wy * size_t(g.tx) * sizeof(double);
            if ((r = g.v1.allocate(v)) != FLCC_SUCCESS || (r = g.v2.allocate(v)) != FLCC_SUCCESS) return r;
            const size_t per_warp = 2 * (wx + 1) * sizeof(double);
            g.row_warps = int(std::max<size_t>(1, std::min<size_t>(4, (48 << 10) / per_warp)));
            if (per_warp > (48 << 10) && (r = raise_shared_limit(row_sums, per_warp)) != FLCC_SUCCESS) return r;
        } else if (lcorr) {
            // Chunks of planes long enough that the T0 planes every chunk starts with cost
            // little; the ring when it fits 96 KB beside the horizontal sums, else the leaving
            // planes are recomputed.
            const int T0 = int(p_.templ[0]), T1 = int(p_.templ[1]);
            g.march_x = g.tx <= 16 ? kMarchNarrow : kMarchWide;
            const int mx = g.march_x, my = march_rows(mx);
            g.chunk = std::max(32, 4 * T0);
            // Small groups (the boundary slabs of FULL and SAME regions: a few tiles, thin along
            // some axis) would give the kernel a block per multiprocessor or less, leaving the
            // device mostly idle: shorter chunks, down to 2 T0 planes, until there are about four
            // blocks per multiprocessor.
            const int sms = device_properties(-1).multiprocessors;
            const int64_t columns = int64_t((g.tx + mx - 1) / mx) * ((g.ty + my - 1) / my) * nt;
            while (g.chunk / 2 >= 2 * T0 && columns * ((g.tz + g.chunk - 1) / g.chunk) < 4 * int64_t(sms))
                g.chunk /= 2;
            g.ring = march_shared_bytes(T1, T0, mx) <= (96u << 10) ? T0 : 0;
            g.march_bytes = march_shared_bytes(T1, g.ring, mx);
            g.march = march_kernel(T1, int(p_.templ[2]), mx);
            if (g.march_bytes > (48u << 10) && (r = raise_shared_limit(g.march, g.march_bytes)) != FLCC_SUCCESS)
                return r;
        }

        // Batched plans over the tiles, and a single one for the template.
        const int rank = p_.dim;
        int n[3] = {g.F[0], g.F[1], g.F[2]};
        int* dims = p_.dim == 2 ? n + 1 : n;
        FLCC_CUFFT_TRY(cufftPlanMany(&g.r2c.h, rank, dims, nullptr, 1, int(g.box()), nullptr, 1,
                                     int(g.half()), CUFFT_R2C, nt));
        g.r2c.made = true;
        FLCC_CUFFT_TRY(cufftPlanMany(&g.c2r.h, rank, dims, nullptr, 1, int(g.half()), nullptr, 1,
                                     int(g.box()), CUFFT_C2R, nt));
        g.c2r.made = true;
        FLCC_CUFFT_TRY(cufftPlanMany(&g.t2c.h, rank, dims, nullptr, 1, int(g.box()), nullptr, 1,
                                     int(g.half()), CUFFT_R2C, 1));
        g.t2c.made = true;

        FftGroupParams& q = g.params;
        q.frame = slot_.as<FrameSlot>();
        for (int a = 0; a < 3; ++a) {
            q.S[a] = int(p_.image[a]);
            q.O[a] = int(p_.out[a]);
            q.P[a] = int(p_.pad[a]);
            q.T[a] = int(p_.templ[a]);
            q.F[a] = g.F[a];
        }
        q.tiles = g.d_tiles.as<FftTile>();
        q.ntiles = nt;
        q.lcorr = lcorr;
        q.check_finite = p_.check_finite;
        q.n = double(p_.templ_elems());
        q.guard = fourier_guard_factor(g);
        q.stats = g.stats.as<detail::Stats>();
        q.modes = g.modes.as<TileMode>();
        q.in = g.in.as<float>();
        q.spec = g.spec.as<cufftComplex>();
        q.tspec = g.tspec.as<cufftComplex>();
        q.tscale = float(1.0 / double(g.box()));
        q.v1 = g.v1.as<double>();
        q.v2 = g.v2.as<double>();
        q.num = g.num.as<float>();
        q.taps = taps_.as<float>();
        q.tap_row = tap_row_;
        q.tap_sum = tap_sum_.as<double>();
        q.status = status();
        q.tz = g.tz;
        q.ty = g.ty;
        q.tx = g.tx;
        return FLCC_SUCCESS;
    }

    // The rounding bound F of a group's window sums (geometry/guard.h): 2D for row_sums and
    // column_sums_finalise (runs of kColumnRows rows, or fewer), 3D for window_sums_finalise
    // (chunks of g.chunk planes).
    double fourier_guard_factor(const Group& g) const
    {
        if (p_.dim == 2) return geometry::fourier_tile_guard_2d(p_.templ[1], p_.templ[2], g.tx, g.ty);
        return geometry::fourier_tile_guard_3d(double(p_.templ[0]), double(p_.templ[1]), double(p_.templ[2]), g.chunk);
    }

    // Every group's work for the frame in the slot, on `s`.
    flcc_result enqueue_groups(cudaStream_t s)
    {
        for (auto& gp : groups_) {
            Group& g = *gp;
            const FftGroupParams& q = g.params;
            const int nt = q.ntiles;
            if (q.lcorr) {
                // ~2048 blocks in all: enough for the device, few atomics per tile.
                const int box_rows = (g.ty + q.T[1] - 1) * (g.tz + q.T[0] - 1);
                const int rows_per_block = std::max(4, int((int64_t(box_rows) * nt + 2047) / 2048));
                tile_stats_init<<<(nt + 127) / 128, 128, 0, s>>>(q);
                tile_stats<<<dim3(unsigned((box_rows + rows_per_block - 1) / rows_per_block), unsigned(nt)), 256, 0, s>>>(
                    q, rows_per_block);
                tile_modes<<<(nt + 127) / 128, 128, 0, s>>>(q);
            }
            // Rows per block: kRowsPerBlock while that leaves ~4 blocks per multiprocessor.
            const bool many_rows = int64_t(g.F[0] * g.F[1]) * nt >= int64_t(kRowsPerBlock) * 1024;
            if (many_rows)
                gather<kRowsPerBlock><<<dim3(unsigned((g.F[0] * g.F[1] + kRowsPerBlock - 1) / kRowsPerBlock), unsigned(nt)),
                                        256, 0, s>>>(q);
            else
                gather<1><<<dim3(unsigned(g.F[0] * g.F[1]), unsigned(nt)), 256, 0, s>>>(q);
            FLCC_CUFFT_TRY(cufftSetStream(g.r2c.h, s));
            FLCC_CUFFT_TRY(cufftExecR2C(g.r2c.h, g.in.as<float>(), g.spec.as<cufftComplex>()));
            product<<<dim3(unsigned((g.half() + 255) / 256), unsigned(nt)), 256, 0, s>>>(q, g.half());
            FLCC_CUFFT_TRY(cufftSetStream(g.c2r.h, s));
            FLCC_CUFFT_TRY(cufftExecC2R(g.c2r.h, g.spec.as<cufftComplex>(), g.num.as<float>()));
            if (!q.lcorr) {
                if (int64_t(g.tz * g.ty) * nt >= int64_t(kRowsPerBlock) * 1024)
                    crop<kRowsPerBlock><<<dim3(unsigned((g.tz * g.ty + kRowsPerBlock - 1) / kRowsPerBlock), unsigned(nt)),
                                          128, 0, s>>>(q);
                else
                    crop<1><<<dim3(unsigned(g.tz * g.ty), unsigned(nt)), 128, 0, s>>>(q);
            } else if (p_.dim == 2) {
                const int wy = g.ty + q.T[1] - 1, warps = g.row_warps;
                row_sums<<<dim3(unsigned((wy + warps - 1) / warps), unsigned(nt)), 32 * warps,
                           size_t(warps) * 2 * size_t(g.tx + q.T[2]) * sizeof(double), s>>>(q);
                column_sums_finalise<<<dim3(unsigned((g.tx + 127) / 128), unsigned((g.ty + kColumnRows - 1) / kColumnRows),
                                       unsigned(nt)), 128, 0, s>>>(q);
            } else {
                const int mx = g.march_x, my = march_rows(mx);
                const int yblocks = (g.ty + my - 1) / my, chunks = (g.tz + g.chunk - 1) / g.chunk;
                g.march<<<dim3(unsigned((g.tx + mx - 1) / mx), unsigned(yblocks * chunks), unsigned(nt)),
                          dim3(unsigned(mx), unsigned(my)), g.march_bytes, s>>>(q, g.chunk, g.ring, yblocks);
            }
        }
        FLCC_CUDA_TRY(cudaGetLastError());
        return FLCC_SUCCESS;
    }

    flcc_result enqueue(const float* image, float* out, int64_t count, cudaStream_t s) override
    {
        return graph_.launch_frames(slot_.as<FrameSlot>(), image, p_.image_elems(), out, p_.out_elems(), count, s,
                                    [this](cudaStream_t c) { return enqueue_groups(c); });
    }

    TilePlan tiles_;
    int tap_row_ = 4;
    DeviceBuffer slot_, taps_, tap_sum_;
    PinnedBuffer staged_;   // template uploads: taps, then their sum
    DeviceBuffer last_;        // the device template last prepared (set_device_template)
    bool last_valid_ = false;  // false: the taps came from the host since
    std::vector<std::unique_ptr<Group>> groups_;
    FrameGraph graph_;
};

// The largest box a variant of box edge `edge` transforms: per axis the edge, or less when the
// whole axis needs less.
double largest_box(const Problem& p, int edge)
{
    double box = 1;
    for (int a = p.dim == 2 ? 1 : 0; a < 3; ++a) box *= double(std::min<int64_t>(edge, p.out[a] + p.templ[a] - 1));
    return box;
}

class FourierCandidate final : public Candidate {
public:
    FourierCandidate(const Problem& p, int edge, TilePlan tiles) : p_(p), edge_(edge), tiles_(std::move(tiles)) {}

    // Cost model of an H100-class device (docs/performance.md describes the fit):
    // ~5 n log2 n flops per transform at ~15 TFLOP/s effective, two transforms per tile, plus
    // ~60 bytes of memory traffic per box element at ~2.5 TB/s and ~15 us per group (about ten
    // graph nodes); host-resident frames add their transfers, overlapped.
    double estimate_seconds() const override
    {
        const double box = largest_box(p_, edge_);
        const double flops = 2 * 5 * tiles_.volume * std::log2(std::max(2.0, box));
        double t = flops / 15e12 + 60 * tiles_.volume / 2.5e12 + 15e-6 * tiles_.groups + 10e-6;
        return with_host_transfers(p_, t);
    }

    flcc_result create(std::unique_ptr<Executor>& out) const override
    {
        return make_device_executor<FourierExecutor>(out, p_, tiles_);
    }

private:
    Problem p_;
    int edge_;
    TilePlan tiles_;
};

class FourierSolver final : public Solver {
public:
    FourierSolver(int dim, int edge) : dim_(dim), edge_(edge)
    {
        name_ = "device.fourier" + std::to_string(dim) + ".t" + std::to_string(edge);
    }

    const char* name() const override { return name_.c_str(); }
    flcc_platform platform() const override { return FLCC_DEVICE; }

    std::unique_ptr<Candidate> plan(const Problem& p) const override
    {
        if (p.dim != dim_) return nullptr;
        for (int a = p.dim == 2 ? 1 : 0; a < 3; ++a) {
            if (p.templ[a] >= edge_) return nullptr;   // a box must hold more than the template
            // A box far larger than the whole problem needs is the next variant's business.
            if (edge_ > 2 * int(geometry::gpu_fft_size(int(p.out[a] + p.templ[a] - 1))) && edge_ > 2 * int(p.templ[a] + 1))
                return nullptr;
        }
        // Buffers stay within a sane budget (8 GiB): ~60 bytes per transformed box element
        // (input, spectrum, output, window sums); a single box within int.
        if (largest_box(p, edge_) >= double(1 << 30)) return nullptr;
        TilePlan tiles = plan_tiles(p, edge_);
        if (tiles.volume * 60 >= 8.0 * (1 << 30)) return nullptr;
        return std::make_unique<FourierCandidate>(p, edge_, std::move(tiles));
    }

private:
    int dim_, edge_;
    std::string name_;
};

}  // namespace

void register_fourier_solvers(SolverList& list)
{
    static const std::vector<std::unique_ptr<FourierSolver>> solvers = [] {
        std::vector<std::unique_ptr<FourierSolver>> s;
        for (int e : {256, 512, 1024, 2048}) s.push_back(std::make_unique<FourierSolver>(2, e));
        for (int e : {32, 64, 128, 256}) s.push_back(std::make_unique<FourierSolver>(3, e));
        return s;
    }();
    for (const auto& s : solvers) list.push_back(s.get());
}

}  // namespace flcc::device
