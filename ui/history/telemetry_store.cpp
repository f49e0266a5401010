// Run bookkeeping and batch absorption for the GUI-side telemetry store.
#include "ui/history/telemetry_store.h"

#include <algorithm>
#include <utility>

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
    copy.groupId = fork.groupId;
    copy.bands = fork.bands;
    to->second = std::move(copy);
    // A fork of a group's seed into another group: that group's mean starts from the parent's past too.
    const auto fromGroup = m_groups.find(from->second.groupId), toGroup = m_groups.find(fork.groupId);
    if (fromGroup != m_groups.end() && toGroup != m_groups.end()) {
        toGroup->second.copyMember(fromGroup->second, fromId, toId);
        scheduleGroupRebuild(fork.groupId);
    }
    emit dataChanged();
}

TelemetryStore::TelemetryStore(QObject* parent) : QObject(parent) {
    m_groupTimer.setSingleShot(true);
    m_groupTimer.setInterval(100);
    connect(&m_groupTimer, &QTimer::timeout, this, &TelemetryStore::rebuildGroups);
}

QColor TelemetryStore::freeColour(int id) const {
    // Runs opened from disk stay beside trained ones; a group's hidden members do not hold a colour.
    const auto taken = [this](const QColor& colour) {
        return std::any_of(m_runs.begin(), m_runs.end(), [&colour](const auto& entry) {
            return entry.second.groupId < 0 && entry.second.colour == colour;
        });
    };
    int index = 0;
    while (index < 8 && taken(paletteColour(index))) ++index;
    return paletteColour(index < 8 ? index : id);
}

RunHistory& TelemetryStore::addRun(int id, const QString& name, const normlab::Config& config,
                                   const QString& folder) {
    RunHistory run;
    run.id = id;
    run.name = name;
    m_runs.erase(id);
    run.colour = freeColour(id);
    run.config = config;
    run.folder = folder;
    RunHistory& stored = m_runs[id] = std::move(run);
    emit runsChanged();
    return stored;
}

RunHistory& TelemetryStore::addGroup(int id, const QString& name, const normlab::Config& config,
                                     const QString& folder, const std::vector<int>& members,
                                     const QString& seeds) {
    for (int member : members)
        if (RunHistory* run = this->run(member)) run->groupId = id, run->visible = false;
    RunHistory& group = addRun(id, name, config, folder);
    group.source = QStringLiteral("seed group");
    group.bands.emplace();
    group.bands->members = members;
    group.bands->spread = m_spread;
    group.bands->seeds = seeds;
    for (int member : members)
        if (RunHistory* run = this->run(member)) run->colour = group.colour;
    m_groups[id] = SeedGroupRecords{};  // a group added again (its runs restarted) starts afresh
    scheduleGroupRebuild(id);
    emit runsChanged();
    return group;
}

void TelemetryStore::setSpread(Spread spread) {
    if (spread == m_spread) return;
    m_spread = spread;
    for (auto& [id, run] : m_runs)
        if (run.bands) run.bands->spread = spread, scheduleGroupRebuild(id);
    rebuildGroups();
}

void TelemetryStore::setSeedsShown(int groupId, bool shown) {
    RunHistory* group = run(groupId);
    if (!group || !group->bands || group->bands->seedsShown == shown) return;
    group->bands->seedsShown = shown;
    for (int member : group->bands->members)
        if (RunHistory* history = run(member)) history->visible = shown && group->visible;
    emit runsChanged();
    emit dataChanged();
}

void TelemetryStore::restartRun(int id) {
    RunHistory* history = run(id);
    if (!history) return;
    history->clearHistory();
    if (const auto group = m_groups.find(history->groupId); group != m_groups.end()) {
        group->second.restart(id);
        scheduleGroupRebuild(history->groupId);
    }
}

void TelemetryStore::scheduleGroupRebuild(int groupId) {
    if (std::find(m_dirtyGroups.begin(), m_dirtyGroups.end(), groupId) == m_dirtyGroups.end())
        m_dirtyGroups.push_back(groupId);
    if (!m_groupTimer.isActive()) m_groupTimer.start();
}

void TelemetryStore::rebuildGroups() {
    m_groupTimer.stop();
    if (m_dirtyGroups.empty()) return;
    for (int id : std::exchange(m_dirtyGroups, {})) {
        const auto group = m_groups.find(id);
        RunHistory* history = run(id);
        if (group != m_groups.end() && history && history->bands) group->second.rebuild(*history, m_runs);
    }
    emit dataChanged();
}

void TelemetryStore::removeAll() {
    m_runs.clear();
    m_groups.clear();
    m_dirtyGroups.clear();
    emit runsChanged();
    emit dataChanged();
}

void TelemetryStore::removeRun(int id) {
    if (const auto found = m_runs.find(id); found != m_runs.end() && found->second.bands)
        for (int member : found->second.bands->members) m_runs.erase(member);
    m_groups.erase(id);
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
    return const_cast<RunHistory*>(std::as_const(*this).run(id));  // one lookup, two constnesses
}

const RunHistory* TelemetryStore::run(int id) const {
    const auto found = m_runs.find(id);
    return found == m_runs.end() ? nullptr : &found->second;
}

void TelemetryStore::setVisible(int id, bool visible) {
    if (RunHistory* history = run(id); history && history->visible != visible) {
        history->visible = visible;
        if (history->bands)  // a group's seeds shown go with it
            for (int member : history->bands->members)
                if (RunHistory* seed = run(member)) seed->visible = visible && history->bands->seedsShown;
        emit runsChanged();
        emit dataChanged();
    }
}

void TelemetryStore::setPaused(bool paused) {
    for (auto& [id, history] : m_runs) {
        if (!history.source.isEmpty()) continue;
        history.paused = paused;
        if (history.groupId >= 0) scheduleGroupRebuild(history.groupId);  // its group's words say so
    }
    emit dataChanged();
}

void TelemetryStore::setRunPaused(int id, bool paused) {
    if (RunHistory* history = run(id); history && history->paused != paused) {
        history->paused = paused;
        emit dataChanged();
    }
}

void TelemetryStore::setConfig(int id, const normlab::Config& config) {
    if (RunHistory* history = run(id)) {
        history->config = config;
        emit runsChanged();
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
    for (const RunUpdate& update : batch.runs) {
        RunHistory* history = run(update.runId);
        if (!history) continue;
        history->absorb(update);
        if (const auto group = m_groups.find(history->groupId); group != m_groups.end()) {
            group->second.absorb(update);
            scheduleGroupRebuild(history->groupId);
        }
    }
    emit dataChanged();
}

}  // namespace normlab::ui
