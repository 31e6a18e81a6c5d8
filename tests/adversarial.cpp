#include "adversarial.h"

#include <cfloat>
#include <cmath>

namespace adversarial {

namespace {

float draw(Kind k, std::mt19937& rng, float level)
{
    std::uniform_real_distribution<float> u(-1, 1);
    std::uniform_int_distribution<int> coin(0, 3);
    switch (k) {
    case Kind::near_constant: return level + (coin(rng) == 0 ? level * 1e-7f * u(rng) : 0.0f);
    case Kind::huge: return 1e30f * u(rng);
    case Kind::near_max: return coin(rng) ? FLT_MAX * (0.9f + 0.1f * u(rng)) : -FLT_MAX * 0.95f;
    case Kind::denormal: return FLT_TRUE_MIN * float(int(100 * u(rng)));
    case Kind::signed_zero: return coin(rng) == 0 ? -0.0f : coin(rng) == 0 ? 0.0f : FLT_TRUE_MIN;
    case Kind::offset: return 1e20f + 1e14f * u(rng);
    case Kind::mixed: {
        const int e = std::uniform_int_distribution<int>(-149, 127)(rng);
        return std::ldexp(u(rng), e);
    }
    case Kind::blocks: return level;
    case Kind::count: break;
    }
    return 0;
}

}  // namespace

std::vector<float> make(Kind k, int64_t n, int64_t row, std::mt19937& rng)
{
    std::vector<float> v(static_cast<size_t>(n));
    const float level = std::uniform_real_distribution<float>(-1e6f, 1e6f)(rng);
    for (int64_t i = 0; i < n; ++i) {
        if (k == Kind::blocks)   // constant runs with rare steps: many zero-variance panels
            v[size_t(i)] = float(int((i % row) / 5) % 2) * 3.0f + float(int(i / (3 * row)) % 3);
        else
            v[size_t(i)] = draw(k, rng, level);
    }
    return v;
}

}  // namespace adversarial
