// Every host solver, forced by name, against the float64 reference: random shapes (odd, prime,
// 1 x N, 3D, template = image, template larger than image) in all regions, the three operations
// (cross-correlation through the convolution solvers), and the LCC data classes of DESIGN.md
// section 4.
#include "helpers.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <random>

namespace {

constexpr double kLccTol = 1e-5;
constexpr double kConvTol = 1e-5;

void check_solver_shapes(const std::string& name)
{
    std::mt19937 rng(std::hash<std::string>{}(name));
    for (const ref::Shape& s : th::shapes_for(name)) {
        for (flcc_op op : {FLCC_CONV, FLCC_LCORR, FLCC_XCORR}) {
            const auto img = ref::make_data(ref::Data::uniform, s, true, rng);
            const auto t = ref::make_data(ref::Data::uniform, s, false, rng);
            th::RunOptions o;
            o.method = name.c_str();
            const th::Run r = th::run(op, s, img, t, o);
            INFO(name << " " << (op == FLCC_CONV ? "conv " : op == FLCC_XCORR ? "xcorr " : "lcorr ")
                      << th::describe(s));
            REQUIRE(r.result == FLCC_SUCCESS);
            REQUIRE(r.method == name);
            const double e = th::error(op, th::reference(op, s, img.data(), t.data()), r.out.data());
            CHECK(e <= (op == FLCC_LCORR ? kLccTol : kConvTol));
        }
    }
}

}  // namespace

TEST_CASE("every host solver matches the float64 reference on varied shapes", "[solvers]")
{
    const char* isa = std::getenv("FLCC_HOST_ISA");
    WARN("host kernels capped at " << (isa ? isa : "the best this CPU runs"));
    const auto names = th::solvers("host.");
    REQUIRE(!names.empty());
    for (const std::string& name : names) check_solver_shapes(name);
}

TEST_CASE("every host solver passes the LCC data classes", "[solvers][numerics]")
{
    using ref::Data;
    for (const std::string& name : th::solvers("host.")) {
        std::mt19937 rng(7);
        const int dim = th::solver_dim(name), n = th::solver_cube(name);
        const int k = n ? n : (dim == 2 ? 9 : 4);
        std::vector<ref::Shape> shapes;
        for (flcc_region reg : {FLCC_FULL, FLCC_VALID}) {
            if (dim == 2)
                shapes.push_back({2, {k + 57, k + 63, 1}, {k, n ? k : k + 3, 1}, reg});
            else
                shapes.push_back({3, {k + 9, k + 8, k + 11}, {k, k, n ? k : k + 1}, reg});
        }
        for (const ref::Shape& s : shapes)
            for (Data d : {Data::uniform, Data::uint8, Data::uint16, Data::offset, Data::ramp,
                           Data::panels, Data::constant, Data::plateaus}) {
                const auto img = ref::make_data(d, s, true, rng);
                const auto t = ref::make_data(d, s, false, rng);
                th::RunOptions o;
                o.method = name.c_str();
                const th::Run r = th::run(FLCC_LCORR, s, img, t, o);
                INFO(name << " " << th::describe(s) << " data " << ref::data_name(d));
                REQUIRE(r.result == FLCC_SUCCESS);
                const auto want = ref::lcorr(s, img.data(), t.data());
                const double tol = d == Data::ramp ? 1e-4 : kLccTol;
                CHECK(ref::max_abs_diff(want, r.out.data()) <= tol);
                // Zero-variance panels are exactly 0, and nothing leaves [-1, 1].
                size_t zero_mismatch = 0, out_of_range = 0;
                for (size_t i = 0; i < want.size(); ++i) {
                    if (want[i] == 0.0 && r.out[i] != 0.0f) ++zero_mismatch;
                    if (!(std::fabs(r.out[i]) <= 1.0f)) ++out_of_range;
                }
                if (d == Data::panels || d == Data::constant) CHECK(zero_mismatch == 0);
                CHECK(out_of_range == 0);
            }
    }
}

TEST_CASE("a constant template gives an all-zero LCC on every host solver", "[solvers][numerics]")
{
    for (const std::string& name : th::solvers("host.")) {
        const int dim = th::solver_dim(name), n = th::solver_cube(name);
        const int k = n ? n : 5;
        const ref::Shape s = dim == 2 ? ref::Shape{2, {k + 20, k + 30, 1}, {k, k, 1}, FLCC_SAME}
                                      : ref::Shape{3, {k + 4, k + 5, k + 6}, {k, k, k}, FLCC_SAME};
        std::mt19937 rng(3);
        const auto img = ref::make_data(ref::Data::uniform, s, true, rng);
        const std::vector<float> t(size_t(ref::templ_elems(s)), 3.5f);
        th::RunOptions o;
        o.method = name.c_str();
        const th::Run r = th::run(FLCC_LCORR, s, img, t, o);
        INFO(name);
        REQUIRE(r.result == FLCC_SUCCESS);
        for (float v : r.out) REQUIRE(v == 0.0f);
    }
}

// Convolution tiles of whole kernel blocks away from the padding are computed straight from the
// frame into the output (no gather, no store pass), and their finite check is made on the
// outputs: images large enough to hold such tiles, in every region, against the reference;
// non-finite values anywhere are still reported; finite data that overflows is not.
TEST_CASE("direct convolution computed in place from the frame", "[solvers][inplace]")
{
    struct Case {
        const char* method;
        ref::Shape shape;
    };
    std::vector<Case> cases;
    for (flcc_region reg : {FLCC_FULL, FLCC_SAME, FLCC_VALID}) {
        for (const char* m : {"host.direct2.k2", "host.direct2.k5", "host.direct2.k16",
                              "host.direct2.k32"}) {
            const int k = th::solver_cube(m);
            cases.push_back({m, {2, {300, 590, 1}, {k, k, 1}, reg}});
        }
        cases.push_back({"host.direct2.generic", {2, {270, 600, 1}, {7, 3, 1}, reg}});
        cases.push_back({"host.direct3.k3", {3, {12, 40, 300}, {3, 3, 3}, reg}});
        cases.push_back({"host.direct3.generic", {3, {11, 37, 290}, {2, 5, 4}, reg}});
    }
    for (const Case& c : cases) {
        std::mt19937 rng(11);
        auto img = ref::make_data(ref::Data::uniform, c.shape, true, rng);
        const auto t = ref::make_data(ref::Data::uniform, c.shape, false, rng);
        th::RunOptions o;
        o.method = c.method;
        INFO(c.method << " " << th::describe(c.shape));
        const th::Run r = th::run(FLCC_CONV, c.shape, img, t, o);
        REQUIRE(r.result == FLCC_SUCCESS);
        CHECK(th::error(FLCC_CONV, th::reference(FLCC_CONV, c.shape, img.data(), t.data()),
                        r.out.data()) <= kConvTol);

        // A non-finite value in the middle, near a corner and at the last element.
        const size_t n = img.size();
        for (size_t at : {n / 2 + 77, size_t(c.shape.image.w * 3 + 5), n - 1}) {
            for (float bad : {std::nanf(""), -INFINITY}) {
                const float keep = img[at];
                img[at] = bad;
                INFO("non-finite " << bad << " at " << at);
                CHECK(th::run(FLCC_CONV, c.shape, img, t, o).result == FLCC_NONFINITE_INPUT);
                img[at] = keep;
            }
        }
        // Finite data whose convolution overflows: no non-finite input, so success.
        std::vector<float> huge(n, 3e38f);
        const std::vector<float> big_t(t.size(), 2.0f);
        CHECK(th::run(FLCC_CONV, c.shape, huge, big_t, o).result == FLCC_SUCCESS);
    }
}
