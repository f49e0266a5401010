// ScriptedRun: waits on the window's runs and opened folders, then reports, saves and quits.
#include "app/gui/scripted_run.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <QTimer>
#include <algorithm>
#include <cstdio>
#include <memory>

#include "app/gui/main_window.h"
#include "ui/dashboard.h"
#include "ui/export/panel_export.h"
#include "ui/panels/chart_panel.h"
#include "ui/panels/run_captions.h"

namespace normlab::gui {

namespace {
void printError(const QString& message) {
    std::fprintf(stderr, "normlab: %s\n", message.toUtf8().constData());
}

bool isCsv(const QString& path) {
    return QFileInfo(path).suffix().compare(QLatin1String("csv"), Qt::CaseInsensitive) == 0;
}
}  // namespace

ScriptedRun::ScriptedRun(MainWindow& window) : QObject(&window), m_window(window) {
    connect(&window, &MainWindow::telemetryAbsorbed, this, &ScriptedRun::checkSteps);
    connect(&window, &MainWindow::workerStateChanged, this, &ScriptedRun::checkSteps);
    connect(&window.replay(), &RunReplay::stepShown, this, &ScriptedRun::checkSteps);
    // A run that cannot go on ends a script that waits for steps with 1 (the message is printed).
    connect(&window, &MainWindow::workerFailed, this, [this] {
        if (m_quitAfterSteps) finish(1);
    });
}

void ScriptedRun::finish(int code) {
    if (m_finished) return;
    m_finished = true;
    std::fflush(stdout);
    m_window.closeWithoutAsking();
    QCoreApplication::exit(code);
}

void ScriptedRun::quitAfterSteps(int64_t steps, const QString& screenshotPath,
                                 const QString& experimentPath) {
    m_quitAfterSteps = steps;
    m_screenshotPath = screenshotPath;
    m_experimentPath = experimentPath;
}

void ScriptedRun::checkSteps() {
    if (!m_quitAfterSteps || m_finished) return;
    if (m_window.replay().active()) {  // a replay: until it shows step N, or its end
        const RunReplay& replay = m_window.replay();
        if (replay.step() < *m_quitAfterSteps && !replay.finished()) return;
    } else {
        const ui::RunHistory* first = m_window.store().run(0);
        if (!(first && first->step >= *m_quitAfterSteps) && m_window.workerState() != WorkerState::Finished)
            return;
    }
    const int64_t target = *m_quitAfterSteps;
    m_quitAfterSteps.reset();
    QTimer::singleShot(0, this, [this, target] {
        m_window.refreshCharts();
        reportSteps(target);
        finish(saveRequested());
    });
}

void ScriptedRun::reportSteps(int64_t target) const {
    for (const auto& [id, run] : m_window.store().runs())
        std::printf("normlab: %s: step %lld (target %lld), %.1f steps/s, %s\n", run.name.toUtf8().constData(),
                    static_cast<long long>(run.step), static_cast<long long>(target), run.stepsPerSecond,
                    run.statusText().toUtf8().constData());
    const ui::Dashboard& dashboard = m_window.dashboard();
    const int refreshes = std::max(1, dashboard.refreshCount());
    std::printf("normlab: dashboard refreshes: %d, %.1f ms each on average\n", dashboard.refreshCount(),
                1e3 * dashboard.refreshSeconds() / refreshes);
    if (qEnvironmentVariableIsSet("NORMLAB_PROFILE_CHARTS"))
        for (const auto& [panel, seconds] : dashboard.panelSeconds())
            std::printf("normlab:   %s %.2f ms\n", panel.toUtf8().constData(), 1e3 * seconds / refreshes);
    std::fflush(stdout);
}

int ScriptedRun::saveRequested() const {
    int code = 0;
    if (!m_screenshotPath.isEmpty()) {
        const QString error = m_window.saveScreenshot(m_screenshotPath);
        if (error.isEmpty())
            std::printf("normlab: screenshot saved to %s\n", m_screenshotPath.toUtf8().constData());
        else
            printError(error), code = 1;
    }
    if (!m_experimentPath.isEmpty()) {
        const QString error = m_window.saveExperimentTo(m_experimentPath);
        if (error.isEmpty())
            std::printf("normlab: experiment saved to %s\n", m_experimentPath.toUtf8().constData());
        else
            printError(error), code = 2;
    }
    return code;
}

bool ScriptedRun::openedReady(std::optional<int64_t> untilStep) const {
    if (m_window.opener().loading() > 0) return false;
    if (!untilStep) return true;
    const ui::RunHistory* first = m_window.store().run(RunFolderOpener::kFirstOpenedId);
    if (first && first->step < *untilStep && first->status == normlab::RunStatus::Running && !first->stale)
        return false;
    if (first)
        std::printf("normlab: %s: step %lld (target %lld), %s\n", first->name.toUtf8().constData(),
                    static_cast<long long>(first->step), static_cast<long long>(*untilStep),
                    first->statusText().toUtf8().constData());
    return true;
}

void ScriptedRun::whenOpened(std::function<int()> work, std::optional<int64_t> untilStep, bool quit) {
    auto started = std::make_shared<bool>(false);
    const auto check = [this, work, untilStep, quit, started] {
        if (*started || m_finished || !openedReady(untilStep)) return;
        *started = true;
        QTimer::singleShot(0, this, [this, work, quit] {
            m_window.refreshCharts();
            const int code = work();
            if (quit) finish(code);
        });
    };
    connect(&m_window.store(), &ui::TelemetryStore::dataChanged, this, check);
    connect(&m_window.opener(), &RunFolderOpener::allLoaded, this, check);
    QTimer::singleShot(0, this, check);
}

void ScriptedRun::zoomStepsWhenOpened(const normlab::StepRange& steps) {
    whenOpened(
        [this, steps] {
            m_window.dashboard().zoomSteps(steps);
            return 0;
        },
        std::nullopt, false);
}

void ScriptedRun::screenshotWhenOpened(const QString& path, std::optional<int64_t> untilStep,
                                       const QStringList& problems) {
    if (!problems.isEmpty()) {
        printError(tr("cannot show every run's curves:\n  %1").arg(problems.join(QStringLiteral("\n  "))));
        QTimer::singleShot(0, this, [this] { finish(2); });
        return;
    }
    whenOpened(
        [this, path] {
            if (path.isEmpty()) return 0;
            const QString error = m_window.saveScreenshot(path);
            if (error.isEmpty())
                std::printf("normlab: screenshot saved to %s\n", path.toUtf8().constData());
            else
                printError(error);
            return error.isEmpty() ? 0 : 1;
        },
        untilStep, true);
}

QString ScriptedRun::applyLabels(const QStringList& labels) {
    ui::TelemetryStore& store = m_window.store();
    for (const QString& label : labels) {
        const QString run = label.section(QLatin1Char('='), 0, 0), text = label.section(QLatin1Char('='), 1);
        QStringList names;
        bool found = false;
        for (const auto& [id, each] : store.runs()) {
            names << each.name;
            if (each.name != run) continue;
            store.rename(id, text);
            found = true;
            break;
        }
        if (!found)
            return tr("--label %1: no run is named '%2'; runs: %3")
                .arg(label, run, names.join(QStringLiteral(", ")));
    }
    return {};
}

void ScriptedRun::exportWhenOpened(const QString& path, const QString& chart,
                                   const ui::ImageExportOptions& options, const QStringList& labels) {
    whenOpened(
        [this, path, chart, options, labels] {
            if (const QString problem = applyLabels(labels); !problem.isEmpty()) {
                printError(problem);
                return 2;
            }
            m_window.refreshCharts();
            ui::Dashboard& dashboard = m_window.dashboard();
            QString error;
            if (chart.isEmpty()) {
                error = isCsv(path) ? tr("the dashboard exports as png, svg or pdf; export a chart's data "
                                         "with --chart ID")
                                    : ui::exportFigure(dashboard.figure(ui::captionForRuns(m_window.store())),
                                                       path, options);
            } else if (ui::ChartPanel* panel = dashboard.panel(chart)) {
                error = ui::exportPanel(*panel, path, options);
            } else if (chart == QLatin1String(MainWindow::kStabilityMapChart) && m_window.lastSweepMap()) {
                ui::SweepMapWindow& map = *m_window.lastSweepMap();
                error = isCsv(path) ? ui::exportText(map.csv(), path)
                                    : ui::exportFigure(map.figure(), path, options);
            } else {
                QStringList ids;
                for (const ui::ChartPanel* each : dashboard.panels()) ids << each->id();
                ids << QLatin1String(MainWindow::kStabilityMapChart) +
                           QStringLiteral(" (with a sweep folder)");
                printError(tr("unknown chart '%1'; charts: %2").arg(chart, ids.join(QStringLiteral(", "))));
                return 2;
            }
            if (!error.isEmpty()) {
                printError(error);
                return 2;
            }
            std::printf("normlab: exported %s\n", path.toUtf8().constData());
            return 0;
        },
        std::nullopt, true);
}

}  // namespace normlab::gui
