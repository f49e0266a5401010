// RunSelector population from the store.
#include "ui/panels/run_selector.h"

namespace normlab::ui {

RunSelector::RunSelector(const TelemetryStore& store, QWidget* parent) : QComboBox(parent), m_store(store) {
    setSizeAdjustPolicy(QComboBox::AdjustToContents);
    setToolTip(tr("Which run this chart shows"));
    connect(&store, &TelemetryStore::runsChanged, this, &RunSelector::repopulate);
    repopulate();
}

void RunSelector::repopulate() {
    const int chosen = currentData().isValid() ? currentData().toInt() : -1;
    QSignalBlocker blocker(this);
    clear();
    for (const auto& [id, run] : m_store.runs()) addItem(run.name, id);
    const auto shown = m_store.runs().find(chosen);
    int index = shown != m_store.runs().end() && shown->second.visible ? findData(chosen) : -1;
    // Nothing chosen yet, or the chosen run was hidden: the first run shown on the charts.
    for (const auto& [id, run] : m_store.runs())
        if (index < 0 && run.visible) index = findData(id);
    setCurrentIndex(index >= 0 ? index : 0);
}

const RunHistory* RunSelector::selectedRun() const {
    const auto& runs = m_store.runs();
    if (currentData().isValid()) {
        const auto found = runs.find(currentData().toInt());
        if (found != runs.end()) return &found->second;
    }
    for (const auto& [id, run] : runs)
        if (run.visible) return &run;
    return nullptr;
}

}  // namespace normlab::ui
