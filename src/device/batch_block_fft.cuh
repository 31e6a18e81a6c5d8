// The correlation kernel of the GPU batch engine's per-block Fourier form
// ("device.batch.blockfft"): one block per pair, its transforms in shared memory, for pairs
// whose linear correlation fits a 64 x 64 box (PIV's interrogation windows). Between the
// images' boxes and the maps nothing goes through global memory:
//   1. the image box's rows two at a time as one complex row (x(2j) + i x(2j + 1)), 64-point
//      transforms (kernels/fft64.cuh), split into the two rows' half spectra (bins 0..32);
//   2. per spectrum column: the 64-point column transform, the product with the template's
//      spectrum (block_fft_templates's, below: steps 1 and 2's forward transforms of the template
//      box; conjugated to correlate, scaled by 1 / 4096), the inverse column transform;
//   3. the output rows two at a time: the two half spectra packed as one complex row, its
//      inverse transform gives both real rows (C2R, the imaginary parts of bins 0 and 32 left
//      out, as cuFFT leaves them);
//   4. LCC: batch_kernels.cuh's finalisation from summed-area tables of the image where the
//      outputs are at least as many as the image's values (FULL and SAME regions: a table of
//      (h + 1) x (w + 1) serves every output with four reads and no barriers), else its banded
//      one (a VALID region's few outputs need less than the whole image's table), either with
//      the Fourier engine's a-posteriori rule for the numerators' rounding (the box's bound,
//      log2 of 4096 points); else the circular values are the map.
// The half spectrum (64 x 33 complex) is one shared array; each step's output rows take the
// same bytes as its input rows, so the real rows of step 3 lie in it too (row stride 66 floats).
#pragma once

#include "device/batch_kernels.cuh"
#include "device/kernels/fft64.cuh"

namespace flcc::device::batch {

constexpr int kBlockFftSide = int(kBlockFftBoxSide);   // the box, per axis
constexpr int kBlockFftHalf = kBlockFftSide / 2 + 1;  // spectrum columns
constexpr int kBlockFftThreads = 288;               // 36 groups of eight lanes: a step's 33 columns at once

struct BlockFftParams {
    FinalParams q;                 // circ unused; bh = bw = kBlockFftSide
    const float* box;              // the images' boxes (64 x 64 each, the image at the origin)
    const float2* templ_spectra;   // the templates' half spectra (64 x 33 each)
    float scale;                   // 1 / 4096
    int table;                     // LCC: 1 finalise_pair_table, 0 finalise_pair_banded
    int64_t sum_doubles;           // block_fft_sum_doubles
};

// LCC's finalisation from summed-area tables (step 4).
inline bool block_fft_table(int64_t h, int64_t w, int64_t O1, int64_t O2) { return O1 * O2 >= h * w; }

// The doubles of LCC's window sums (the tables, or the bands) before the twiddles.
inline int64_t block_fft_sum_doubles(int64_t h, int64_t w, int64_t O1, int64_t O2, bool lcc)
{
    if (!lcc) return 0;
    return block_fft_table(h, w, O1, O2) ? table_doubles(h, w) : banded_doubles(w);
}

// Shared bytes of one block: LCC's window sums, the twiddles, the half spectrum.
inline int64_t block_fft_shared_bytes(int64_t sum_doubles)
{
    return (sum_doubles + kBlockFftSide + kBlockFftSide * kBlockFftHalf) * 8;
}

// body(j, j < n) for j = 0, 1, ... by the block's groups of eight lanes, one j per group and
// trip. Whole warps run every trip (fft64::transform synchronises its warp), an idle group with
// j >= n; a warp stops once all its groups are past n.
template <class Body>
__device__ inline void over_groups(int n, Body body)
{
    const int group = threadIdx.x >> 3, groups = blockDim.x >> 3;
    for (int t0 = 0; t0 < n; t0 += groups) {
        if (t0 + (threadIdx.x & ~31) / 8 >= n) break;
        body(t0 + group, t0 + group < n);
    }
}

// Step 1 for a 64 x 64 box x (global memory) whose rows from h on are zero: its row pairs'
// half spectra into S (64 x 33; rows from 2 ceil(h / 2) on are not written), by the block's
// groups of eight lanes; the caller's barrier follows. Twiddles `tw` (fft64::make_twiddles).
__device__ inline void transform_row_pairs(const float* x, int h, float2* S, const float2* tw)
{
    constexpr int N = kBlockFftSide, H = kBlockFftHalf;
    const int lane = threadIdx.x & 7;
    over_groups((h + 1) / 2, [&](int j, bool active) {
        float2* z = active ? S + 2 * j * H : nullptr;   // the two rows' 66 slots
        fft64::transform<-1>(
            z, 1, lane, tw,
            [&](int k) {
                return active ? make_float2(x[2 * j * N + k], x[(2 * j + 1) * N + k]) : make_float2(0.f, 0.f);
            },
            [&](int k, float2 v) {
                if (active) z[k] = v;
            });
        // Z(k) = A(k) + i B(k): the rows' spectra A = (Z(k) + conj Z(-k)) / 2, B = ... / 2i.
        float2 a[5], b[5];
#pragma unroll
        for (int i = 0; i < 5; ++i) {
            const int k = lane + 8 * i;
            if (k <= N / 2 && active) {
                a[i] = z[k];
                b[i] = z[(N - k) & (N - 1)];
                fft32::unpack_pair(a[i], b[i]);
            }
        }
        __syncwarp();
#pragma unroll
        for (int i = 0; i < 5; ++i) {
            const int k = lane + 8 * i;
            if (k <= N / 2 && active) {
                z[k] = a[i];
                z[H + k] = b[i];
            }
        }
        __syncwarp();
    });
}

__global__ void __launch_bounds__(kBlockFftThreads, 2) block_fft_pairs(BlockFftParams d)
{
    constexpr int N = kBlockFftSide, H = kBlockFftHalf;
    extern __shared__ double shared[];
    const FinalParams& q = d.q;
    double* sums = shared;
    float2* tw = reinterpret_cast<float2*>(shared + d.sum_doubles);
    float2* S = tw + N;
    const float* circ = reinterpret_cast<const float*>(S);   // step 3's real rows, stride 2 H
    const int lane = threadIdx.x & 7;
    fft64::make_twiddles(tw);
    // The output rows' circular indices: a run of O1 rows from the first output's.
    const int first_row = q.correlate ? (N - q.P1) % N : (q.T1 - 1 - q.P1 + N) % N;
    const int64_t outs = int64_t(q.O1) * q.O2;
    __syncthreads();
    for (int p = blockIdx.x; p < q.pairing.total(); p += gridDim.x) {
        const int image = q.pairing.image_of(p);
        const float* x = d.box + int64_t(image) * N * N;
        const float2* T = d.templ_spectra + int64_t(q.pairing.templ_of(p)) * N * H;
        // 1. Row pairs of the image (the box's rows beyond h are zero).
        transform_row_pairs(x, q.h, S, tw);
        __syncthreads();
        // 2. Columns: forward, the product, inverse (rows at and beyond h hold no image).
        over_groups(H, [&](int c, bool active) {
            float2* z = active ? S + c : nullptr;
            fft64::transform<-1>(
                z, H, lane, tw,
                [&](int k) { return active && k < q.h ? z[k * H] : make_float2(0.f, 0.f); },
                [&](int k, float2 v) {
                    if (!active) return;
                    float2 t = T[k * H + c];
                    if (q.correlate) t.y = -t.y;
                    const float2 m = fft64::mul(v, t);
                    z[k * H] = make_float2(m.x * d.scale, m.y * d.scale);
                });
            fft64::transform<1>(
                z, H, lane, tw, [&](int k) { return active ? z[k * H] : make_float2(0.f, 0.f); },
                [&](int k, float2 v) {
                    if (active) z[k * H] = v;
                });
        });
        __syncthreads();
        // 3. Output row pairs, those holding a row of the region.
        over_groups(N / 2, [&](int j, bool pair) {
            const bool active = pair && (((2 * j - first_row + N) % N) < q.O1 ||
                                         ((2 * j + 1 - first_row + N) % N) < q.O1);
            float2* z = active ? S + 2 * j * H : nullptr;
            float* rows = reinterpret_cast<float*>(z);
            fft64::transform<1>(
                z, 1, lane, tw,
                [&](int k) {
                    if (!active) return make_float2(0.f, 0.f);
                    if (k == 0 || k == N / 2) return make_float2(z[k].x, z[H + k].x);
                    float2 A = k < N / 2 ? z[k] : z[N - k], B = k < N / 2 ? z[H + k] : z[H + N - k];
                    if (k > N / 2) A.y = -A.y, B.y = -B.y;
                    return make_float2(A.x - B.y, A.y + B.x);
                },
                [&](int n, float2 v) {
                    if (!active) return;
                    rows[n] = v.x;
                    rows[2 * H + n] = v.y;
                });
        });
        __syncthreads();
        // 4. The map.
        const auto num = [&](int r, int oc) {
            const unsigned k = unsigned(circular_index(q, r, oc));   // shifts and masks, as N is 64
            return circ[(k / N) * 2 * H + (k % N)];
        };
        if (q.lcc) {   // x and the numerators lie in shared memory: one load at a time
            const auto x_at = [&](int j, int c) { return x[j * N + c]; };
            if (d.table)
                finalise_pair_table(q, p, x_at, num, q.bounds[image], sums);
            else
                finalise_pair_banded<1>(q, p, x_at, num, q.bounds[image], sums, 0, q.O1);
        } else {
            float* map = q.maps + p * outs;
            for (int e = threadIdx.x; e < outs; e += blockDim.x) {
                const int r = e / q.O2;
                map[e] = num(r, e - r * q.O2);
            }
        }
        __syncthreads();   // the next pair rewrites the shared arrays
    }
}

// The templates' half spectra for this form, one block per template: the template prepared as
// prepare_templates prepares it (compact values, taps, box; its block sums add in another
// order), then its box's R2C by the steps above into `spectra` (cuFFT's layout, 64 rows of 33
// bins, unnormalised): the box's half spectrum stays in shared memory between the rows and the
// columns, and the columns' rows from h on, zero, are not read. PIV's templates are new every
// frame. Four blocks per multiprocessor (at most 56 registers): resident blocks hide the
// preparation's reductions and barriers.
__global__ void __launch_bounds__(kBlockFftThreads, 4) block_fft_templates(SideParams p, TemplForm f, float2* spectra)
{
    constexpr int N = kBlockFftSide, H = kBlockFftHalf;
    __shared__ double scratch[kScratchDoubles];
    __shared__ float2 tw[N];
    __shared__ float2 S[N * H];
    const int item = blockIdx.x, lane = threadIdx.x & 7;
    fft64::make_twiddles(tw);
    prepare_template_item(p, f, item, scratch);
    __syncthreads();   // the box, written by the block's threads, and the twiddles
    transform_row_pairs(p.box + int64_t(item) * N * N, p.h, S, tw);
    __syncthreads();
    float2* out = spectra + int64_t(item) * N * H;
    over_groups(H, [&](int c, bool active) {
        float2* z = active ? S + c : nullptr;
        fft64::transform<-1>(
            z, H, lane, tw, [&](int k) { return active && k < p.h ? z[k * H] : make_float2(0.f, 0.f); },
            [&](int k, float2 v) {
                if (active) out[k * H + c] = v;
            });
    });
}

}  // namespace flcc::device::batch
