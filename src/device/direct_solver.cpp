// The GPU direct solvers: one per generated kernel (src/device/direct_kernels.h), i.e. the
// square and cubic template sizes of geometry/specialised_sizes.def specialised, plus a generic
// kernel per dimension for any template whose input tile fits shared memory. Convolution and LCC
// share the kernels.
#include "device/device_properties.h"
#include "device/direct_kernels.h"
#include "device/executor.h"
#include "device/template_prep.h"
#include "device/zones.h"
#include "plan/registry.h"
#include "plan/template.h"

#include <cstring>
#include <memory>
#include <new>
#include <vector>

namespace flcc::device {

namespace {

int tap_row(const Problem& p) { return int((p.templ[2] + 3) / 4 * 4); }

// Specialised small 2D kernels keep their window sums in registers (DirectConfig::small).
bool sums_in_registers(const DirectKernel& k)
{
    return k.t[0] == 1 && k.t[1] > 0 && k.t[1] <= 8 && k.t[2] > 0 && k.t[2] <= 8;
}

const DirectKernel::Shape& shape(const DirectKernel& k, const Problem& p)
{
    return p.op == Op::lcorr ? k.lcorr : k.conv;
}

size_t shared_bytes(const DirectKernel& k, const Problem& p)
{
    const int* ot = shape(k, p).ot;
    const DirectLayout l(ot[0], ot[1], ot[2], int(p.templ[0]), int(p.templ[1]),
                         int(p.templ[2]), tap_row(p), p.op == Op::lcorr && !sums_in_registers(k));
    return size_t(l.bytes());
}

// Shared memory a block may use on the plan's device (the opt-in limit).
size_t shared_limit(int device) { return device_properties(device).shared_optin; }

// A direct solver's layout for one problem: the kernel's parameters (extents, zones, guard),
// its grid and its shared memory.
struct DirectPlan {
    TileParams params{};
    int blocks = 0;
    size_t smem = 0;
};

DirectPlan direct_plan(const DirectKernel& k, const Problem& p)
{
    DirectPlan d;
    fill_extents(p, d.params);
    const int* ot = shape(k, p).ot;
    d.blocks = make_zones(p, ot, d.params);
    d.params.tap_row = tap_row(p);
    d.params.guard = guard_factor(p.templ, ot);
    d.smem = shared_bytes(k, p);
    return d;
}

class DirectExecutor final : public DeviceExecutor {
public:
    DirectExecutor(const Problem& p, const DirectKernel& k, const DirectPlan& plan)
        : DeviceExecutor(p), k_(k), params_(plan.params), blocks_(plan.blocks), smem_(plan.smem)
    {
    }

    flcc_result create()
    {
        const flcc_result r = init();
        if (r != FLCC_SUCCESS) return r;
        DeviceGuard guard(p_.device);
        params_.status = status();
        // The kernels' dynamic shared-memory limit is per function, shared by every plan: allow
        // the device's maximum (a limit, not an allocation), so no plan lowers another's.
        FLCC_CUDA_TRY(k_.prepare(shared_limit(p_.device)));
        // The taps, then their sum (a double; the taps' bytes are a multiple of 16).
        taps_bytes_ = size_t(p_.templ[0] * p_.templ[1] * params_.tap_row) * sizeof(float);
        const size_t bytes = taps_bytes_ + sizeof(double);
        flcc_result t = host_taps_.allocate(bytes);
        if (t == FLCC_SUCCESS) t = taps_.allocate(bytes);
        if (t == FLCC_SUCCESS) t = last_.allocate(size_t(p_.templ_elems()) * sizeof(float));
        params_.taps = taps_.as<float>();
        params_.tap_sum = reinterpret_cast<const double*>(taps_.as<char>() + taps_bytes_);
        // Defined taps even before a template (a refused first device template leaves them).
        // On the plan's stream: a plain cudaMemset goes to the legacy stream, which the plan's
        // non-blocking streams do not wait for, so it could land after the first template's
        // upload and zero it.
        if (t == FLCC_SUCCESS)
            FLCC_CUDA_TRY(cudaMemsetAsync(taps_.as<char>(), 0, bytes, work_stream()));
        return t;
    }

    flcc_result set_template(const float* templ, bool constant) override
    {
        std::vector<float> prepared(size_t(p_.templ_elems()));
        prepare_template(p_.op == Op::lcorr, templ, p_.templ_elems(), constant, prepared.data());
        double sum = 0;
        for (float v : prepared) sum += v;
        // Rows padded to whole float4s for the kernels' vector loads, staged once the previous
        // frames no longer read the staging buffer.
        DeviceGuard guard(p_.device);
        const flcc_result q = quiesce();
        if (q != FLCC_SUCCESS) return q;
        float* staged = host_taps_.as<float>();
        const int64_t rows = p_.templ[0] * p_.templ[1], w = p_.templ[2];
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t c = 0; c < params_.tap_row; ++c)
                staged[size_t(r * params_.tap_row + c)] = c < w ? prepared[size_t(r * w + c)] : 0.f;
        std::memcpy(host_taps_.as<char>() + taps_bytes_, &sum, sizeof sum);
        params_.user_templ = nullptr;   // the kernels read these taps
        FLCC_CUDA_TRY(cudaMemcpyAsync(taps_.as<float>(), staged, host_taps_.bytes(), cudaMemcpyHostToDevice,
                                      work_stream()));
        last_valid_ = false;   // the device copy no longer describes the taps
        return FLCC_SUCCESS;
    }

    bool prepares_device_templates() const override { return true; }

    flcc_result set_device_template(const float* templ) override
    {
        DeviceGuard guard(p_.device);
        if (!guard.ok()) return FLCC_DEVICE_ERROR;
        // Small 2D kernels prepare the taps in every block from the caller's template (see
        // warp_prepare_taps in kernels/direct.cuh): no template kernel, nothing to compare.
        if (sums_in_registers(k_)) {
            params_.user_templ = templ;
            last_valid_ = false;
            return FLCC_SUCCESS;
        }
        params_.user_templ = nullptr;
        TemplatePrep t{};
        t.user = templ;
        t.last = last_.as<float>();
        t.n = p_.templ_elems();
        t.rows = int(p_.templ[0] * p_.templ[1]);
        t.cols = int(p_.templ[2]);
        t.tap_row = params_.tap_row;
        t.lcorr = p_.op == Op::lcorr;
        t.force = !last_valid_;
        t.check_finite = p_.check_finite;
        t.taps = taps_.as<float>();
        t.tap_sum = reinterpret_cast<double*>(taps_.as<char>() + taps_bytes_);
        t.status = status();
        // Stream order puts it after the previous frames (which read the taps) and before the next.
        FLCC_CUDA_TRY(enqueue_template_prep(t, work_stream()));
        last_valid_ = true;
        return FLCC_SUCCESS;
    }

    int64_t memory_bytes() const override
    {
        return DeviceExecutor::memory_bytes() + int64_t(taps_.bytes() + last_.bytes());
    }

private:
    flcc_result enqueue(const float* image, float* out, int64_t count, cudaStream_t stream) override
    {
        TileParams p = params_;
        // gridDim.y is limited to 65535 frames per launch.
        for (int64_t f = 0; f < count; f += 65535) {
            const int64_t n = std::min<int64_t>(65535, count - f);
            p.image = image + f * p_.image_elems();
            p.out = out + f * p_.out_elems();
            FLCC_CUDA_TRY(k_.launch(p, p_.op == Op::lcorr, dim3(unsigned(blocks_), unsigned(n)), smem_, stream));
        }
        return FLCC_SUCCESS;
    }

    const DirectKernel& k_;
    TileParams params_;
    int blocks_;
    size_t smem_;
    DeviceBuffer taps_;        // the taps, then their sum
    size_t taps_bytes_ = 0;
    PinnedBuffer host_taps_;   // staging for template uploads from the host
    DeviceBuffer last_;        // the device template last prepared (set_device_template)
    bool last_valid_ = false;  // false: the taps came from the host since
};

class DirectCandidate final : public Candidate {
public:
    DirectCandidate(const Problem& p, const DirectKernel& k, const DirectPlan& plan) : p_(p), k_(k), plan_(plan) {}

    // Cost model of an H100-class device (docs/performance.md describes the fit): ~20 TFMA/s
    // sustained by the 2D kernels, ~2.5 TB/s effective bandwidth, ~5 us per launch;
    // host-resident frames add their transfers at ~25 GB/s each way, overlapped with compute.
    // The 3D kernels: ~5 TFMA/s and ~30 ps per LCC output for the window sums (the 2D kernels'
    // rate would have ESTIMATE pick them over faster Fourier solvers).
    double estimate_seconds() const override
    {
        const Problem& p = p_;
        const double macs = double(p.out_elems()) * double(p.templ_elems());
        const double bytes = 4.0 * double(p.image_elems() + p.out_elems());
        const double compute = p.dim == 3 ? macs / 5e12 + (p.op == Op::lcorr ? 30e-12 * double(p.out_elems()) : 0.0)
                                          : macs / (k_.t[1] ? 20e12 : 14e12);
        return with_host_transfers(p, compute + bytes / 2.5e12 + 5e-6);
    }

    flcc_result create(std::unique_ptr<Executor>& out) const override
    {
        return make_device_executor<DirectExecutor>(out, p_, k_, plan_);
    }

private:
    Problem p_;
    const DirectKernel& k_;
    DirectPlan plan_;
};

class DirectSolver final : public Solver {
public:
    explicit DirectSolver(const DirectKernel& k) : k_(k) {}

    const char* name() const override { return k_.name; }
    flcc_platform platform() const override { return FLCC_DEVICE; }

    std::unique_ptr<Candidate> plan(const Problem& p) const override
    {
        if (p.dim != k_.dim) return nullptr;
        if (k_.t[1] != 0) {
            for (int a = 0; a < 3; ++a)
                if (p.templ[a] != k_.t[a]) return nullptr;
        } else if (p.out_elems() > (int64_t(1) << 31) / 2 || p.image_elems() > (int64_t(1) << 31) / 2) {
            return nullptr;   // generic: int indexing must hold
        }
        const DirectPlan plan = direct_plan(k_, p);
        // Generic: the block's input box must fit shared memory.
        if (k_.t[1] == 0 && plan.smem > shared_limit(p.device)) return nullptr;
        return std::make_unique<DirectCandidate>(p, k_, plan);
    }

private:
    const DirectKernel& k_;
};

}  // namespace

void register_direct_solvers(SolverList& list)
{
    static const std::vector<std::unique_ptr<DirectSolver>> solvers = [] {
        std::vector<std::unique_ptr<DirectSolver>> s;
        for (int i = 0; i < kDirectKernelCount; ++i) s.push_back(std::make_unique<DirectSolver>(kDirectKernels[i]));
        return s;
    }();
    for (const auto& s : solvers) list.push_back(s.get());
}

}  // namespace flcc::device
