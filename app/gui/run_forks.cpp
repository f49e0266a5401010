// The window's forks (docs/window.md#forks): "Fork here" on a training run asks the engine thread to
// branch it at its current step; on an opened or replayed run, from one of its folder's checkpoints.
// When the fork exists it takes its parent's history and the controls edit it, so the change the user
// makes next applies to the fork only; the difference chart shows fork minus parent.
#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QInputDialog>
#include <QStatusBar>
#include <iterator>
#include <set>

#include "app/gui/main_window.h"
#include "app/gui/run_folder_opener.h"
#include "app/gui/training_worker.h"
#include "engine/config/config_diff.h"
#include "engine/core/errors.h"
#include "engine/io/run_checkpoints.h"
#include "engine/io/run_folder_reader.h"
#include "ui/controls/config_panel.h"
#include "ui/controls/runs_panel.h"
#include "ui/dashboard.h"
#include "ui/panels/difference_panel.h"

namespace normlab::gui {

namespace {
// The fork's history up to its first step, from its own folder (the parent's records up to `step`,
// copied there by the engine thread), into the store: an opened run's history goes further than that.
void loadHistoryUpTo(ui::TelemetryStore& store, int runId, const QString& folder, int64_t step) {
    ui::RunUpdate update;
    update.runId = runId;
    try {
        normlab::RunFolderReader reader(folder.toStdString());
        for (normlab::RunFolderReader::Update part = reader.poll();; part = reader.poll()) {
            for (normlab::StepRecord& record : part.records)
                if (record.step <= step) update.records.push_back(std::move(record));
            for (normlab::Event& event : part.events)
                if (event.step <= step) update.events.push_back(std::move(event));
            if (!part.more) break;
        }
    } catch (const normlab::InputError&) {
        return;  // nothing to show before the fork's own steps
    }
    update.step = step;
    update.status = normlab::RunStatus::Running;
    ui::TelemetryBatch batch;
    batch.runs.push_back(std::move(update));
    store.absorb(batch);
}
}  // namespace

// By value: `config` and `startConfig` often live in m_runs / m_startConfigs, which this grows.
RunSpec MainWindow::addForkEntry(const QString& name, normlab::Config config, normlab::Config startConfig,
                                 int64_t step) {
    m_runs.push_back({name, config, true, {}, {}});
    m_runs.back().fork = true;
    const int id = static_cast<int>(m_runs.size()) - 1;
    const QString stamp = QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss-zzz"));
    // The folder is named for the step when it is known now (the entry is renamed once it is forked).
    const QString folderName = step >= 0 ? QStringLiteral("%1@%2").arg(name).arg(step) : name;
    const RunSpec spec{id, name, config, runFolderFor(folderName, stamp, id), {}};
    m_runs.back().folder = spec.folder;
    m_store.addRun(id, name, config, spec.folder);
    m_startConfigs.resize(m_runs.size() - 1, config);
    m_startConfigs.push_back(startConfig);
    QDir().mkpath(QFileInfo(spec.folder).absolutePath());
    return spec;
}

void MainWindow::forkFromFolder(int storeId) {
    const ui::RunHistory* history = m_store.run(storeId);
    if (!history) return;
    if (history->bands) {
        showMessage(tr("Fork one seed"), tr("%1 is a seed group: show its seeds' lines (its context menu in "
                                            "Runs), select one seed and fork that.")
                                             .arg(history->name));
        return;
    }
    const std::map<int64_t, std::string> kept = normlab::checkpoints_in_folder(history->folder.toStdString());
    if (kept.empty()) {
        showMessage(tr("Nothing to fork from"),
                    tr("%1 keeps no checkpoint, so there is no state to train on from. Runs keep them "
                       "with train.checkpoint_every (and train.checkpoint_keep to keep more than the "
                       "latest).")
                        .arg(history->name));
        return;
    }
    // The state nearest before the step shown (a replay's position; an opened run's last step).
    QStringList steps;
    int chosen = 0;
    for (const auto& [step, file] : kept) {
        if (step <= history->step) chosen = static_cast<int>(steps.size());
        steps << QString::number(step);
    }
    if (!m_scripted) {
        bool ok = false;
        const QString picked = QInputDialog::getItem(
            this, tr("Fork into live training"),
            tr("%1: the step to start from (the steps its folder keeps a checkpoint of)").arg(history->name),
            steps, chosen, false, &ok);
        if (!ok) return;
        chosen = static_cast<int>(steps.indexOf(picked));
    }
    if (const QString problem = forkFromFolderAt(storeId, std::next(kept.begin(), chosen)->first);
        !problem.isEmpty())
        showMessage(tr("Cannot fork"), problem);
}

QString MainWindow::forkFromFolderAt(int storeId, int64_t step) {
    const ui::RunHistory* history = m_store.run(storeId);
    if (!history || storeId < RunFolderOpener::kFirstOpenedId)
        return tr("no opened or replayed run %1 to fork from its folder").arg(storeId);
    normlab::ResumedFrom origin{{}, step, history->folder.toStdString()};
    try {
        origin.checkpoint = normlab::checkpoint_at_step(origin.fork_of, step);
    } catch (const normlab::InputError& error) {
        return QString::fromStdString(error.what());
    }
    if (runsActive()) syncActiveRunFromPanel();
    const RunSpec spec =
        addForkEntry(tr("%1 / fork@%2").arg(history->name).arg(step), history->config, history->config);
    QMetaObject::invokeMethod(
        m_worker,
        [worker = m_worker, storeId, spec, origin] { worker->forkFromCheckpoint(storeId, spec, origin); },
        Qt::QueuedConnection);
    return {};
}

void MainWindow::setForkPoints(const normlab::SnapshotSettings& settings) {
    QMetaObject::invokeMethod(
        m_worker, [worker = m_worker, settings] { worker->setForkPoints(settings); }, Qt::QueuedConnection);
}

ui::ForkTarget MainWindow::forkTarget(int runId, int64_t step) const {
    const ui::RunHistory* history = m_store.run(runId);
    if (!history)
        return {tr("the selected run"), {}, false, tr("select the run to fork in the Runs panel first")};
    ui::ForkTarget target{history->name, {}, false, {}};
    if (history->bands) {
        target.problem = tr("it is a seed group: fork one of its seeds (Show each seed's line)");
        return target;
    }
    if (const int entry = liveGroupEntry(runId); entry >= 0) {
        target.problem = tr("it is one seed of %1: its seeds fork together at the step they are at, so "
                            "pause there and fork it (Ctrl+K)")
                             .arg(m_store.run(entry)->name);
        return target;
    }
    const bool opened = runId >= RunFolderOpener::kFirstOpenedId;
    if (!opened && (runId < 0 || runId >= static_cast<int>(m_runs.size()) || !history->started)) {
        target.problem = tr("it has not trained yet: start it first");
        return target;
    }
    // Now, while it trains: its state as it is (no fork point needed).
    if (!opened && runsActive() && history->status == normlab::RunStatus::Running && step >= history->step) {
        target.step = history->step;
        target.now = true;
        return target;
    }
    // The newest state kept at or before the step: in memory (a run trained here) or in its folder.
    std::set<int64_t> kept;
    for (const auto& [point, file] : normlab::checkpoints_in_folder(history->folder.toStdString()))
        kept.insert(point);
    if (!opened) kept.insert(history->forkPoints.begin(), history->forkPoints.end());
    const auto after = kept.upper_bound(step);
    if (after != kept.begin()) {
        target.step = *std::prev(after);
        return target;
    }
    target.problem = kept.empty()
                         ? tr("it keeps no fork point (Run > Fork points; a run folder keeps "
                              "checkpoints with train.checkpoint_every)")
                         : tr("it keeps no fork point at or before step %1 (its first is at step %2)")
                               .arg(step)
                               .arg(*kept.begin());
    return target;
}

ui::ForkTarget MainWindow::forkTargetAt(int64_t step) const {
    return forkTarget(selectedFromFolder() ? m_selectedRun : m_activeRun, step);
}

QString MainWindow::forkRunAt(int runId, int64_t step) {
    const ui::ForkTarget target = forkTarget(runId, step);
    if (!target.step)
        return tr("%1 cannot be forked at step %2: %3").arg(target.run).arg(step).arg(target.problem);
    if (runId >= RunFolderOpener::kFirstOpenedId) return forkFromFolderAt(runId, *target.step);
    if (target.now) {
        forkRun(runId);
        return {};
    }
    if (runsActive()) syncActiveRunFromPanel();
    const RunSpec spec = addForkEntry(
        tr("%1 / fork").arg(m_runs[runId].name), m_runs[runId].config,
        m_startConfigs.size() > size_t(runId) ? m_startConfigs[runId] : m_runs[runId].config, *target.step);
    QMetaObject::invokeMethod(
        m_worker,
        [worker = m_worker, runId, folder = m_store.run(runId)->folder, spec, at = *target.step] {
            worker->forkRunAt(runId, folder, spec, at);
        },
        Qt::QueuedConnection);
    return {};
}

void MainWindow::forkRun(int parentId) {
    if (const int member = firstMemberOfLiveGroup(parentId); member >= 0) parentId = member;
    if (liveGroupEntry(parentId) >= 0) {
        forkLiveGroup(parentId);
        return;
    }
    if (parentId >= RunFolderOpener::kFirstOpenedId) {
        forkFromFolder(parentId);
        return;
    }
    if (parentId < 0 || parentId >= static_cast<int>(m_runs.size())) {
        showMessage(tr("Nothing to fork"), tr("Select the run to fork in the Runs panel first."));
        return;
    }
    if (!runsActive()) {
        showMessage(
            tr("Nothing to fork yet"),
            tr("A fork branches a run that is training, at its current step. Start the runs (or resume "
               "them), pause where you want the branch, then fork."));
        return;
    }
    const ui::RunHistory* history = m_store.run(parentId);
    if (!history || history->status != normlab::RunStatus::Running ||
        history->step >= m_runs[parentId].config.train.steps) {
        showMessage(tr("Nothing to fork"),
                    tr("%1 has finished; a fork branches a run that is still training (Restart "
                       "it, or fork it from its folder with normlab-cli train --fork).")
                        .arg(m_runs[parentId].name));
        return;
    }
    syncActiveRunFromPanel();
    requestFork(parentId, QString());
}

void MainWindow::requestFork(int parentId, const QString& group) {
    // Saved, the fork is its parent's start with every change of both up to now: Start replays it from
    // step 0 to the same state (same batches), then the fork's own changes.
    // Paused, the step it forks at is known now: its folder is named for it too ("..._fork_174").
    const ui::RunHistory* parent = m_store.run(parentId);
    const RunSpec spec = addForkEntry(
        tr("%1 / fork").arg(m_runs[parentId].name), m_runs[parentId].config,
        m_startConfigs.size() > size_t(parentId) ? m_startConfigs[parentId] : m_runs[parentId].config,
        m_state == WorkerState::Paused && parent ? parent->step : -1);
    m_runs[spec.id].group = group;
    QMetaObject::invokeMethod(
        m_worker, [worker = m_worker, parentId, spec] { worker->forkRun(parentId, spec); },
        Qt::QueuedConnection);
}

void MainWindow::onForked(int runId, int parentId, qint64 step) {
    const ui::RunHistory* parent = m_store.run(parentId);
    if (runId < 0 || runId >= static_cast<int>(m_runs.size()) || !parent) return;
    const bool fromFolder = parentId >= RunFolderOpener::kFirstOpenedId;
    const bool earlier = !fromFolder && step < parent->step;  // from a fork point, not its state now
    // Named for its parent, not for the parent's live changes: "<run> (changed) / fork@N" read as a
    // fork that had changed (when the change, made while paused, had not even reached the parent).
    QString parentName = parent->name;
    if (const QString changed = changedSuffix(); parentName.endsWith(changed))
        parentName.chop(changed.size());
    const QString name = tr("%1 / fork@%2").arg(parentName).arg(step);
    m_runs[runId].name = name;
    m_store.rename(runId, name);
    // A fork made while the runs are paused waits with them (and says so).
    if (m_state == WorkerState::Paused) m_store.setRunPaused(runId, true);
    if (fromFolder || earlier)
        loadHistoryUpTo(m_store, runId, m_runs[runId].folder, step);
    else
        m_store.copyHistory(parentId, runId);
    // It trains as its parent was then: the config its folder records (the parent's, with the live
    // changes that reached it up to that step), not edits the controls held that had not (a change made
    // while paused reaches the parent at its next step; the Runs list once showed them as the fork's).
    QString notReached;
    try {
        const normlab::Config then = normlab::RunFolderReader(m_runs[runId].folder.toStdString()).config();
        // (A fork at an earlier step or from a folder differs from the parent's config now by the
        // parent's later live changes: those are not edits.)
        const std::vector<std::string> differ =
            fromFolder || earlier ? std::vector<std::string>{}
                                  : normlab::differing_keys({normlab::flatten_config(then),
                                                             normlab::flatten_config(m_runs[runId].config)});
        for (const std::string& key : differ)
            notReached +=
                (notReached.isEmpty() ? QString() : QStringLiteral(", ")) + QString::fromStdString(key);
        m_runs[runId].config = then;
        m_store.setConfig(runId, then);
    } catch (const normlab::InputError& error) {
        statusBar()->showMessage(tr("The fork's config could not be read back (%1): the controls show "
                                    "its parent's now")
                                     .arg(QString::fromStdString(error.what())),
                                 15000);
    }
    // A group's seeds forked together (the new group is named for its parent's and the step).
    const int parentEntry = liveGroupEntry(parentId), forkEntry = liveGroupEntry(runId);
    if (auto* difference =
            qobject_cast<ui::DifferencePanel*>(m_dashboard->panel(QStringLiteral("difference"))))
        forkEntry >= 0 && parentEntry >= 0 ? difference->showPair(parentEntry, forkEntry)
                                           : difference->showPair(parentId, runId);
    m_activeRun = runId;
    m_configPanel->setConfig(m_runs[runId].config);
    m_runsPanel->setSelectedRun(runId);
    updateControlsTitle();
    // From a folder with nothing else training the fork waits, paused (the state arrives after this).
    const QString message =
        !fromFolder && !earlier
            ? tr("Forked %1 at step %2: the controls now change the fork only; %1 goes on as it was")
        : m_state == WorkerState::Running
            ? tr("Forked %1 at step %2 into live training, beside the runs training; the controls change the "
                 "fork")
            : tr("Forked %1 at step %2 into live training, paused: change a setting, then press Space (or "
                 "Resume) to train it");
    // A group's fork names the group (each seed's fork says the same; the last one's message stays).
    const QString forked =
        forkEntry >= 0 && parentEntry >= 0
            ? tr("%1 (its %2 seeds)").arg(m_store.run(parentEntry)->name).arg(liveGroupOf(parentId).size())
            : parentName;
    // Edits made before the fork that had not reached the parent are not the fork's: said, not shown.
    // Short enough for the status bar beside its permanent labels (a longer one was cut off).
    if (!notReached.isEmpty())
        statusBar()->showMessage(tr("Forked %1 at step %2 without your edit of %3 (it reaches %1 at its next "
                                    "step); make it again now to change the fork")
                                     .arg(parentName)
                                     .arg(step)
                                     .arg(notReached),
                                 30000);
    else
        statusBar()->showMessage(message.arg(forked).arg(step), 10000);
}

}  // namespace normlab::gui
