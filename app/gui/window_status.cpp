// The window's status line and the controls' title: what the runs are doing (the worker's state, or
// a run's own ending, or a replay), the active run's step, each run's pace, the speed limit box, and
// which run the controls edit.
#include <QComboBox>
#include <QDockWidget>
#include <QLabel>
#include <QStatusBar>
#include <vector>

#include "app/gui/main_window.h"
#include "ui/controls/runs_panel.h"
#include "ui/panels/run_captions.h"

namespace normlab::gui {

QComboBox* MainWindow::makeSpeedBox() {
    // Steps a second for each run, slow enough for a class to follow; 0: as fast as the machine goes.
    static constexpr double kSpeeds[] = {0.0, 50.0, 20.0, 10.0, 5.0, 2.0};
    auto* box = new QComboBox;
    box->setObjectName(QStringLiteral("speedLimit"));
    box->setToolTip(tr("At most this many steps a second, for a class to follow the charts"));
    for (double speed : kSpeeds)
        box->addItem(speed > 0.0 ? tr("%1 steps/s").arg(speed) : tr("full speed"), speed);
    connect(box, &QComboBox::currentIndexChanged, this, [this, box] {
        const double speed = box->currentData().toDouble();
        m_replay->setSpeed(speed > 0.0 ? speed : RunReplay::kFullSpeed);
        QMetaObject::invokeMethod(
            m_worker, [worker = m_worker, speed] { worker->setSpeedLimit(speed); }, Qt::QueuedConnection);
    });
    return box;
}

void MainWindow::buildStatusBar() {
    m_stepLabel = new QLabel;
    m_speedLabel = new QLabel;
    m_deviceLabel = new QLabel(tr("device: -"));
    m_statusLabel = new QLabel;
    for (QLabel* label : {m_statusLabel, m_stepLabel, m_speedLabel, m_deviceLabel})
        statusBar()->addPermanentWidget(label);
    updateStatusBar();
}

void MainWindow::updateStatusBar() {
    const ui::RunHistory* run = m_store.run(m_activeRun);
    QString status = workerStateName(m_state);
    // Once the worker is done, the run's own ending (stopped, completed, diverged, failed), as in Runs.
    if (run && (m_state == WorkerState::Finished || run->status == normlab::RunStatus::Diverged))
        status = run->statusText();
    int64_t step = run ? run->step : 0;
    if (m_replay->active() && !runsActive()) {  // the replay is what moves
        status = m_replay->finished()  ? tr("replay finished")
                 : m_replay->playing() ? tr("replaying at %1 steps/s").arg(m_replay->speed())
                                       : tr("replay paused");
        step = m_replay->step();
    }
    m_statusLabel->setText(tr("status: %1").arg(status));
    m_stepLabel->setText(tr("step: %1").arg(step));
    // Each trained run's own pace in wall time (runs side by side share the engine thread).
    const double now = static_cast<double>(m_clock.nsecsElapsed()) * 1e-9;
    std::vector<double> rates;
    for (const auto& [id, each] : m_store.runs()) {
        if (!each.source.isEmpty() || !each.started || each.bands) continue;  // a group is its runs
        m_progress.sample(id, each.step, now);
        if (each.status == normlab::RunStatus::Running) rates.push_back(m_progress.stepsPerSecond(id));
    }
    m_speedLabel->setText(ui::speedText(rates));
    m_speedLabel->setToolTip(tr("Steps a second of each run being trained, in wall-clock time over the "
                                "last %1 s")
                                 .arg(ui::ProgressRate::kWindowSeconds));
}

void MainWindow::updateControlsTitle() {
    // Which run the controls edit, always in view (also after live changes and restarts).
    auto* dock = findChild<QDockWidget*>(QStringLiteral("controlsDock"));
    if (!dock) return;
    const bool named = m_activeRun >= 0 && m_activeRun < static_cast<int>(m_runs.size());
    const int entry = named ? liveGroupEntry(m_activeRun) : -1;
    const QString seeds = entry >= 0 ? tr(" (%1 seeds)").arg(liveGroupOf(m_activeRun).size()) : QString();
    dock->setWindowTitle(named ? tr("Controls: editing %1%2").arg(editedName(m_activeRun), seeds)
                               : tr("Controls"));
    if (m_runsPanel) m_runsPanel->setSelectedRun(entry >= 0 ? entry : named ? m_activeRun : -1);
}

}  // namespace normlab::gui
