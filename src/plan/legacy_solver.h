// A transitional adapter: a solver written as applicable / estimate_seconds / create, each
// taking the problem, offered under the Candidate contract of plan/solver.h. Families move off
// it to candidates that keep their layout; it goes when none uses it.
#pragma once

#include "plan/solver.h"


namespace flcc {

class LegacySolver : public Solver {
public:
    virtual bool applicable(const Problem& p) const = 0;
    virtual bool repeats_smaller_variant(const Problem&) const { return false; }
    virtual double estimate_seconds(const Problem& p) const = 0;
    virtual flcc_result create(const Problem& p, std::unique_ptr<Executor>& out) const = 0;

    std::unique_ptr<Candidate> plan(const Problem& p) const override
    {
        if (!applicable(p)) return nullptr;
        return std::make_unique<Adapted>(*this, p);
    }

private:
    class Adapted final : public Candidate {
    public:
        Adapted(const LegacySolver& s, const Problem& p) : s_(s), p_(p) {}
        double estimate_seconds() const override { return s_.estimate_seconds(p_); }
        bool repeats_smaller_variant() const override { return s_.repeats_smaller_variant(p_); }
        flcc_result create(std::unique_ptr<Executor>& out) const override
        {
            return s_.create(p_, out);
        }

    private:
        const LegacySolver& s_;
        Problem p_;
    };
};

}  // namespace flcc
