// Run bookkeeping and batch absorption for the GUI-side telemetry store.
#include "ui/history/telemetry_store.h"

#include <algorithm>

namespace normlab::ui {

QColor TelemetryStore::paletteColour(int index) {
    // Okabe-Ito: distinguishable with the common colour-vision deficiencies.
    static const QColor palette[] = {QColor(0, 114, 178),   QColor(213, 94, 0),  QColor(0, 158, 115),
                                     QColor(204, 121, 167), QColor(230, 159, 0), QColor(86, 180, 233),
                                     QColor(120, 120, 120), QColor(0, 0, 0)};
    const int count = static_cast<int>(std::size(palette));
    return palette[((index % count) + count) % count];
}

void TelemetryStore::copyHistory(int fromId, int toId) {
    const auto from = m_runs.find(fromId);
    const auto to = m_runs.find(toId);
    if (from == m_runs.end() || to == m_runs.end() || fromId == toId) return;
    RunHistory copy = from->second;
    const RunHistory& fork = to->second;  // who it is stays: id, name, colour, visibility, config, folder
    copy.id = fork.id;
    copy.name = fork.name;
    copy.colour = fork.colour;
    copy.visible = fork.visible;
    copy.config = fork.config;
    copy.folder = fork.folder;
    copy.source = fork.source;
    copy.note = fork.note;
    copy.knownKeys = fork.knownKeys;
    to->second = std::move(copy);
    emit dataChanged();
}

RunHistory& TelemetryStore::addRun(int id, const QString& name, const normlab::Config& config,
                                   const QString& folder) {
    RunHistory run;
    run.id = id;
    run.name = name;
    // The first palette colour no other run has (runs opened from disk stay beside trained ones).
    m_runs.erase(id);
    int index = 0;
    const auto taken = [this](const QColor& colour) {
        return std::any_of(m_runs.begin(), m_runs.end(),
                           [&colour](const auto& entry) { return entry.second.colour == colour; });
    };
    while (index < 8 && taken(paletteColour(index))) ++index;
    run.colour = paletteColour(index < 8 ? index : id);
    run.config = config;
    run.folder = folder;
    RunHistory& stored = m_runs[id] = std::move(run);
    emit runsChanged();
    return stored;
}

void TelemetryStore::removeAll() {
    m_runs.clear();
    emit runsChanged();
    emit dataChanged();
}

void TelemetryStore::removeRun(int id) {
    m_runs.erase(id);
    emit runsChanged();
    emit dataChanged();
}

void TelemetryStore::removeTrained() {
    std::erase_if(m_runs, [](const auto& entry) { return entry.second.source.isEmpty(); });
    emit runsChanged();
    emit dataChanged();
}

RunHistory* TelemetryStore::run(int id) {
    const auto found = m_runs.find(id);
    return found == m_runs.end() ? nullptr : &found->second;
}

void TelemetryStore::setVisible(int id, bool visible) {
    if (RunHistory* history = run(id); history && history->visible != visible) {
        history->visible = visible;
        emit runsChanged();
        emit dataChanged();
    }
}

void TelemetryStore::setPaused(bool paused) {
    for (auto& [id, history] : m_runs)
        if (history.source.isEmpty()) history.paused = paused;
    emit dataChanged();
}

void TelemetryStore::setRunPaused(int id, bool paused) {
    if (RunHistory* history = run(id); history && history->paused != paused) {
        history->paused = paused;
        emit dataChanged();
    }
}

void TelemetryStore::rename(int id, const QString& name) {
    if (RunHistory* history = run(id); history && history->name != name) {
        history->name = name;
        emit runsChanged();
    }
}

int64_t TelemetryStore::lastStep() const {
    int64_t last = 0;
    for (const auto& [id, history] : m_runs)
        if (history.visible) last = std::max(last, history.step);
    return last;
}

void TelemetryStore::absorb(const normlab::ui::TelemetryBatch& batch) {
    for (const RunUpdate& update : batch.runs)
        if (RunHistory* history = run(update.runId)) history->absorb(update);
    emit dataChanged();
}

}  // namespace normlab::ui
