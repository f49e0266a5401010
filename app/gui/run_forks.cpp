// The window's forks (docs/window.md#forks): "Fork here" on a training run asks the engine thread to
// branch it at its current step; when the fork exists it takes its parent's history and the controls
// edit it, so the change the user makes next applies to the fork only; the difference chart shows
// fork minus parent.
#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QStatusBar>

#include "app/gui/main_window.h"
#include "app/gui/training_worker.h"
#include "ui/controls/config_panel.h"
#include "ui/controls/runs_panel.h"
#include "ui/dashboard.h"
#include "ui/panels/difference_panel.h"

namespace normlab::gui {

void MainWindow::forkRun(int parentId) {
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
    const ui::ExperimentRun parent = m_runs[parentId];
    m_runs.push_back({tr("%1 / fork").arg(parent.name), parent.config, true, {}, {}});
    const int id = static_cast<int>(m_runs.size()) - 1;
    const QString stamp = QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss-zzz"));
    const RunSpec spec{
        id, m_runs.back().name, parent.config, runFolderFor(m_runs.back().name, stamp, id), {}};
    m_runs.back().folder = spec.folder;
    m_store.addRun(id, spec.name, parent.config, spec.folder);
    // Saved, the fork is its parent's start with every change of both up to now: Start replays it from
    // step 0 to the same state (same batches), then the fork's own changes.
    m_startConfigs.resize(m_runs.size() - 1, parent.config);
    m_startConfigs.push_back(m_startConfigs[parentId]);
    QDir().mkpath(QFileInfo(spec.folder).absolutePath());
    QMetaObject::invokeMethod(
        m_worker, [worker = m_worker, parentId, spec] { worker->forkRun(parentId, spec); },
        Qt::QueuedConnection);
}

void MainWindow::onForked(int runId, int parentId, qint64 step) {
    if (runId < 0 || runId >= static_cast<int>(m_runs.size()) || parentId < 0 ||
        parentId >= static_cast<int>(m_runs.size()))
        return;
    const QString name = tr("%1 / fork@%2").arg(m_runs[parentId].name).arg(step);
    m_runs[runId].name = name;
    m_store.rename(runId, name);
    m_store.copyHistory(parentId, runId);
    if (auto* difference =
            qobject_cast<ui::DifferencePanel*>(m_dashboard->panel(QStringLiteral("difference"))))
        difference->showPair(parentId, runId);
    m_activeRun = runId;
    m_configPanel->setConfig(m_runs[runId].config);
    m_runsPanel->setSelectedRun(runId);
    updateControlsTitle();
    statusBar()->showMessage(
        tr("Forked %1 at step %2: the controls now change the fork only; %1 goes on as it was")
            .arg(m_runs[parentId].name)
            .arg(step),
        10000);
}

}  // namespace normlab::gui
