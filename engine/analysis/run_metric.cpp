// Metric specs and their values: summary.json for the final losses, metrics.jsonl (RunFolderReader,
// read to its end) for FIELD@STEP, whose fields are the metrics table's run-level columns.
#include "engine/analysis/run_metric.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>

#include "engine/core/errors.h"
#include "engine/io/json_read.h"
#include "engine/io/metrics_table.h"
#include "engine/io/run_folder_reader.h"

namespace normlab {

namespace {
namespace fs = std::filesystem;

const char* const kSummaryMetrics[] = {"final_val_loss", "final_loss"};

std::string joined(const std::vector<std::string>& words) {
    std::string text;
    for (const std::string& word : words) text += (text.empty() ? "" : ", ") + word;
    return text;
}

std::string metric_choices() {
    return "final_val_loss, final_loss, or FIELD@STEP with FIELD one of " + joined(run_level_columns());
}

// Steps as "10, 20, 30, ..., 400 (40 steps)" for messages.
std::string steps_text(const std::vector<int64_t>& steps) {
    if (steps.empty()) return "none";
    std::string text;
    for (size_t i = 0; i < std::min<size_t>(steps.size(), 3); ++i)
        text += (i ? ", " : "") + std::to_string(steps[i]);
    if (steps.size() > 4) text += ", ...";
    if (steps.size() > 3) text += ", " + std::to_string(steps.back());
    return text + " (" + std::to_string(steps.size()) + " steps)";
}

// FIELD@STEP of a run: the value, or nothing with `steps_logged` / `steps_with_field` filled for the
// message.
std::optional<double> value_at_step(RunFolderReader& reader, size_t column, int64_t step,
                                    std::vector<int64_t>& steps_logged,
                                    std::vector<int64_t>& steps_with_field) {
    std::optional<double> found;
    for (RunFolderReader::Update update = reader.poll();; update = reader.poll()) {
        for (const StepRecord& record : update.records) {
            const std::optional<double> value = run_level_values(record)[column];
            steps_logged.push_back(record.step);
            if (value) steps_with_field.push_back(record.step);
            if (record.step == step && value) found = value;  // the last line for a step wins
        }
        if (!update.more) return found;
    }
}

// What summary.json has of the summary metrics, for a message.
std::string summary_has(const RunFolderSummary& summary) {
    std::vector<std::string> present;
    if (summary.final_val_loss) present.emplace_back("final_val_loss");
    if (summary.final_loss) present.emplace_back("final_loss");
    return present.empty() ? "neither" : joined(present);
}
}  // namespace

std::string MetricSpec::text() const {
    return step ? field + "@" + std::to_string(*step) : field;
}

MetricSpec parse_metric_spec(const std::string& text) {
    for (const char* name : kSummaryMetrics)
        if (text == name) return {text, std::nullopt};
    const size_t at = text.find('@');
    const std::vector<std::string> fields = run_level_columns();
    const std::string field = text.substr(0, at);
    if (std::find(fields.begin(), fields.end(), field) == fields.end())
        throw InputError("--metric '" + text_excerpt(text) + "' is not a metric; give " + metric_choices());
    if (at == std::string::npos)
        throw InputError("--metric " + field + " needs the step: " + field + "@STEP, e.g. " + field + "@100");
    const std::string step_text = text.substr(at + 1);
    int64_t step = 0;
    const auto [end, error] = std::from_chars(step_text.data(), step_text.data() + step_text.size(), step);
    if (error != std::errc() || end != step_text.data() + step_text.size() || step < 1)
        throw InputError("--metric " + text_excerpt(text) + ": the step after @ must be a whole number >= 1");
    return {field, step};
}

const char* to_string(RunOutcome outcome) {
    switch (outcome) {
        case RunOutcome::Used:
            return "used";
        case RunOutcome::Diverged:
            return "diverged";
        case RunOutcome::Unfinished:
            return "unfinished";
    }
    return "unfinished";
}

RunValue read_run_metric(const GroupMember& member, const MetricSpec& spec) {
    RunValue run;
    run.folder = member.folder;
    run.seed = member.seed;
    std::error_code error;
    if (!fs::exists(member.folder, error)) {
        run.status = "missing";
        run.note = "not written yet";
        return run;
    }
    RunFolderReader reader(member.folder);
    if (reader.source().empty() && reader.configNote().empty()) run.seed = reader.config().train.seed;
    const RunFolderSummary summary = reader.summary().value_or(RunFolderSummary{});
    run.status = summary.status.empty() ? "unknown" : summary.status;
    const bool diverged = summary.status == "diverged";
    if (!diverged && summary.status != "completed") {
        run.note = "status " + run.status;
        return run;
    }
    if (!spec.step) {
        run.value = spec.field == "final_loss" ? summary.final_loss : summary.final_val_loss;
        if (!run.value && !diverged)
            throw InputError(member.folder + "/summary.json has no " + spec.field + " (it has " +
                             summary_has(summary) + "); choose another --metric: " + metric_choices());
    } else {
        const std::vector<std::string> fields = run_level_columns();
        const size_t column =
            static_cast<size_t>(std::find(fields.begin(), fields.end(), spec.field) - fields.begin());
        std::vector<int64_t> logged, with_field;
        run.value = value_at_step(reader, column, *spec.step, logged, with_field);
        if (!run.value && !diverged) {
            if (std::find(logged.begin(), logged.end(), *spec.step) == logged.end())
                throw InputError(member.folder + "/metrics.jsonl has no step " + std::to_string(*spec.step) +
                                 "; it logged steps " + steps_text(logged));
            throw InputError(member.folder + "/metrics.jsonl has no " + spec.field + " at step " +
                             std::to_string(*spec.step) + "; " +
                             (with_field.empty()
                                  ? "it never logged " + spec.field
                                  : "it has " + spec.field + " at steps " + steps_text(with_field)));
        }
    }
    if (diverged || !std::isfinite(*run.value)) {
        run.outcome = RunOutcome::Diverged;
        run.note = summary.diverged_at ? "diverged at step " + std::to_string(*summary.diverged_at)
                                       : spec.text() + " is not finite";
        return run;
    }
    run.outcome = RunOutcome::Used;
    return run;
}

}  // namespace normlab
