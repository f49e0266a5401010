// Where the window's runs go (runsRoot), and what it opens from disk: run folders (each a run on
// every chart), stability maps of sweep folders, edge searches, coordinate checks, and the saved curves
// of an experiment's runs.
#include "app/gui/main_window.h"

#include <QDir>
#include <QSettings>
#include <QStatusBar>

#include "engine/core/errors.h"
#include "engine/io/run_group.h"
#include "ui/sweep/coord_check_window.h"
#include "ui/sweep/edge_window.h"

namespace normlab::gui {

QString MainWindow::runsRoot() {
    const QString chosen = qEnvironmentVariable("NORMLAB_RUNS_DIR");
    if (!chosen.isEmpty()) return chosen;
    return QSettings()
        .value(QStringLiteral("runs/root"), QDir::home().filePath(QStringLiteral("normlab-runs")))
        .toString();
}

QStringList MainWindow::runFoldersIn(const QString& folder) {
    // A run folder or a seed group itself, or a folder whose sub-folders are (a runs directory, a sweep).
    const auto isRunOrGroup = [](const QDir& dir) {
        return dir.exists(QStringLiteral("config.json")) || dir.exists(QStringLiteral("metrics.jsonl")) ||
               dir.exists(QLatin1String(normlab::kGroupFileName));
    };
    const QDir dir(folder);
    if (isRunOrGroup(dir)) return {folder};
    QStringList runs;
    for (const QString& name : dir.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name))
        if (const QDir child(dir.filePath(name)); isRunOrGroup(child)) runs << child.absolutePath();
    return runs.isEmpty() ? QStringList{folder} : runs;  // none: opening it says why
}

void MainWindow::hidePlaceholderRuns() {
    for (const auto& [id, run] : m_store.runs())
        if (run.source.isEmpty() && !run.started) m_store.setVisible(id, false);
}

void MainWindow::setRequestedSize(const QSize& size) {
    m_requestedSize = size;
    resize(size);
}

QString MainWindow::openSweepMap(const QString& folder) {
    try {
        auto* map = new ui::SweepMapWindow(QDir(folder).absolutePath(), this);
        map->setAttribute(Qt::WA_DeleteOnClose);
        connect(map, &ui::SweepMapWindow::openRunsRequested, this, [this](const QStringList& runs) {
            openRunFolders(runs);
            raise();
            activateWindow();
        });
        if (m_requestedSize.isValid()) map->resize(m_requestedSize);  // a script's --size is the map's too
        map->show();
        m_sweepMaps.emplace_back(map);
        m_lastFolderWindow = map;
        return {};
    } catch (const normlab::InputError& error) {
        return QString::fromStdString(error.what());
    }
}

// Opens a chart window made from `folder` (its constructor reads it and throws what it refuses), at a
// script's --size; its error's text when it cannot.
template <class ChartWindow>
QString MainWindow::openChartWindow(const QString& folder) {
    try {
        auto* chart = new ChartWindow(QDir(folder).absolutePath(), this);
        chart->setAttribute(Qt::WA_DeleteOnClose);
        if (m_requestedSize.isValid()) chart->resize(m_requestedSize);
        chart->show();
        m_lastFolderWindow = chart;
        return {};
    } catch (const std::exception& error) {  // InputError, or a folder its reader refuses
        return QString::fromStdString(error.what());
    }
}

QString MainWindow::openEdgeWindow(const QString& folder) {
    return openChartWindow<ui::EdgeWindow>(folder);
}

QString MainWindow::openCoordCheckWindow(const QString& folder) {
    return openChartWindow<ui::CoordCheckWindow>(folder);
}

ui::SweepMapWindow* MainWindow::lastSweepMap() const {
    for (auto it = m_sweepMaps.rbegin(); it != m_sweepMaps.rend(); ++it)
        if (*it) return *it;
    return nullptr;
}

QStringList MainWindow::openRunFolders(const QStringList& requested) {
    QStringList folders, sweepProblems;
    for (const QString& folder : requested) {
        // A sweep folder opens as its stability map (a cell's click opens its runs here), an edge
        // search's as its edge chart, a coordinate check's (probe --coord-check) as its chart.
        if (QDir(folder).exists(QStringLiteral("sweep.json"))) {
            if (const QString problem = openSweepMap(folder); !problem.isEmpty()) sweepProblems << problem;
            continue;
        }
        if (QDir(folder).exists(QStringLiteral("edge.json"))) {
            if (const QString problem = openEdgeWindow(folder); !problem.isEmpty()) sweepProblems << problem;
            continue;
        }
        if (QDir(folder).exists(QLatin1String(normlab::kCoordCheckFileName))) {
            if (const QString problem = openCoordCheckWindow(folder); !problem.isEmpty())
                sweepProblems << problem;
            continue;
        }
        folders << runFoldersIn(folder);
    }
    if (folders.isEmpty()) {
        if (!sweepProblems.isEmpty()) showMessage(tr("Cannot open"), sweepProblems.join(QLatin1Char('\n')));
        return sweepProblems;
    }
    hidePlaceholderRuns();
    // A seed group (group.json) opens as one entry: its seeds' mean with a band.
    QStringList runFolders, problems = sweepProblems;
    for (const QString& folder : folders) {
        if (QDir(folder).exists(QLatin1String(normlab::kGroupFileName)))
            problems << m_opener->openGroup(folder);
        else
            runFolders << folder;
    }
    problems << m_opener->open(runFolders);
    if (!problems.isEmpty()) showMessage(tr("Cannot open"), problems.join(QLatin1Char('\n')));
    statusBar()->showMessage(tr("Opening %n run folder(s)", nullptr, int(folders.size() - problems.size())),
                             4000);
    return problems;
}

QStringList MainWindow::loadSavedCurves(const std::vector<ui::ExperimentRun>& runs) {
    QStringList unreadable;
    for (size_t i = 0; i < runs.size(); ++i) {
        const ui::ExperimentRun& run = runs[i];
        if (run.folder.isEmpty()) continue;  // never started: nothing to show
        const QString problem = QFileInfo(run.folder).isDir()
                                    ? m_opener->openInto(run.folder, static_cast<int>(i))
                                    : tr("its folder %1 does not exist").arg(run.folder);
        if (!problem.isEmpty()) unreadable << tr("%1: %2").arg(run.name, problem);
    }
    return unreadable;
}

}  // namespace normlab::gui
