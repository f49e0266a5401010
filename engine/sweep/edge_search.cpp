// The edge bisection (edge_search.h): criteria, the rounded geometric midpoint and the replay.
#include "engine/sweep/edge_search.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "engine/core/errors.h"

namespace normlab {

namespace {
// The number after "name=" in `text`, or nothing when it is not a finite number.
std::optional<double> number_after(const std::string& text, const std::string& name) {
    const std::string digits = text.substr(name.size() + 1);
    char* end = nullptr;
    const double value = std::strtod(digits.c_str(), &end);
    if (digits.empty() || end != digits.c_str() + digits.size() || !std::isfinite(value)) return std::nullopt;
    return value;
}

bool starts_with(const std::string& text, const std::string& prefix) {
    return text.rfind(prefix, 0) == 0;
}

// Judges the probes of one round (appended to state.probes) against the criterion.
void judge_round(EdgeSearchState& state, const EdgeCriterion& criterion, const std::vector<double>& values,
                 const std::vector<ProbeResult>& results) {
    double best = std::numeric_limits<double>::infinity();
    for (const JudgedProbe& probe : state.probes)
        if (probe.result.final_loss) best = std::min(best, *probe.result.final_loss);
    for (const ProbeResult& result : results)
        if (result.final_loss) best = std::min(best, *result.final_loss);
    for (size_t i = 0; i < values.size(); ++i) {
        const ProbeResult& result = results[i];
        bool passed = !result.diverged && result.final_loss && std::isfinite(*result.final_loss);
        if (passed && criterion.kind == EdgeCriterion::Kind::LossAbove)
            passed = *result.final_loss <= criterion.threshold;
        if (passed && criterion.kind == EdgeCriterion::Kind::WorseThanBest)
            passed = *result.final_loss <= criterion.threshold * best;
        state.probes.push_back({values[i], result, passed});
    }
}

// The results of `values`, or nothing (and state.wanted set to those missing) while any is unfinished.
std::optional<std::vector<ProbeResult>> round_results(
    EdgeSearchState& state, const std::vector<double>& values,
    const std::function<std::optional<ProbeResult>(double)>& result_of) {
    std::vector<ProbeResult> results;
    for (double value : values) {
        const std::optional<ProbeResult> result = result_of(value);
        if (result)
            results.push_back(*result);
        else
            state.wanted.push_back(value);
    }
    if (!state.wanted.empty()) return std::nullopt;
    return results;
}
}  // namespace

EdgeCriterion parse_edge_criterion(const std::string& text) {
    const std::string known =
        "; write diverged, loss_above=X (a loss, e.g. 3.0) or worse_than_best=F (F > 1, "
        "e.g. 1.1)";
    if (text == "diverged") return {EdgeCriterion::Kind::Diverged, 0.0};
    if (starts_with(text, "loss_above=")) {
        const std::optional<double> x = number_after(text, "loss_above");
        if (!x || *x <= 0.0) throw InputError("--criterion " + text + ": X must be a loss above 0" + known);
        return {EdgeCriterion::Kind::LossAbove, *x};
    }
    if (starts_with(text, "worse_than_best=")) {
        const std::optional<double> f = number_after(text, "worse_than_best");
        if (!f || *f <= 1.0) throw InputError("--criterion " + text + ": F must be a factor above 1" + known);
        return {EdgeCriterion::Kind::WorseThanBest, *f};
    }
    throw InputError("--criterion " + text + " is not a criterion" + known);
}

std::string to_string(const EdgeCriterion& criterion) {
    char number[32];
    std::snprintf(number, sizeof number, "%.17g", criterion.threshold);
    switch (criterion.kind) {
        case EdgeCriterion::Kind::Diverged:
            return "diverged";
        case EdgeCriterion::Kind::LossAbove:
            return std::string("loss_above=") + number;
        case EdgeCriterion::Kind::WorseThanBest:
            return std::string("worse_than_best=") + number;
    }
    return "?";
}

const char* to_string(EdgeStatus status) {
    switch (status) {
        case EdgeStatus::Probing:
            return "probing";
        case EdgeStatus::Bracketed:
            return "bracketed";
        case EdgeStatus::BelowLow:
            return "below_low";
        case EdgeStatus::AboveHigh:
            return "above_high";
    }
    return "?";
}

double edge_midpoint(double low, double high) {
    char text[32];
    std::snprintf(text, sizeof text, "%.3e", std::sqrt(low * high));
    return std::strtod(text, nullptr);
}

int edge_max_probes(const EdgeBounds& bounds) {
    const double halvings = std::log2(std::log(bounds.high / bounds.low) / std::log1p(bounds.tolerance));
    return 2 + std::max(0, static_cast<int>(std::ceil(halvings - 1e-12)));
}

EdgeSearchState replay_edge_search(const EdgeBounds& bounds, const EdgeCriterion& criterion,
                                   const std::function<std::optional<ProbeResult>(double)>& result_of) {
    EdgeSearchState state;
    const std::optional<std::vector<ProbeResult>> ends =
        round_results(state, {bounds.low, bounds.high}, result_of);
    if (!ends) return state;
    judge_round(state, criterion, {bounds.low, bounds.high}, *ends);
    if (!state.probes[0].passed) {
        state.status = EdgeStatus::BelowLow;
        state.first_fail = bounds.low;
        return state;
    }
    if (state.probes[1].passed) {
        state.status = EdgeStatus::AboveHigh;
        state.last_pass = bounds.high;
        return state;
    }
    double pass = bounds.low, fail = bounds.high;
    for (;;) {
        state.last_pass = pass;
        state.first_fail = fail;
        const double middle = edge_midpoint(pass, fail);
        // Within the tolerance, or so close that the rounded midpoint is an end: the bracket is final.
        if (fail / pass <= 1.0 + bounds.tolerance || middle <= pass || middle >= fail) {
            state.status = EdgeStatus::Bracketed;
            return state;
        }
        const std::optional<std::vector<ProbeResult>> result = round_results(state, {middle}, result_of);
        if (!result) return state;
        judge_round(state, criterion, {middle}, *result);
        (state.probes.back().passed ? pass : fail) = middle;
    }
}

}  // namespace normlab
