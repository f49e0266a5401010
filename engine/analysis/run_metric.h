// One number per run for comparing groups of runs: a metric named on the command line (final_val_loss,
// final_loss from summary.json; FIELD@STEP, a run-level field of metrics.jsonl at one step; max:FIELD /
// min:FIELD over every logged step and block; FILE.json:KEY, a number a probe wrote into the folder)
// read from a run folder, with what kept it out of a comparison (a diverged or unfinished run).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/io/run_group.h"

namespace normlab {

// How the metric's number is taken from a run folder.
enum class MetricKind {
    Summary,   // final_val_loss or final_loss of summary.json
    AtStep,    // FIELD@STEP: a run-level field of metrics.jsonl at one step
    Largest,   // max:FIELD: the largest value of a run-level or per-block field, any step and block
    Smallest,  // min:FIELD: the smallest
    JsonFile,  // FILE.json:KEY.KEY: a number in a JSON file of the run folder (freeze_norms.json, ...)
};

struct MetricSpec {
    MetricKind kind = MetricKind::Summary;
    std::string field;            // the summary or metrics.jsonl field; for JsonFile the key path
    std::optional<int64_t> step;  // set for AtStep
    std::string file;             // JsonFile: the file's name in the run folder
    std::string text() const;     // as given: "val_loss@200", "max:attn_max_logit"
};

// Parses "final_val_loss", "final_loss", "FIELD@STEP", "max:FIELD", "min:FIELD" or "FILE.json:KEY".
// Throws InputError listing the choices.
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
