// `normlab-cli compare --run A [--run B]`: groups of runs (a seed group, a folder of runs, or one run)
// on one metric: each group's n, mean, sd and 95% Student t interval, and B - A paired by seed or,
// when the seeds differ, by Welch; diverged and unfinished runs counted, never averaged.
#include <cmath>
#include <iostream>

#include <nlohmann/json.hpp>

#include "app/cli/cli_options.h"
#include "app/cli/subcommands.h"
#include "engine/analysis/comparison_text.h"
#include "engine/core/errors.h"

namespace normlab::cli {

namespace {
const char* kCompareHelp =
    "usage: normlab-cli compare --run A [--run B] [--metric M] [--json]\n"
    "\n"
    "Compares two groups of runs on one metric, as a controlled experiment. A and B are each a seed\n"
    "group (a folder with group.json, from train --seeds), a folder of run folders, or one run folder\n"
    "(a group of one). Prints each group's n, mean, sd and 95% confidence interval (Student t, n - 1\n"
    "dof), then the difference B - A: paired by seed when both groups hold the same seeds, else Welch's\n"
    "unpaired difference (Welch-Satterthwaite dof); the output says which. One run has no interval\n"
    "(\"n/a, one seed\"). Runs that diverged (or whose value is not finite) and runs that have not\n"
    "finished are counted and left out. With one --run: that group's estimate alone.\n"
    "\n"
    "  --run DIR            a group, given once or twice: first A, then B\n"
    "  --metric M           final_val_loss (default) or final_loss from summary.json;\n"
    "                       FIELD@STEP: a run-level field of metrics.jsonl at that step, e.g. val_loss@200;\n"
    "                       max:FIELD / min:FIELD: its largest / smallest value over every logged step\n"
    "                       and block, e.g. max:attn_max_logit, min:attn_entropy;\n"
    "                       FILE.json:KEY: a number in a JSON file of the run folder, keys dotted,\n"
    "                       e.g. freeze_norms.json:all_at_once.loss_change\n"
    "  --json               the same numbers as JSON\n"
    "Exit code 2 when a finished run lacks the metric (the message names what it has).\n";

constexpr double kLevel = 0.95;

nlohmann::json optional_json(const std::optional<double>& value) {
    return value && std::isfinite(*value) ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

nlohmann::json estimate_json(const stats::Estimate& estimate, bool welch) {
    nlohmann::json json = {{"n", estimate.n},
                           {"mean", optional_json(estimate.mean)},
                           {"sd", optional_json(estimate.sd)},
                           {"se", optional_json(estimate.se)},
                           {"dof", optional_json(estimate.dof)},
                           {"t", optional_json(estimate.t)},
                           {"ci", estimate.ci ? nlohmann::json::array({estimate.ci->low, estimate.ci->high})
                                              : nlohmann::json(nullptr)}};
    if (!estimate.ci) json["ci_note"] = missing_interval(estimate, welch);
    return json;
}

nlohmann::json group_summary_json(const GroupSummary& group) {
    nlohmann::json json = estimate_json(group.estimate, false);
    json["path"] = group.path;
    json["diverged"] = group.diverged;
    json["unfinished"] = group.unfinished;
    nlohmann::json runs = nlohmann::json::array();
    for (const RunValue& run : group.runs)
        runs.push_back({{"folder", run.folder},
                        {"seed", run.seed ? nlohmann::json(*run.seed) : nlohmann::json(nullptr)},
                        {"status", run.status},
                        {"outcome", to_string(run.outcome)},
                        {"value", optional_json(run.value)},
                        {"note", run.note}});
    json["runs"] = runs;
    return json;
}

void print_group(const char* name, const GroupSummary& group) {
    std::cout << name << ": " << group.path << " (" << group.runs.size() << " run"
              << (group.runs.size() == 1 ? "" : "s") << ")\n  n " << group.estimate.n << ", "
              << estimate_line(group.estimate, false) << "\n";
    for (const RunValue& run : group.runs)
        if (run.outcome != RunOutcome::Used)
            std::cout << "  left out (" << to_string(run.outcome) << "): " << run.folder << ": " << run.note
                      << "\n";
}

// The groups as text: A, then (when given) B and the difference.
void print_text(const MetricSpec& spec, const std::vector<GroupSummary>& groups) {
    std::cout << "metric: " << spec.text() << "\n";
    print_group("A", groups.front());
    if (groups.size() < 2) return;
    print_group("B", groups[1]);
    std::cout << difference_line(groups[0], groups[1], compare_groups(groups[0], groups[1], kLevel)) << "\n";
}

// The same as JSON: "a", and with B "b" and "difference".
void print_json(const MetricSpec& spec, const std::vector<GroupSummary>& groups) {
    nlohmann::json out = {
        {"metric", spec.text()}, {"level", kLevel}, {"a", group_summary_json(groups.front())}};
    if (groups.size() == 2) {
        const GroupDifference d = compare_groups(groups[0], groups[1], kLevel);
        nlohmann::json difference = estimate_json(d.estimate, !d.paired);
        difference["kind"] = d.paired ? "paired" : "welch";
        difference["why"] = d.why;
        difference["pairs_left_out"] = d.pairs_left_out;
        out["b"] = group_summary_json(groups[1]);
        out["difference"] = difference;
    }
    std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}
}  // namespace

int run_compare(int argc, char** argv) {
    ArgReader reader(argc, argv, 2);
    std::vector<std::string> runs;
    std::string metric = "final_val_loss";
    bool as_json = false;
    while (!reader.done()) {
        const std::string flag = reader.take();
        if (flag == "--help" || flag == "-h") {
            std::cout << kCompareHelp;
            return 0;
        }
        if (flag == "--run") {
            runs.push_back(reader.value_of(flag));
        } else if (flag == "--metric") {
            metric = reader.value_of(flag);
        } else if (flag == "--json") {
            as_json = true;
        } else {
            throw InputError("unknown option '" + flag + "'; see normlab-cli compare --help");
        }
    }
    if (runs.empty() || runs.size() > 2)
        throw InputError("give --run once (one group's estimate) or twice (A, then B), got " +
                         std::to_string(runs.size()) + "; see normlab-cli compare --help");
    const MetricSpec spec = parse_metric_spec(metric);
    std::vector<std::string> notes;
    std::vector<GroupSummary> groups;
    for (const std::string& run : runs) groups.push_back(summarize_group(run, spec, kLevel, &notes));
    for (const std::string& note : notes) std::cerr << "normlab-cli compare: " << note << "\n";
    if (as_json)
        print_json(spec, groups);
    else
        print_text(spec, groups);
    return 0;
}

}  // namespace normlab::cli
