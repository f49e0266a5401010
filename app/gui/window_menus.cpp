// The window's menus (File, Run, View, Help) and the recent-experiments list; Help > Keyboard
// shortcuts is read from the menu actions themselves.
#include "app/gui/fork_points_dialog.h"
#include "app/gui/main_window.h"

#include "app/gui/new_sweep_dialog.h"
#include "engine/config/config_source.h"
#include "engine/core/version.h"

#include <QAction>
#include <QDockWidget>
#include <QFileDialog>
#include <QMenuBar>
#include <QMessageBox>
#include <functional>

#include "engine/config/presets.h"
#include "ui/controls/config_panel.h"
#include "ui/dashboard.h"
#include "ui/export/chart_export.h"
#include "ui/export/panel_export.h"
#include "ui/panels/run_captions.h"

namespace normlab::gui {

void MainWindow::buildMenus() {
    buildFileMenu();
    buildRunAndViewMenus();
    buildHelpMenu();
}

void MainWindow::buildFileMenu() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("Open &run folder(s)..."), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O), this,
                    [this] {
                        const QString folder = QFileDialog::getExistingDirectory(
                            this, tr("Open a run folder, or a folder of run folders"), runsRoot());
                        if (!folder.isEmpty()) openRunFolders({folder});
                    });
    addReplayAction(file);
    file->addAction(tr("Close opened runs"), this, [this] {
        m_opener->closeAll();
        m_replay->clear();
    });
    file->addAction(tr("New s&weep over the current settings..."), this, [this] {
        NewSweepDialog dialog(m_configPanel->config(), runsRoot(), this);
        if (dialog.exec() == QDialog::Accepted) openSweepMap(dialog.folder());
    });
    file->addSeparator();
    file->addAction(tr("&New experiment"), QKeySequence::New, this, [this] {
        if (!m_document->confirmDiscard()) return;
        resetRuns();
        loadConfig(normlab::preset_config(normlab::kDefaultPreset),
                   QString::fromLatin1(normlab::kDefaultPreset));
        m_document->setDirty(false);
    });
    addHuggingFaceAction(file);
    file->addAction(tr("&Open experiment..."), QKeySequence::Open, this, [this] {
        if (!m_document->confirmDiscard()) return;
        const QString path = QFileDialog::getOpenFileName(this, tr("Open experiment"), QString(),
                                                          tr("NormLab experiments (*.json)"));
        if (path.isEmpty()) return;
        const QString error = openExperiment(path);
        if (!error.isEmpty()) showMessage(tr("Cannot open the experiment"), error);
    });
    m_recentMenu = file->addMenu(tr("Open &recent"));
    rebuildRecentMenu();
    file->addAction(tr("&Save experiment"), QKeySequence::Save, this,
                    [this] { m_document->saveInteractively(false); });
    file->addAction(tr("Save experiment &as..."), QKeySequence::SaveAs, this,
                    [this] { m_document->saveInteractively(true); });
    file->addSeparator();
    addExportActions(file);
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
}

void MainWindow::addExportActions(QMenu* file) {
    QMenu* exportMenu = file->addMenu(tr("&Export dashboard"));
    for (const QString& suffix : {QStringLiteral("png"), QStringLiteral("svg"), QStringLiteral("pdf")}) {
        exportMenu->addAction(suffix.toUpper() + QStringLiteral("..."), this, [this, suffix] {
            m_dashboard->refreshNow();
            ui::ImageExportOptions options;
            options.size = m_dashboard->size() * 2;
            options.dpi = 192;  // the dashboard's on-screen layout, at twice the pixels
            if (m_presentation) options.fontPoints = ui::ImageExportOptions::kPresentationPoints;
            ui::exportFigureInteractively(m_dashboard->figure(ui::captionForRuns(m_store)),
                                          QStringLiteral("dashboard"), suffix, options, this);
        });
    }
    file->addAction(tr("Save &screenshot..."), this, [this] {
        const QString path = QFileDialog::getSaveFileName(this, tr("Save screenshot"),
                                                          QStringLiteral("normlab.png"), tr("PNG (*.png)"));
        if (path.isEmpty()) return;
        const QString error = saveScreenshot(path);
        if (!error.isEmpty()) showMessage(tr("Cannot save the screenshot"), error);
    });
}

void MainWindow::buildRunAndViewMenus() {
    QMenu* run = menuBar()->addMenu(tr("&Run"));
    for (QAction* action : {m_start, m_pause, m_step, m_stop, m_reset}) run->addAction(action);
    run->addSeparator();
    run->addAction(m_fork);
    run->addAction(tr("Fork points..."), this, [this] {
        ForkPointsDialog dialog(forkPointSettings(), this);
        if (dialog.exec() != QDialog::Accepted) return;
        saveForkPointSettings(dialog.settings());
        setForkPoints(dialog.settings());
    });
    QMenu* view = menuBar()->addMenu(tr("&View"));
    view->addAction(m_presentationAction);
    addStageMenu(view);
    view->addSeparator();
    for (QDockWidget* dock : findChildren<QDockWidget*>(QString(), Qt::FindDirectChildrenOnly))
        view->addAction(dock->toggleViewAction());
    QMenu* charts = view->addMenu(tr("Charts"));
    charts->addActions(m_dashboard->panelToggleActions());
    view->addAction(tr("Reset chart layout"), this, [this] { m_dashboard->resetLayout(); });
}

QString MainWindow::shortcutTable() const {
    // Every menu action with a shortcut, in menu order: the actions are the one list of shortcuts.
    QString rows;
    std::function<void(const QMenu*)> walk = [&](const QMenu* menu) {
        for (const QAction* action : menu->actions()) {
            if (action->menu()) walk(action->menu());
            if (action->shortcut().isEmpty()) continue;
            const QString what =
                action->statusTip().isEmpty() ? action->text().remove(QLatin1Char('&')) : action->statusTip();
            rows += QStringLiteral("<tr><td><b>%1</b></td><td>%2</td></tr>")
                        .arg(action->shortcut().toString(QKeySequence::NativeText).toHtmlEscaped(),
                             what.toHtmlEscaped());
        }
    };
    for (const QAction* top : menuBar()->actions())
        if (top->menu()) walk(top->menu());
    return QStringLiteral("<table cellpadding=3>%1</table>").arg(rows);
}

void MainWindow::buildHelpMenu() {
    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("Keyboard shortcuts"), QKeySequence::HelpContents, this, [this] {
        QMessageBox::information(this, tr("Keyboard shortcuts"),
                                 shortcutTable() + tr("<p>Right-click a chart to export it (PNG, SVG, PDF, "
                                                      "CSV) or to maximise it.</p>"));
    });
    help->addAction(tr("About NormLab"), this, [this] {
        QMessageBox::about(
            this, tr("About NormLab"),
            tr("<b>%1</b><br><br>NormLab trains small Transformers (decoder-only and encoder-decoder) and "
               "shows why they train or blow up: norm placement, norm type, warmup and residual schemes, "
               "changed live.<br>Right-click a chart to export it; F11 for presentation mode.")
                .arg(QString::fromStdString(normlab::version_line()).toHtmlEscaped()));
    });
}

void MainWindow::rebuildRecentMenu() {
    m_recentMenu->clear();
    const QStringList recent = ExperimentDocument::recentFiles();
    for (const QString& path : recent) {
        m_recentMenu->addAction(path, this, [this, path] {
            if (!m_document->confirmDiscard()) return;
            const QString error = openExperiment(path);
            if (!error.isEmpty()) showMessage(tr("Cannot open the experiment"), error);
        });
    }
    m_recentMenu->setEnabled(!recent.isEmpty());
}

}  // namespace normlab::gui
