// Metric specs and their values: summary.json for the final losses, metrics.jsonl (RunFolderReader,
// read to its end) for FIELD@STEP, whose fields are the metrics table's run-level columns, the metrics
// table's rows for max:/min: (so every block of every stack counts), a JSON file for FILE.json:KEY.
#include "engine/analysis/run_metric.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "engine/core/errors.h"
#include "engine/core/json_read.h"
#include "engine/io/metrics_table.h"
#include "engine/io/records_json.h"
#include "engine/io/run_folder_reader.h"

namespace normlab {

namespace {
namespace fs = std::filesystem;

const char* const kSummaryMetrics[] = {"final_val_loss", "final_loss"};
const char* const kLargestPrefix = "max:";
const char* const kSmallestPrefix = "min:";
const char* const kJsonSuffix = ".json";

std::string joined(const std::vector<std::string>& words) {
    std::string text;
    for (const std::string& word : words) text += (text.empty() ? "" : ", ") + word;
    return text;
}

std::string metric_choices() {
    return "final_val_loss, final_loss, FIELD@STEP with FIELD one of " + joined(run_level_columns()) +
           "; max:FIELD or min:FIELD with FIELD one of those or a per-block field (" +
           joined(block_field_names(true)) +
           "); or FILE.json:KEY, a number in a JSON file of the run folder (e.g. "
           "freeze_norms.json:all_at_once.loss_change)";
}

bool starts_with(const std::string& text, const char* prefix) {
    return text.rfind(prefix, 0) == 0;
}

// "max:FIELD" / "min:FIELD": FIELD is any column of the metrics table.
MetricSpec parse_extreme(const std::string& text, MetricKind kind) {
    const std::string field =
        text.substr(std::strlen(kind == MetricKind::Largest ? kLargestPrefix : kSmallestPrefix));
    const std::vector<std::string> columns = metrics_table_value_columns();
    if (std::find(columns.begin(), columns.end(), field) == columns.end())
        throw InputError("--metric '" + text_excerpt(text) + "': '" + text_excerpt(field) +
                         "' is not a field; give " + metric_choices());
    return {kind, field, std::nullopt, {}};
}

// "FILE.json:KEY.KEY": a plain file name in the run folder and a dotted path of object keys or array
// indices to a number.
MetricSpec parse_json_file(const std::string& text, size_t colon) {
    const std::string file = text.substr(0, colon), key = text.substr(colon + 1);
    if (file.find_first_of("/\\") != std::string::npos || file.front() == '.')
        throw InputError("--metric '" + text_excerpt(text) + "': '" + text_excerpt(file) +
                         "' must be a file name inside the run folder (no path), e.g. freeze_norms.json");
    if (key.empty() || key.front() == '.' || key.back() == '.' || key.find("..") != std::string::npos)
        throw InputError("--metric '" + text_excerpt(text) +
                         "': give the number's key after the colon, "
                         "dotted for nested objects, e.g. freeze_norms.json:all_at_once.loss_change");
    return {MetricKind::JsonFile, key, std::nullopt, file};
}

// The largest or smallest value of one metrics-table column over every row (run-level rows and each
// block of each stack); NaN as soon as one value is NaN, so an overflowed run does not look tame.
class ExtremeSink : public MetricsTableSink {
  public:
    ExtremeSink(size_t column, bool largest) : m_column(column), m_largest(largest) {}
    void row(const std::string&, int64_t, const char*, int,
             const std::vector<std::optional<double>>& values) override {
        const std::optional<double>& cell = values[m_column];
        if (!cell) return;
        if (std::isnan(*cell) || (m_value && std::isnan(*m_value)))
            m_value = std::nan("");
        else if (!m_value || (m_largest ? *cell > *m_value : *cell < *m_value))
            m_value = *cell;
    }
    const std::optional<double>& value() const { return m_value; }

  private:
    size_t m_column;
    bool m_largest;
    std::optional<double> m_value;
};

std::optional<double> extreme_value(const std::string& folder, const MetricSpec& spec) {
    const std::vector<std::string> columns = metrics_table_value_columns();
    const size_t column =
        static_cast<size_t>(std::find(columns.begin(), columns.end(), spec.field) - columns.begin());
    ExtremeSink sink(column, spec.kind == MetricKind::Largest);
    walk_metrics_table({folder}, sink);
    return sink.value();
}

// Names the keys of a JSON object for a message (at most 12).
std::string keys_text(const nlohmann::json& object) {
    std::vector<std::string> keys;
    for (const auto& item : object.items())
        if (keys.size() < 12) keys.push_back(item.key());
    return keys.empty() ? "no keys" : "keys " + joined(keys) + (object.size() > 12 ? ", ..." : "");
}

// The number at spec.field in the folder's spec.file; NaN for a JSON null (a value its writer could
// not compute). Throws InputError naming what the file has where the path leads nowhere.
double json_file_value(const std::string& folder, const MetricSpec& spec) {
    const std::string path = (fs::path(folder) / spec.file).string();
    std::error_code error;
    if (!fs::exists(path, error))
        throw InputError(
            folder + " has no " + spec.file +
            "; a FILE.json metric reads what a probe wrote into "
            "the run folder (e.g. normlab-cli probe --freeze-norms --out RUN writes freeze_norms.json)");
    const nlohmann::json document = read_json_file(path, spec.file);
    const nlohmann::json* at = &document;
    std::string walked = spec.file;
    for (size_t start = 0; start <= spec.field.size();) {
        const size_t dot = std::min(spec.field.find('.', start), spec.field.size());
        const std::string key = spec.field.substr(start, dot - start);
        start = dot + 1;
        if (at->is_object() && at->contains(key)) {
            at = &(*at)[key];
        } else if (at->is_array() && !key.empty() &&
                   key.find_first_not_of("0123456789") == std::string::npos && key.size() < 10 &&
                   std::stoul(key) < at->size()) {
            at = &(*at)[std::stoul(key)];
        } else {
            throw InputError(path + ": " + walked + " has no '" + text_excerpt(key) + "' (" +
                             (at->is_object()  ? keys_text(*at)
                              : at->is_array() ? std::to_string(at->size()) + " items"
                                               : "it is " + json_excerpt(*at)) +
                             "); choose another --metric");
        }
        walked += (walked == spec.file ? ":" : ".") + key;
    }
    if (at->is_null()) return std::nan("");
    if (!at->is_number())
        throw InputError(path + ": " + walked + " is " + json_excerpt(*at) +
                         ", not a number; choose another --metric");
    return at->get<double>();
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
    switch (kind) {
        case MetricKind::Summary:
            return field;
        case MetricKind::AtStep:
            return field + "@" + std::to_string(step.value_or(0));
        case MetricKind::Largest:
            return kLargestPrefix + field;
        case MetricKind::Smallest:
            return kSmallestPrefix + field;
        case MetricKind::JsonFile:
            return file + ":" + field;
    }
    return field;
}

MetricSpec parse_metric_spec(const std::string& text) {
    for (const char* name : kSummaryMetrics)
        if (text == name) return {MetricKind::Summary, text, std::nullopt, {}};
    if (starts_with(text, kLargestPrefix)) return parse_extreme(text, MetricKind::Largest);
    if (starts_with(text, kSmallestPrefix)) return parse_extreme(text, MetricKind::Smallest);
    const size_t json = text.find(std::string(kJsonSuffix) + ":");
    if (json != std::string::npos && json > 0) return parse_json_file(text, json + std::strlen(kJsonSuffix));
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
    return {MetricKind::AtStep, field, step, {}};
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
    if (spec.kind == MetricKind::Summary) {
        run.value = spec.field == "final_loss" ? summary.final_loss : summary.final_val_loss;
        if (!run.value && !diverged)
            throw InputError(member.folder + "/summary.json has no " + spec.field + " (it has " +
                             summary_has(summary) + "); choose another --metric: " + metric_choices());
    } else if (spec.kind == MetricKind::Largest || spec.kind == MetricKind::Smallest) {
        run.value = extreme_value(member.folder, spec);
        if (!run.value && !diverged)
            throw InputError(member.folder + "/metrics.jsonl never logged " + spec.field +
                             "; choose another --metric: " + metric_choices());
    } else if (spec.kind == MetricKind::JsonFile) {
        // A diverged run's probe may never have run: it is counted as diverged, not asked for the file.
        if (!diverged || fs::exists(fs::path(member.folder) / spec.file, error))
            run.value = json_file_value(member.folder, spec);
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
