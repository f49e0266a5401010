// The edge search's bisection (engine/sweep/edge_search.h) against a fake oracle, "trains iff lr <
// 0.0123": the edge found within the tolerance, brackets that pass and fail, resuming from any partial
// set of results, the range checks, the criteria; and edge_report's estimates against hand values.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "engine/core/errors.h"
#include "engine/sweep/edge_report.h"
#include "engine/sweep/edge_search.h"

namespace normlab {
namespace {

constexpr double kTrueEdge = 0.0123;

ProbeResult oracle(double lr) {
    return lr < kTrueEdge ? ProbeResult{false, 2.0 + lr} : ProbeResult{true, std::nullopt};
}

// Runs the search to its end with `oracle`; `results` may hold probes already finished.
EdgeSearchState search(const EdgeBounds& bounds, const EdgeCriterion& criterion,
                       std::map<double, ProbeResult>& results, ProbeResult (*run)(double) = oracle) {
    for (int round = 0; round < 100; ++round) {
        const EdgeSearchState state = replay_edge_search(bounds, criterion, [&](double value) {
            const auto found = results.find(value);
            return found == results.end() ? std::nullopt : std::optional<ProbeResult>(found->second);
        });
        if (state.status != EdgeStatus::Probing) return state;
        for (double value : state.wanted) results[value] = run(value);
    }
    ADD_FAILURE() << "the search did not end";
    return {};
}

TEST(EdgeSearch, FindsTheEdgeWithinTheTolerance) {
    const EdgeBounds bounds{1e-3, 1e-1, 0.05};
    std::map<double, ProbeResult> results;
    const EdgeSearchState state = search(bounds, {}, results);
    ASSERT_EQ(state.status, EdgeStatus::Bracketed);
    EXPECT_LT(*state.last_pass, kTrueEdge);
    EXPECT_GE(*state.first_fail, kTrueEdge);
    EXPECT_LE(*state.first_fail / *state.last_pass, 1.05);
    // log(100) / log(1.05) = 94.4 needs 7 halvings: 2 ends + 7 midpoints, each probed once.
    EXPECT_EQ(edge_max_probes(bounds), 9);
    EXPECT_EQ(state.probes.size(), 9u);
    EXPECT_EQ(results.size(), 9u);
    EXPECT_DOUBLE_EQ(state.probes[0].value, 1e-3);
    EXPECT_DOUBLE_EQ(state.probes[1].value, 1e-1);
    EXPECT_DOUBLE_EQ(state.probes[2].value, 1e-2);  // the geometric midpoint, rounded to 4 digits
    for (const JudgedProbe& probe : state.probes)
        EXPECT_EQ(probe.passed, probe.value < kTrueEdge) << probe.value;
    // The bracket is made of probes: the largest pass and the smallest fail.
    double largest_pass = 0, smallest_fail = 1;
    for (const JudgedProbe& probe : state.probes) {
        if (probe.passed) largest_pass = std::max(largest_pass, probe.value);
        if (!probe.passed) smallest_fail = std::min(smallest_fail, probe.value);
    }
    EXPECT_EQ(*state.last_pass, largest_pass);
    EXPECT_EQ(*state.first_fail, smallest_fail);
}

TEST(EdgeSearch, FinerToleranceGivesATighterBracket) {
    std::map<double, ProbeResult> results;
    const EdgeSearchState state = search({1e-4, 1.0, 0.005}, {}, results);
    ASSERT_EQ(state.status, EdgeStatus::Bracketed);
    EXPECT_LT(*state.last_pass, kTrueEdge);
    EXPECT_GE(*state.first_fail, kTrueEdge);
    EXPECT_LE(*state.first_fail / *state.last_pass, 1.005);
    EXPECT_NEAR(std::log(*state.last_pass), std::log(kTrueEdge), std::log(1.005));
}

TEST(EdgeSearch, ResumingFromAnyPartialStateGivesTheSameResult) {
    const EdgeBounds bounds{1e-3, 1e-1, 0.05};
    std::map<double, ProbeResult> all;
    const EdgeSearchState full = search(bounds, {}, all);
    for (size_t kept = 0; kept <= full.probes.size(); ++kept) {
        // The first `kept` probes finished before a kill; the rest were lost (or never started).
        std::map<double, ProbeResult> partial;
        for (size_t i = 0; i < kept; ++i) partial[full.probes[i].value] = full.probes[i].result;
        const EdgeSearchState resumed = search(bounds, {}, partial);
        EXPECT_EQ(resumed.last_pass, full.last_pass) << kept;
        EXPECT_EQ(resumed.first_fail, full.first_fail) << kept;
        EXPECT_EQ(partial.size(), all.size()) << kept << ": a probe was added or lost on resume";
    }
    // Only the high end finished: the low one is wanted again, nothing past round 1.
    std::map<double, ProbeResult> high_only = {{1e-1, oracle(1e-1)}};
    const EdgeSearchState waiting = replay_edge_search(bounds, {}, [&](double value) {
        const auto found = high_only.find(value);
        return found == high_only.end() ? std::nullopt : std::optional<ProbeResult>(found->second);
    });
    EXPECT_EQ(waiting.status, EdgeStatus::Probing);
    ASSERT_EQ(waiting.wanted.size(), 1u);
    EXPECT_DOUBLE_EQ(waiting.wanted[0], 1e-3);
}

TEST(EdgeSearch, ReportsAnEdgeOutsideTheRangeInsteadOfBisecting) {
    std::map<double, ProbeResult> results;
    const EdgeSearchState below = search({0.02, 0.1, 0.05}, {}, results);
    EXPECT_EQ(below.status, EdgeStatus::BelowLow);
    EXPECT_EQ(below.probes.size(), 2u);
    EXPECT_DOUBLE_EQ(*below.first_fail, 0.02);
    EXPECT_FALSE(below.last_pass);
    results.clear();
    const EdgeSearchState above = search({1e-4, 1e-2, 0.05}, {}, results);
    EXPECT_EQ(above.status, EdgeStatus::AboveHigh);
    EXPECT_EQ(above.probes.size(), 2u);
    EXPECT_DOUBLE_EQ(*above.last_pass, 1e-2);
}

// Never diverges: the loss grows with lr, 2.0 up to 0.01 then steeply (a run that trains worse).
ProbeResult degrading(double lr) {
    return {false, lr <= 0.01 ? 2.0 + lr : 2.0 + 100.0 * (lr - 0.01)};
}

TEST(EdgeSearch, LossAboveAndWorseThanBestJudgeTheFinalLoss) {
    std::map<double, ProbeResult> results;
    const EdgeSearchState above =
        search({1e-3, 1e-1, 0.05}, parse_edge_criterion("loss_above=2.5"), results, degrading);
    ASSERT_EQ(above.status, EdgeStatus::Bracketed);
    // 2 + 100 (lr - 0.01) <= 2.5 up to lr 0.015.
    EXPECT_LE(*above.last_pass, 0.015);
    EXPECT_GT(*above.first_fail, 0.015);
    EXPECT_LE(*above.first_fail / *above.last_pass, 1.05);
    results.clear();
    // The best final loss is 2.001 (lr 1e-3); F = 1.1 fails above 2.2011: lr above 0.012011.
    const EdgeSearchState relative =
        search({1e-3, 1e-1, 0.05}, parse_edge_criterion("worse_than_best=1.1"), results, degrading);
    ASSERT_EQ(relative.status, EdgeStatus::Bracketed);
    EXPECT_LE(*relative.last_pass, 0.012011);
    EXPECT_GT(*relative.first_fail, 0.012011);
    results.clear();
    // With `diverged`, a run that only trains worse never fails: the edge is above the range.
    EXPECT_EQ(search({1e-3, 1e-1, 0.05}, {}, results, degrading).status, EdgeStatus::AboveHigh);
}

TEST(EdgeSearch, CriteriaParseOrSayWhatToWrite) {
    EXPECT_EQ(parse_edge_criterion("diverged").kind, EdgeCriterion::Kind::Diverged);
    const EdgeCriterion above = parse_edge_criterion("loss_above=3.25");
    EXPECT_EQ(above.kind, EdgeCriterion::Kind::LossAbove);
    EXPECT_DOUBLE_EQ(above.threshold, 3.25);
    EXPECT_EQ(parse_edge_criterion(to_string(above)).threshold, 3.25);
    EXPECT_EQ(parse_edge_criterion("worse_than_best=1.5").kind, EdgeCriterion::Kind::WorseThanBest);
    for (const char* bad : {"exploded", "loss_above=", "loss_above=-1", "loss_above=nan",
                            "worse_than_best=0.9", "worse_than_best=1", "loss_above=3x"})
        EXPECT_THROW(parse_edge_criterion(bad), InputError) << bad;
    EXPECT_DOUBLE_EQ(edge_midpoint(1e-3, 1e-1), 1e-2);
    EXPECT_DOUBLE_EQ(edge_midpoint(1e-3, 2e-3), 1.414e-3);
}

// Two variants, three seeds, brackets set by hand: the report's edge is the geometric mean of the
// last passes with the t interval on logs, and the ratio the paired difference of logs.
TEST(EdgeReport, GeometricMeanAndPairedRatioOnLogs) {
    EdgeSpec spec;
    spec.vary_key = "model.norm_type";
    spec.vary_values = {"layernorm", "rmsnorm"};
    spec.seeds = {1, 2, 3};
    const std::vector<double> a = {0.010, 0.012, 0.011}, b = {0.009, 0.0115, 0.0099};
    std::vector<EdgeSearchState> states;
    for (const std::vector<double>* edges : {&a, &b})
        for (double edge : *edges) {
            EdgeSearchState state;
            state.status = EdgeStatus::Bracketed;
            state.last_pass = edge;
            state.first_fail = edge * 1.04;
            states.push_back(state);
        }
    const EdgeReport report = edge_report(spec, states);
    ASSERT_TRUE(report.finished);
    ASSERT_EQ(report.variants.size(), 2u);
    ASSERT_TRUE(report.variants[0].log_edge);
    const double geometric = std::cbrt(0.010 * 0.012 * 0.011);
    EXPECT_NEAR(std::exp(report.variants[0].log_edge->mean), geometric, 1e-15);
    const double l1 = std::log(0.010), l2 = std::log(0.012), l3 = std::log(0.011), m = (l1 + l2 + l3) / 3;
    const double sd = std::sqrt(((l1 - m) * (l1 - m) + (l2 - m) * (l2 - m) + (l3 - m) * (l3 - m)) / 2);
    const double half = 4.3026527 * sd / std::sqrt(3.0);  // t_{0.975, 2}
    EXPECT_NEAR(report.variants[0].log_edge->ci->low, m - half, 1e-6);
    EXPECT_NEAR(report.variants[0].log_edge->ci->high, m + half, 1e-6);
    ASSERT_EQ(report.ratios.size(), 1u);
    EXPECT_EQ(report.ratios[0].label, "rmsnorm");
    EXPECT_EQ(report.ratios[0].reference, "layernorm");
    const double ratio = std::cbrt((0.009 / 0.010) * (0.0115 / 0.012) * (0.0099 / 0.011));
    EXPECT_NEAR(std::exp(report.ratios[0].log_ratio.mean), ratio, 1e-12);
    EXPECT_EQ(report.ratios[0].log_ratio.n, 3u);
    const nlohmann::ordered_json json = edge_report_to_json(spec, report);
    EXPECT_NEAR(json["ratios"][0]["value"].get<double>(), ratio, 1e-12);
    EXPECT_EQ(json["variants"][1]["seeds"][2]["folder"], "searches/rmsnorm-s3");
    // One seed's edge above the range: no estimate for that variant (and no ratio), and a note saying so.
    states[4].status = EdgeStatus::AboveHigh;
    const EdgeReport censored = edge_report(spec, states);
    EXPECT_FALSE(censored.variants[1].log_edge);
    EXPECT_NE(censored.variants[1].note.find("above HI"), std::string::npos);
    EXPECT_TRUE(censored.ratios.empty());
}

}  // namespace
}  // namespace normlab
