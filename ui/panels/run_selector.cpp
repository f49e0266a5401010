// RunSelector population from the store.
#include "ui/panels/run_selector.h"

#include <utility>

namespace normlab::ui {

RunSelector::RunSelector(const TelemetryStore& store, int rank, QWidget* parent)
    : QComboBox(parent), m_store(store), m_rank(rank) {
    setSizeAdjustPolicy(QComboBox::AdjustToContents);
    connect(&store, &TelemetryStore::runsChanged, this, &RunSelector::repopulate);
    // Any change but repopulate's own (its signals are blocked) is a choice.
    connect(this, &QComboBox::currentIndexChanged, this, [this] {
        m_chosen = true;
        nameInToolTip();
    });
    repopulate();
}

int RunSelector::rankedRun() const {
    bool any_preferred = false;
    for (const auto& [id, run] : m_store.runs()) any_preferred |= run.visible && m_prefers && m_prefers(run);
    int rank = 0, last = -1;
    for (const auto& [id, run] : m_store.runs()) {
        if (!run.visible || (any_preferred && !m_prefers(run))) continue;
        if (rank++ == m_rank) return id;
        last = id;
    }
    return last;
}

void RunSelector::setPreference(std::function<bool(const RunHistory&)> prefers) {
    m_prefers = std::move(prefers);
    repopulate();
}

void RunSelector::repopulate() {
    const int chosen = m_chosen && currentData().isValid() ? currentData().toInt() : -1;
    QSignalBlocker blocker(this);
    clear();
    for (const auto& [id, run] : m_store.runs()) addItem(run.name, id);
    const auto shown = m_store.runs().find(chosen);
    int index = shown != m_store.runs().end() && shown->second.visible ? findData(chosen) : -1;
    // Nothing chosen yet, or the chosen run was hidden: the run of this selector's rank on the charts.
    if (index < 0) index = findData(rankedRun());
    setCurrentIndex(index >= 0 ? index : 0);
    nameInToolTip();
}

void RunSelector::nameInToolTip() {
    // A narrow box (the difference chart's) cuts "quickstart / fork@174" to "quickstart": the whole
    // name is a hover away.
    setToolTip(currentText().isEmpty() ? tr("Which run this chart shows")
                                       : tr("Which run this chart shows: %1").arg(currentText()));
}

const RunHistory* RunSelector::selectedRun() const {
    const auto& runs = m_store.runs();
    if (currentData().isValid()) {
        const auto found = runs.find(currentData().toInt());
        if (found != runs.end()) return &found->second;
    }
    const auto ranked = runs.find(rankedRun());
    return ranked != runs.end() ? &ranked->second : nullptr;
}

}  // namespace normlab::ui
