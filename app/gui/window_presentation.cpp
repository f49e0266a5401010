// Screenshots of the window (or of the newest stability map), presentation mode (large fonts, thick
// lines, charts only) and its stage (one or two big charts, cycled with Page Down / Page Up).
#include "app/gui/main_window.h"

#include <QApplication>
#include <QBuffer>
#include <QDockWidget>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QStatusBar>
#include <QToolBar>

#include "ui/dashboard.h"
#include "ui/io/whole_file.h"

namespace normlab::gui {

QString MainWindow::saveScreenshot(const QString& path) {
    // With a sweep (or an edge search) opened, the picture that matters is its map (its edge chart).
    m_dashboard->refreshNow();
    QCoreApplication::processEvents();
    QWidget* shown = m_lastFolderWindow ? m_lastFolderWindow.data() : this;
    const QImage image = shown->grab().toImage();
    if (image.isNull()) return tr("the window could not be captured");
    QByteArray png;
    QBuffer buffer(&png);
    buffer.open(QIODevice::WriteOnly);
    if (!image.save(&buffer, "PNG")) return tr("the screenshot could not be encoded as PNG");
    return ui::writeWholeFile(path, png);  // whole or not at all: a full disk leaves the old file
}

void MainWindow::setPresentation(bool on, bool fullScreen) {
    if (on == m_presentation) return;
    if (!on) setStage(false);
    m_presentation = on;
    m_presentationAction->setChecked(on);
    // The class sees the charts and the Runs list (status, steps, final loss); the controls and the
    // lesson text stay with the lecturer. Leaving brings back the docks as they were, tabs included.
    if (on) {
        m_layoutBeforePresentation = saveState();
        for (QDockWidget* dock : findChildren<QDockWidget*>(QString(), Qt::FindDirectChildrenOnly))
            dock->setVisible(dock->objectName() == QLatin1String("runsDock"));
    }
    menuBar()->setVisible(!on);
    // Readable from the back of a room: dock titles, the charts' selectors, Runs, toolbar and status
    // bar (the charts' own text follows their ChartStyle).
    QFont font = QApplication::font();
    if (on) font.setPointSizeF(16);
    auto* runsDock = findChild<QDockWidget*>(QStringLiteral("runsDock"));
    for (QWidget* widget : {static_cast<QWidget*>(statusBar()), static_cast<QWidget*>(m_dashboard),
                            static_cast<QWidget*>(runsDock)})
        if (widget) widget->setFont(font);
    for (QToolBar* toolbar : findChildren<QToolBar*>()) toolbar->setFont(font);
    m_dashboard->setPresentation(on);
    if (on && fullScreen)
        showFullScreen();
    else if (!on && isFullScreen())
        showNormal();
    if (!on) restoreState(m_layoutBeforePresentation);
}

QString MainWindow::setStageCharts(const QStringList& ids) {
    // Checked against the dashboard's charts now; placed when the stage is (or already is) shown.
    if (const QString problem = m_dashboard->stageProblem(ids); !problem.isEmpty()) return problem;
    m_stageCharts = ids;
    return onStage() ? m_dashboard->setStage(ids) : QString();
}

void MainWindow::setStage(bool on, bool fullScreen) {
    if (on == onStage()) return;
    if (on) setPresentation(true, fullScreen);
    m_stageAction->setChecked(on);
    m_dashboard->setStage(on ? m_stageCharts : QStringList());
    // The stage is the charts alone: Runs comes back with the rest of presentation mode.
    if (auto* runsDock = findChild<QDockWidget*>(QStringLiteral("runsDock")); runsDock && m_presentation)
        runsDock->setVisible(!on);
    for (QAction* action : {m_stageNext, m_stagePrevious}) action->setEnabled(on);
    // The status bar keeps what a class follows (status, step): at presentation size a lesson's
    // instruction and all four labels do not fit side by side, and the instruction was cut off.
    for (QLabel* label : {m_speedLabel, m_deviceLabel}) label->setVisible(!on);
}

void MainWindow::addStageMenu(QMenu* view) {
    QMenu* stage = view->addMenu(tr("Stage"));
    stage->addAction(m_stageAction);
    stage->addAction(m_stageNext);
    stage->addAction(m_stagePrevious);
    stage->addSeparator();
    // Which charts the stage shows: a left one, and a right one or none.
    for (const bool right : {false, true}) {
        QMenu* place = stage->addMenu(right ? tr("Right chart") : tr("Left chart"));
        connect(place, &QMenu::aboutToShow, this, [this, place, right] {
            place->clear();
            const int at = right ? 1 : 0;
            if (right)
                place
                    ->addAction(tr("None (one chart)"), this,
                                [this] { setStageCharts({m_stageCharts.front()}); })
                    ->setCheckable(true);
            for (const ui::ChartPanel* panel : m_dashboard->panels()) {
                QAction* choice = place->addAction(panel->title(), this, [this, at, id = panel->id()] {
                    QStringList ids = m_stageCharts;
                    if (at < ids.size())
                        ids[at] = id;
                    else
                        ids.append(id);
                    if (ids.size() == 2 && ids[0] == ids[1]) ids.removeAt(1 - at);
                    setStageCharts(ids);
                });
                choice->setCheckable(true);
                choice->setChecked(at < m_stageCharts.size() && m_stageCharts[at] == panel->id());
            }
            if (right) place->actions().front()->setChecked(m_stageCharts.size() == 1);
        });
    }
}

}  // namespace normlab::gui
