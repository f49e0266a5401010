// Seed groups of runs trained in the window (a lesson started with several seeds, or an experiment
// that saved one): runs sharing ExperimentRun::group are drawn as one entry, their mean with a band;
// the controls edit every seed of the group selected, live changes reach them all, and a fork of a
// paused group forks each seed into a new group beside it.
#include <algorithm>
#include <map>

#include "app/gui/main_window.h"
#include "app/gui/run_folder_opener.h"
#include "engine/config/config.h"
#include "ui/controls/config_panel.h"

namespace normlab::gui {

static_assert(MainWindow::kFirstLiveGroupId < RunFolderOpener::kFirstOpenedId,
              "live groups' entries sit between the trained runs' ids and the opened folders'");

void MainWindow::groupLiveRuns() {
    m_liveGroupIds.clear();
    std::vector<QString> names;  // in the order their first run appears
    std::map<QString, std::vector<int>> members;
    for (size_t i = 0; i < m_runs.size(); ++i) {
        const QString& group = m_runs[i].group;
        if (group.isEmpty()) continue;
        if (!members.count(group)) names.push_back(group);
        members[group].push_back(static_cast<int>(i));
    }
    for (size_t g = 0; g < names.size(); ++g) {
        const std::vector<int>& ids = members[names[g]];
        std::vector<uint64_t> seeds;
        for (int id : ids) seeds.push_back(m_runs[id].config.train.seed);
        const int groupId = m_liveGroupIds[names[g]] = kFirstLiveGroupId + static_cast<int>(g);
        const ui::RunHistory* previous = m_store.run(groupId);
        // A group whose runs are still its members stays as it is, with what it has absorbed (a fork
        // made a group beside it); one whose runs' entries were made again is made again.
        if (previous && previous->bands && previous->bands->members == ids &&
            std::all_of(ids.begin(), ids.end(), [&](int id) { return m_store.run(id)->groupId == groupId; }))
            continue;
        // Shown as it was, or (a new entry) as its runs were saved: a group's runs keep its visibility.
        const bool visible = previous && previous->bands ? previous->visible : m_runs[ids.front()].visible;
        // Changed live, every seed of it was (the runs' names say so, also in a saved experiment).
        const QString changed = changedSuffix();
        const bool allChanged =
            std::all_of(ids.begin(), ids.end(), [&](int id) { return m_runs[id].name.endsWith(changed); });
        ui::RunHistory& entry =
            m_store.addGroup(groupId, names[g] + (allChanged ? changed : QString()),
                             m_runs[ids.front()].config, QString(), ids, ui::seedListText(seeds));
        entry.source.clear();  // trained here, not read from a folder
        entry.visible = visible;
    }
}

QString MainWindow::changedSuffix() {
    return tr(" (changed)");
}

std::vector<int> MainWindow::liveGroupOf(int runId) const {
    if (runId < 0 || runId >= static_cast<int>(m_runs.size()) || m_runs[runId].group.isEmpty())
        return {runId};
    std::vector<int> ids;
    for (size_t i = 0; i < m_runs.size(); ++i)
        if (m_runs[i].group == m_runs[runId].group) ids.push_back(static_cast<int>(i));
    return ids;
}

int MainWindow::liveGroupEntry(int runId) const {
    if (runId < 0 || runId >= static_cast<int>(m_runs.size())) return -1;
    const auto found = m_liveGroupIds.find(m_runs[runId].group);
    return found == m_liveGroupIds.end() ? -1 : found->second;
}

QString MainWindow::editedName(int runId) const {
    const int entry = liveGroupEntry(runId);
    return entry >= 0 ? m_store.runs().at(entry).name : m_runs.at(runId).name;
}

int MainWindow::firstMemberOfLiveGroup(int storeId) const {
    for (size_t i = 0; i < m_runs.size(); ++i)
        if (liveGroupEntry(static_cast<int>(i)) == storeId) return static_cast<int>(i);
    return -1;
}

void MainWindow::markChangedRuns(const ui::TelemetryBatch& batch) {
    // Renamed when a change reaches the run, not when it is asked for: a run stopped before its next
    // step never took the edit, and was once named "(changed)" all the same.
    const QString changed = changedSuffix();
    bool renamed = false;
    for (const ui::RunUpdate& update : batch.runs) {
        const int id = update.runId;
        if (id < 0 || id >= static_cast<int>(m_runs.size()) ||
            std::none_of(update.events.begin(), update.events.end(),
                         [](const normlab::Event& event) { return event.kind == "change"; }))
            continue;
        // The run no longer is what its name (often a preset's) says; nor is its seed group.
        if (ui::ExperimentRun& run = m_runs[id]; !run.name.endsWith(changed)) {
            m_store.rename(id, run.name += changed);
            renamed = true;
        }
        if (const int entry = liveGroupEntry(id); entry >= 0)
            if (const QString name = m_store.run(entry)->name; !name.endsWith(changed)) {
                m_store.rename(entry, name + changed);
                renamed = true;
            }
    }
    if (renamed) updateControlsTitle();  // "Controls: editing <its new name>"
}

void MainWindow::applyLiveChangeToGroup(const QString& key, const QString& value) {
    for (int id : liveGroupOf(m_activeRun)) {
        ui::ExperimentRun& run = m_runs.at(id);
        if (id != m_activeRun) {
            try {
                normlab::apply_override(run.config, (key + QLatin1Char('=') + value).toStdString());
            } catch (const std::exception&) {  // the panel checked it for the active run, which is alike
            }
        }
        QMetaObject::invokeMethod(
            m_worker, [worker = m_worker, id, key, value] { worker->postChange(id, key, value); },
            Qt::QueuedConnection);
    }
}

void MainWindow::forkLiveGroup(int memberId) {
    const QString name = m_store.run(liveGroupEntry(memberId))->name;
    // Its seeds are stepped in turn: only paused do they all stand at one step.
    if (m_state != WorkerState::Paused) {
        showMessage(tr("Pause first"), tr("%1 is a seed group: its seeds fork together, at one step. Pause "
                                          "(Space) where you want the branch, then fork (Ctrl+K).")
                                           .arg(name));
        return;
    }
    const std::vector<int> members = liveGroupOf(memberId);
    for (int id : members) {
        const ui::RunHistory* history = m_store.run(id);
        if (!history || history->status != normlab::RunStatus::Running ||
            history->step >= m_runs[id].config.train.steps) {
            showMessage(tr("Nothing to fork"),
                        tr("%1 has finished; a fork branches runs that are still training "
                           "(Restart them, or fork a seed's folder with normlab-cli train "
                           "--fork).")
                            .arg(name));
            return;
        }
    }
    syncActiveRunFromPanel();
    // Named for its parent and the step (every seed stands at it, paused), also in a saved experiment.
    const QString base = tr("%1 / fork@%2").arg(m_runs[memberId].group).arg(m_store.run(memberId)->step);
    QString group = base;
    for (int n = 2; std::any_of(m_runs.begin(), m_runs.end(),
                                [&](const ui::ExperimentRun& run) { return run.group == group; });
         ++n)
        group = tr("%1 (%2)").arg(base).arg(n);
    for (int parentId : members) requestFork(parentId, group);
    groupLiveRuns();  // the new group beside the others, which keep what they hold
}

}  // namespace normlab::gui
