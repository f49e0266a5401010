// groupValues and comparisonText: RunValues from RunHistory, then the engine's summarize_runs,
// compare_groups and comparison_text.
#include "ui/history/group_values.h"

#include <algorithm>

#include "engine/analysis/comparison_text.h"

namespace normlab::ui {

namespace {
normlab::RunValue valueOf(const RunHistory& run, bool validation) {
    normlab::RunValue value;
    value.folder = (run.folder.isEmpty() ? run.name : run.folder).toStdString();
    // Another writer's run says which keys it gave: its seed is known only if it gave one.
    const bool seedKnown = run.knownKeys.empty() || std::find(run.knownKeys.begin(), run.knownKeys.end(),
                                                              "train.seed") != run.knownKeys.end();
    if (seedKnown) value.seed = run.config.train.seed;
    value.status = run.started ? normlab::to_string(run.status) : "not started";
    value.value = validation ? run.valLoss.lastValue() : run.loss.lastValue();
    if (run.started && run.status == normlab::RunStatus::Diverged) {
        value.outcome = normlab::RunOutcome::Diverged;
        value.note = "diverged";
    } else if (!run.started || run.status != normlab::RunStatus::Completed) {
        value.outcome = normlab::RunOutcome::Unfinished;
        value.note = "not finished";
    } else if (!value.value) {
        value.outcome = normlab::RunOutcome::Unfinished;
        value.note = validation ? "no validation loss logged" : "no loss logged";
    } else {
        value.outcome = normlab::RunOutcome::Used;
    }
    return value;
}

std::string estimateText(const char* name, const RunHistory& entry, const normlab::GroupSummary& group) {
    std::string text = std::string(name) + " " + entry.name.toStdString() + ": n " +
                       std::to_string(group.estimate.n) + ", " +
                       normlab::estimate_line(group.estimate, false);
    if (const size_t out = group.diverged + group.unfinished; out > 0)
        text += " (" + std::to_string(group.diverged) + " diverged, " + std::to_string(group.unfinished) +
                " unfinished: left out)";
    return text;
}
}  // namespace

std::vector<normlab::RunValue> groupValues(const TelemetryStore& store, const RunHistory& entry,
                                           bool validation) {
    std::vector<normlab::RunValue> values;
    if (!entry.bands) return {valueOf(entry, validation)};
    for (int member : entry.bands->members)
        if (const auto found = store.runs().find(member); found != store.runs().end())
            values.push_back(valueOf(found->second, validation));
    return values;
}

QString comparisonText(const TelemetryStore& store, const RunHistory& a, const RunHistory& b,
                       bool validation) {
    const normlab::GroupSummary first =
        normlab::summarize_runs(a.name.toStdString(), groupValues(store, a, validation));
    const normlab::GroupSummary second =
        normlab::summarize_runs(b.name.toStdString(), groupValues(store, b, validation));
    if (first.estimate.n == 0 && second.estimate.n == 0) return {};
    const normlab::GroupDifference difference = normlab::compare_groups(first, second);
    const std::string text =
        std::string(validation ? "final validation loss" : "final loss") + "\n" +
        estimateText("A", a, first) + "\n" + estimateText("B", b, second) + "\n" +
        (first.estimate.n > 0 && second.estimate.n > 0 ? normlab::difference_line(first, second, difference)
                                                       : std::string("B - A: when both have a finished run"));
    return QString::fromStdString(text);
}

}  // namespace normlab::ui
