// 3D LCC in C++: locate a small pattern placed in a noisy volume at several contrasts.
// Exits 0 when every placement is found.
#include <flcc.h>

#include <cstdio>
#include <memory>
#include <random>
#include <vector>

int main()
{
    const int n = 64, k = 6;
    const flcc_size image{n, n, n}, templ{k, k, k};
    std::mt19937 rng(3);
    std::normal_distribution<float> noise(0.f, 1.f);
    std::vector<float> vol(size_t(n) * n * n), pat(size_t(k) * k * k);
    for (float& v : pat) v = 5 * noise(rng);
    for (float& v : vol) v = 0.3f * noise(rng) + 100.f;
    const int at[3][3] = {{5, 7, 9}, {40, 20, 33}, {50, 51, 2}};
    const float gain[3] = {1.f, -0.5f, 3.f};   // LCC ignores contrast; a negative gain gives r < 0
    for (int p = 0; p < 3; ++p)
        for (int a = 0; a < k; ++a)
            for (int i = 0; i < k; ++i)
                for (int j = 0; j < k; ++j)
                    vol[((size_t(at[p][0] + a) * n) + at[p][1] + i) * n + at[p][2] + j] +=
                        gain[p] * pat[(size_t(a) * k + i) * k + j];

    flcc_options o;
    flcc_options_init(&o);
    o.region = FLCC_VALID;
    flcc_plan raw = nullptr;
    if (flcc_plan_create(&raw, FLCC_LCORR, 3, image, templ, &o) != FLCC_SUCCESS) return 1;
    std::unique_ptr<flcc_plan_s, decltype(&flcc_destroy)> plan(raw, &flcc_destroy);
    flcc_size os;
    flcc_plan_output_size(plan.get(), &os);
    std::vector<float> r(size_t(os.h) * os.w * os.d);
    if (flcc_lcorr_exec(plan.get(), vol.data(), pat.data(), r.data(), 1) != FLCC_SUCCESS) return 1;

    int found = 0;
    for (int p = 0; p < 3; ++p) {
        const float v = r[(size_t(at[p][0]) * os.w + at[p][1]) * os.d + at[p][2]];
        std::printf("placement %d at (%d,%d,%d), gain %+.1f: r = %+.4f\n", p, at[p][0], at[p][1],
                    at[p][2], gain[p], v);
        found += gain[p] > 0 ? v > 0.95f : v < -0.95f;
    }
    std::printf("method %s: found %d of 3\n", flcc_plan_method(plan.get()), found);
    return found == 3 ? 0 : 1;
}
