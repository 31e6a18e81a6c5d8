// flcc-planner-map: the planner's method selection over a grid of problem sizes, one JSON line
// per cell, for bench/experiments/e_planner_map.py.
//
//   flcc-planner-map --op lcorr --region full --dim 2 --images 32,64,128 --templates 2,4,8
//
// For each cell (image N^dim, template T^dim) it
//   1. plans with FLCC_MEASURE (the planner's pick, its planning time, and every candidate's
//      time as the planner measured it: flcc_plan_candidate; negative = not timed, skipped by
//      the planner's budget),
//   2. plans with FLCC_ESTIMATE (the cost model's pick, without timing),
//   3. times every candidate again, independently of the planner, by forcing it by name: all
//      candidates are executed in rounds (one timed run of each per round, right after an
//      untimed run of the same candidate, in a new random order every round) so that they share
//      the machine's noise and each runs on its own warm data; the per-candidate time is the
//      median over --repeats rounds.
// The regret of a pick is its independent time over the best candidate's independent time: the
// planner's own measurements cannot judge the planner. A candidate whose warm-up run takes more
// than --cutoff times the best warm-up (after a second try) and more than 50 ms is not repeated:
// it cannot be within 10% of the best; its warm-up time is reported, with "repeats": 1. Cells whose best run is short are repeated
// more (up to 50 rounds, about 50 ms per candidate), since short timings are the noisiest.
//
// Inputs are uniform [0, 1) random, as flcc-bench's. SINGLE (default) gives every run a new
// template value, so template preparation is timed as the planner times it.
#include "bench_common.h"
#include "flcc.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using bench::cpu_model;

// s as a JSON string literal.
std::string json_str(const std::string& s) { return "\"" + bench::json_escape(s) + "\""; }

using Clock = std::chrono::steady_clock;

struct Args {
    std::string op = "lcorr", region = "full", type = "single";
    int dim = 2, repeats = 3, threads = 0, frames = 1;
    double cutoff = 3.0;
    std::vector<int> images{32, 64, 128, 256}, templates{2, 4, 8};
};

std::vector<int> parse_ints(const std::string& s)
{
    // "2,4,8" or a range "2-32" (step 1) or mixed "2-8,16,32"
    std::vector<int> out;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ',')) {
        if (item.empty()) continue;
        const size_t dash = item.find('-');
        char* end = nullptr;
        if (dash == std::string::npos) {
            const long v = std::strtol(item.c_str(), &end, 10);
            if (*end || v < 1) return {};
            out.push_back(int(v));
        } else {
            const long a = std::strtol(item.substr(0, dash).c_str(), &end, 10);
            if (*end) return {};
            const long b = std::strtol(item.substr(dash + 1).c_str(), &end, 10);
            if (*end || a < 1 || b < a) return {};
            for (long v = a; v <= b; ++v) out.push_back(int(v));
        }
    }
    return out;
}

void usage()
{
    std::fprintf(stderr,
                 "usage: flcc-planner-map [--op conv|lcorr] [--region full|same|valid] [--dim 2|3]\n"
                 "         [--images N,N,..] [--templates T,T-T,..] [--type single|stream]\n"
                 "         [--frames F] [--repeats R] [--threads P] [--cutoff C]\n"
                 "Prints one JSON line per (image, template) cell; sizes are N^dim, T^dim.\n");
}

bool parse(int argc, char** argv, Args& a)
{
    for (int i = 1; i < argc; ++i) {
        const std::string k = argv[i];
        if (k == "-h" || k == "--help") return false;
        if (i + 1 >= argc) return false;
        const std::string v = argv[++i];
        if (k == "--op" && (v == "conv" || v == "lcorr")) a.op = v;
        else if (k == "--region" && (v == "full" || v == "same" || v == "valid")) a.region = v;
        else if (k == "--type" && (v == "single" || v == "stream")) a.type = v;
        else if (k == "--dim" && (v == "2" || v == "3")) a.dim = std::atoi(v.c_str());
        else if (k == "--images" && !(a.images = parse_ints(v)).empty()) {}
        else if (k == "--templates" && !(a.templates = parse_ints(v)).empty()) {}
        else if (k == "--repeats" && (a.repeats = std::atoi(v.c_str())) >= 1) {}
        else if (k == "--frames" && (a.frames = std::atoi(v.c_str())) >= 1) {}
        else if (k == "--threads" && (a.threads = std::atoi(v.c_str())) >= 0) {}
        else if (k == "--cutoff" && (a.cutoff = std::atof(v.c_str())) > 1) {}
        else {
            std::fprintf(stderr, "flcc-planner-map: bad option %s %s\n", k.c_str(), v.c_str());
            return false;
        }
    }
    if (a.type == "single") a.frames = 1;
    return true;
}

struct Cell {
    flcc_size image, templ;
    size_t in_n, t_n, out_n;
};

flcc_options options(const Args& a, flcc_rigor rigor, const char* method)
{
    flcc_options o;
    flcc_options_init(&o);
    o.region = a.region == "same" ? FLCC_SAME : a.region == "valid" ? FLCC_VALID : FLCC_FULL;
    o.type = a.type == "stream" ? FLCC_STREAM : FLCC_SINGLE;
    o.platform = FLCC_HOST;
    o.rigor = rigor;
    o.threads = a.threads;
    o.method = method;
    return o;
}

struct Candidate {
    std::string name;
    double planner_s = -1;
    flcc_plan plan = nullptr;
    double warm_s = -1;
    std::vector<double> t;
};

// Runs one cell; returns false on an FLCC error (reported on stderr).
bool run_cell(const Args& a, const Cell& c, const std::string& machine)
{
    const flcc_op op = a.op == "conv" ? FLCC_CONV : FLCC_LCORR;
    auto fail = [&](const char* what, flcc_result r) {
        std::fprintf(stderr, "flcc-planner-map: %s failed (%s) for image %d template %d\n", what,
                     flcc_result_string(r), c.image.h, c.templ.h);
        return false;
    };

    // 1. the planner's pick, with MEASURE. Wisdom is forgotten first, and again before
    //    ESTIMATE: a recorded MEASURE decision serves every rigour, so ESTIMATE would otherwise
    //    return the pick just measured instead of the cost model's.
    flcc_wisdom_forget();
    flcc_options o = options(a, FLCC_MEASURE, nullptr);
    flcc_plan measured = nullptr;
    const auto t0 = Clock::now();
    flcc_result r = flcc_plan_create(&measured, op, a.dim, c.image, c.templ, &o);
    const double plan_s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (r != FLCC_SUCCESS) return fail("MEASURE planning", r);
    const std::string pick = flcc_plan_method(measured);
    std::vector<Candidate> cands;
    for (int i = 0; i < flcc_plan_candidate_count(measured); ++i) {
        const char* name = nullptr;
        double s = -1;
        if (flcc_plan_candidate(measured, i, &name, &s) == FLCC_SUCCESS && name)
            cands.push_back(Candidate{name, s, nullptr, -1, {}});
    }
    flcc_destroy(measured);

    // 2. the cost model's pick. The wisdom MEASURE gathered (FFTW's plans included) is put
    //    back afterwards: the forced plans below then reuse FFTW's measured plans, as the
    //    planner's own executors did, instead of measuring every transform again.
    char* measured_wisdom = nullptr;
    r = flcc_wisdom_export(&measured_wisdom);
    if (r != FLCC_SUCCESS) return fail("wisdom export", r);
    flcc_wisdom_forget();
    o = options(a, FLCC_ESTIMATE, nullptr);
    flcc_plan estimated = nullptr;
    r = flcc_plan_create(&estimated, op, a.dim, c.image, c.templ, &o);
    if (r == FLCC_SUCCESS) r = flcc_wisdom_import(measured_wisdom);
    flcc_free(measured_wisdom);
    if (r != FLCC_SUCCESS) return fail("ESTIMATE planning", r);
    const std::string pick_est = flcc_plan_method(estimated);
    flcc_destroy(estimated);

    // 3. every candidate again, forced, round-robin
    float* image = static_cast<float*>(flcc_malloc(c.in_n * a.frames * sizeof(float)));
    float* templ = static_cast<float*>(flcc_malloc(c.t_n * sizeof(float)));
    float* out = static_cast<float*>(flcc_malloc(c.out_n * a.frames * sizeof(float)));
    if (!image || !templ || !out) return fail("allocation", FLCC_ALLOC_FAILED);
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> u(0.f, 1.f);
    for (size_t i = 0; i < c.in_n * a.frames; ++i) image[i] = u(rng);
    for (size_t i = 0; i < c.t_n; ++i) templ[i] = u(rng);
    auto exec = [&](flcc_plan p, int rep) {
        if (a.type == "single") templ[0] = float(rep % 7) * 0.125f;
        const auto s = Clock::now();
        const flcc_result e = op == FLCC_CONV ? flcc_conv_exec(p, image, templ, out, a.frames)
                                              : flcc_lcorr_exec(p, image, templ, out, a.frames);
        const double dt = std::chrono::duration<double>(Clock::now() - s).count() / a.frames;
        return e == FLCC_SUCCESS ? dt : -1.0;
    };
    bool ok = true;
    double best_warm = -1;
    for (auto& k : cands) {
        o = options(a, FLCC_ESTIMATE, k.name.c_str());
        r = flcc_plan_create(&k.plan, op, a.dim, c.image, c.templ, &o);
        if (r != FLCC_SUCCESS) { ok = fail(("forcing " + k.name).c_str(), r); break; }
        k.warm_s = exec(k.plan, 1000);
        if (k.warm_s < 0) { ok = fail(("executing " + k.name).c_str(), FLCC_EXEC_FAILED); break; }
        if (best_warm < 0 || k.warm_s < best_warm) best_warm = k.warm_s;
    }
    // A first run can be slow for reasons that are not the solver's (first touch of memory,
    // threads waking up): a candidate about to be cut off gets a second chance.
    for (auto& k : cands) {
        if (!ok || k.warm_s <= a.cutoff * best_warm || k.warm_s <= 0.05) continue;
        const double again = exec(k.plan, 1001);
        if (again < 0) { ok = fail(("executing " + k.name).c_str(), FLCC_EXEC_FAILED); break; }
        k.warm_s = std::min(k.warm_s, again);
        best_warm = std::min(best_warm, k.warm_s);
    }
    // Short problems are noisy: repeat until each candidate has run about 50 ms (at most 50).
    const int reps = ok ? std::max(a.repeats, std::min(50, int(0.05 / std::max(best_warm, 1e-6)))) : 0;
    // Cutting off saves time only on slow candidates; short ones are always repeated, so a
    // noisy warm-up cannot disqualify a fast solver.
    auto cut = [&](const Candidate& k) { return k.warm_s > a.cutoff * best_warm && k.warm_s > 0.05; };
    // Every timed run follows an untimed run of the same candidate (with another template
    // value, so SINGLE still prepares one), and each round visits the candidates in a new
    // random order. All candidates share the input and output buffers, so a run's speed at
    // small sizes depends on whose data the run before it left in the caches: in a fixed cyclic
    // order (each round merely starting with the next candidate, until stop 14) every
    // candidate had the same predecessor in almost every round, and the one listed after the
    // planner's usual pick (often the generic kernel after a specialised one) found its data
    // warm while the pick found the previous candidate's. Now each candidate is timed on its
    // own warm data, as repeated execs of one plan run (and as flcc-bench times them), and the
    // rounds still spread the machine's load over all of them.
    std::mt19937 order_rng(7);
    std::vector<size_t> order(cands.size());
    for (size_t j = 0; j < order.size(); ++j) order[j] = j;
    for (int rep = 0; ok && rep < reps; ++rep) {
        std::shuffle(order.begin(), order.end(), order_rng);
        for (size_t j : order) {
            auto& k = cands[j];
            if (cut(k)) continue;
            const double t = exec(k.plan, rep + 3) < 0 ? -1.0 : exec(k.plan, rep);
            if (t < 0) { ok = fail(("executing " + k.name).c_str(), FLCC_EXEC_FAILED); break; }
            k.t.push_back(t);
        }
    }

    if (ok) {
        std::string best;
        double best_t = -1, pick_t = -1, est_t = -1;
        std::ostringstream js;
        js << "[";
        for (size_t i = 0; i < cands.size(); ++i) {
            auto& k = cands[i];
            if (k.t.empty()) k.t.push_back(k.warm_s);   // cut off: its warm-up run stands for it
            std::sort(k.t.begin(), k.t.end());
            const double med = k.t[k.t.size() / 2];
            if (best_t < 0 || med < best_t) { best_t = med; best = k.name; }
            if (k.name == pick) pick_t = med;
            if (k.name == pick_est) est_t = med;
            char b[512];
            std::snprintf(b, sizeof b,
                          "%s{\"name\":%s,\"planner_seconds\":%.6g,\"seconds\":{\"median\":%.6g,"
                          "\"min\":%.6g,\"max\":%.6g},\"repeats\":%zu}",
                          i ? "," : "", json_str(k.name).c_str(), k.planner_s, med, k.t.front(),
                          k.t.back(), k.t.size());
            js << b;
        }
        js << "]";
        char dims[96];
        if (a.dim == 2)
            std::snprintf(dims, sizeof dims, "\"image\":[%d,%d],\"template\":[%d,%d]", c.image.h,
                          c.image.w, c.templ.h, c.templ.w);
        else
            std::snprintf(dims, sizeof dims, "\"image\":[%d,%d,%d],\"template\":[%d,%d,%d]",
                          c.image.h, c.image.w, c.image.d, c.templ.h, c.templ.w, c.templ.d);
        std::printf("{\"bench\":\"flcc.planner_map\",\"op\":\"%s\",\"dim\":%d,%s,\"region\":\"%s\","
                    "\"type\":\"%s\",\"frames\":%d,\"platform\":\"host\",\"threads\":%d,"
                    "\"pick\":%s,\"pick_estimate\":%s,\"best\":%s,\"plan_seconds\":%.6g,"
                    "\"regret\":%.6g,\"regret_estimate\":%.6g,\"candidates\":%s,\"machine\":%s}\n",
                    a.op.c_str(), a.dim, dims, a.region.c_str(), a.type.c_str(), a.frames,
                    a.threads ? a.threads : int(std::thread::hardware_concurrency()),
                    json_str(pick).c_str(), json_str(pick_est).c_str(), json_str(best).c_str(),
                    plan_s, pick_t > 0 ? pick_t / best_t : -1.0, est_t > 0 ? est_t / best_t : -1.0,
                    js.str().c_str(), machine.c_str());
        std::fflush(stdout);
    }
    for (auto& k : cands) flcc_destroy(k.plan);
    flcc_free(image);
    flcc_free(templ);
    flcc_free(out);
    return ok;
}

}  // namespace

int main(int argc, char** argv)
{
    Args a;
    if (!parse(argc, argv, a)) {
        usage();
        return 2;
    }
    const std::string machine = "{\"cpu\":" + json_str(cpu_model()) +
                                ",\"hardware_threads\":" +
                                std::to_string(std::thread::hardware_concurrency()) + "}";
    int failures = 0;
    for (int n : a.images)
        for (int t : a.templates) {
            if (a.region == "valid" && t > n) continue;   // no valid output
            Cell c;
            c.image = {n, n, a.dim == 3 ? n : 1};
            c.templ = {t, t, a.dim == 3 ? t : 1};
            const int o = a.region == "full" ? n + t - 1 : a.region == "same" ? n : n - t + 1;
            c.in_n = size_t(n) * n * (a.dim == 3 ? n : 1);
            c.t_n = size_t(t) * t * (a.dim == 3 ? t : 1);
            c.out_n = size_t(o) * o * (a.dim == 3 ? o : 1);
            if (!run_cell(a, c, machine)) ++failures;
        }
    return failures ? 1 : 0;
}
