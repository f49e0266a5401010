// summarize_group reads each member's metric (run_metric.h); compare_groups decides paired or Welch
// from the seeds and hands the values used to engine/stats/estimates.h.
#include "engine/analysis/group_comparison.h"

#include <algorithm>
#include <map>
#include <set>

namespace normlab {

namespace {
std::vector<double> used_values(const GroupSummary& group) {
    std::vector<double> values;
    for (const RunValue& run : group.runs)
        if (run.outcome == RunOutcome::Used) values.push_back(*run.value);
    return values;
}

// The seeds of a group, by seed, when every run has one and none repeats; else nothing, with `why`.
std::optional<std::map<uint64_t, const RunValue*>> runs_by_seed(const GroupSummary& group, std::string& why) {
    std::map<uint64_t, const RunValue*> runs;
    for (const RunValue& run : group.runs) {
        if (!run.seed) {
            why = group.path + " has a run of unknown seed (" + run.folder + ")";
            return std::nullopt;
        }
        if (!runs.emplace(*run.seed, &run).second) {
            why = "seed " + std::to_string(*run.seed) + " repeats in " + group.path;
            return std::nullopt;
        }
    }
    return runs;
}

std::string seeds_text(const std::map<uint64_t, const RunValue*>& runs) {
    std::string text;
    for (const auto& entry : runs) {
        if (!text.empty()) text += ' ';
        text += std::to_string(entry.first);
    }
    return text;
}
}  // namespace

GroupSummary summarize_group(const std::string& path, const MetricSpec& spec, double level,
                             std::vector<std::string>* notes) {
    std::vector<RunValue> runs;
    for (const GroupMember& member : group_members(path, notes))
        runs.push_back(read_run_metric(member, spec));
    return summarize_runs(path, std::move(runs), level);
}

GroupSummary summarize_runs(const std::string& path, std::vector<RunValue> runs, double level) {
    GroupSummary group;
    group.path = path;
    group.runs = std::move(runs);
    std::stable_sort(group.runs.begin(), group.runs.end(), [](const RunValue& x, const RunValue& y) {
        return x.seed && y.seed ? *x.seed < *y.seed : x.seed.has_value() > y.seed.has_value();
    });
    for (const RunValue& run : group.runs) {
        group.diverged += run.outcome == RunOutcome::Diverged;
        group.unfinished += run.outcome == RunOutcome::Unfinished;
    }
    group.estimate = stats::estimate_mean(used_values(group), level);
    return group;
}

GroupDifference compare_groups(const GroupSummary& a, const GroupSummary& b, double level) {
    GroupDifference difference;
    std::string why;
    const auto seeds_a = runs_by_seed(a, why);
    const auto seeds_b = seeds_a ? runs_by_seed(b, why) : std::nullopt;
    if (seeds_a && seeds_b) {
        std::set<uint64_t> keys_a, keys_b;
        for (const auto& entry : *seeds_a) keys_a.insert(entry.first);
        for (const auto& entry : *seeds_b) keys_b.insert(entry.first);
        if (keys_a == keys_b) {
            std::vector<double> values_a, values_b;
            for (const auto& [seed, run_a] : *seeds_a) {
                const RunValue* run_b = seeds_b->at(seed);
                if (run_a->outcome == RunOutcome::Used && run_b->outcome == RunOutcome::Used) {
                    values_a.push_back(*run_a->value);
                    values_b.push_back(*run_b->value);
                } else {
                    ++difference.pairs_left_out;
                }
            }
            difference.paired = true;
            difference.why = "both groups hold seeds " + seeds_text(*seeds_a);
            difference.estimate = stats::paired_difference(values_a, values_b, level);
            return difference;
        }
        why = "the seeds differ (" + seeds_text(*seeds_a) + " against " + seeds_text(*seeds_b) + ")";
    }
    difference.why = why;
    difference.estimate = stats::welch_difference(used_values(a), used_values(b), level);
    return difference;
}

}  // namespace normlab
