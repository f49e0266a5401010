// One number per run for comparing groups of runs: a metric named on the command line (final_val_loss,
// final_loss from summary.json, or FIELD@STEP, a run-level field of metrics.jsonl at one step) read
// from a run folder, with what kept it out of a comparison (a diverged or unfinished run).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/io/run_group.h"

namespace normlab {

struct MetricSpec {
    std::string field;            // final_val_loss, final_loss, or a run-level metrics.jsonl field
    std::optional<int64_t> step;  // set for FIELD@STEP
    std::string text() const;     // as given: "val_loss@200"
};

// Parses "final_val_loss", "final_loss" or "FIELD@STEP". Throws InputError listing the choices.
MetricSpec parse_metric_spec(const std::string& text);

// How a run enters a comparison: its value is used, or it is counted and left out.
enum class RunOutcome { Used, Diverged, Unfinished };
const char* to_string(RunOutcome outcome);

struct RunValue {
    std::string folder;
    std::optional<uint64_t> seed;  // the run's train.seed (config.json, else group.json); unknown for
                                   // another writer's run
    std::string status;            // summary.json's; "missing" for a group's run not written yet
    RunOutcome outcome = RunOutcome::Unfinished;
    std::optional<double> value;  // the metric (may be non-finite for a diverged run)
    std::string note;             // why it was left out
};

// The metric of one run. A run that neither completed nor diverged is Unfinished; a diverged run, or
// one whose value is not finite, is Diverged. Throws InputError when a completed run lacks the metric
// (naming what the folder has) and when the folder is not a run.
RunValue read_run_metric(const GroupMember& member, const MetricSpec& spec);

}  // namespace normlab
