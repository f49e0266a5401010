// Screenshots of the window (or of the newest stability map) and presentation mode: large fonts,
// thick lines, charts only.
#include "app/gui/main_window.h"

#include <QApplication>
#include <QBuffer>
#include <QDockWidget>
#include <QMenuBar>
#include <QStatusBar>
#include <QToolBar>

#include "ui/dashboard.h"
#include "ui/io/whole_file.h"

namespace normlab::gui {

QString MainWindow::saveScreenshot(const QString& path) {
    // With a sweep opened, the picture that matters is its stability map.
    m_dashboard->refreshNow();
    QCoreApplication::processEvents();
    QWidget* shown = lastSweepMap() ? static_cast<QWidget*>(lastSweepMap()) : this;
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
    m_presentation = on;
    m_presentationAction->setChecked(on);
    // The class sees the charts and the Runs list (status, steps, final loss); the controls and the
    // lesson text stay with the lecturer.
    for (QDockWidget* dock : findChildren<QDockWidget*>(QString(), Qt::FindDirectChildrenOnly)) {
        if (dock->objectName() == QLatin1String("runsDock")) continue;
        if (on) dock->setProperty("wasVisible", dock->isVisible());
        dock->setVisible(on ? false : dock->property("wasVisible").toBool());
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
}

}  // namespace normlab::gui
