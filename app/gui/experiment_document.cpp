// ExperimentDocument: path, dirty flag, recent files, the save-or-discard question and backed-up saves.
#include "app/gui/experiment_document.h"

#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QMessageBox>
#include <QSettings>
#include <QWidget>

namespace normlab::gui {

namespace {
const QString kRecentKey = QStringLiteral("recentExperiments");
}  // namespace

ExperimentDocument::ExperimentDocument(std::function<ui::Experiment()> snapshot, QWidget* parent)
    : QObject(parent), m_snapshot(std::move(snapshot)), m_parent(parent) {}

void ExperimentDocument::setDirty(bool dirty) {
    m_dirty = dirty;
    announceTitle();
}

void ExperimentDocument::startUntitled() {
    m_path.clear();
    setDirty(true);
}

void ExperimentDocument::opened(const QString& path) {
    m_path = path;
    rememberRecent(path);
    setDirty(false);
}

void ExperimentDocument::announceTitle() {
    const QString name = m_path.isEmpty() ? tr("untitled") : QFileInfo(m_path).fileName();
    emit titleChanged(tr("NormLab - %1%2").arg(name, m_dirty ? QStringLiteral(" *") : QString()));
}

bool ExperimentDocument::confirmDiscard() {
    if (!m_dirty) return true;
    const QString name = m_path.isEmpty()
                             ? tr("the current experiment (untitled)")
                             : tr("the current experiment (%1)").arg(QFileInfo(m_path).fileName());
    const auto answer =
        QMessageBox::question(m_parent, tr("Unsaved experiment"), tr("Save %1 first?").arg(name),
                              QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel);
    if (answer == QMessageBox::Cancel) return false;
    if (answer == QMessageBox::Discard) return true;
    return saveInteractively(false);
}

bool ExperimentDocument::saveInteractively(bool askForPath) {
    QString path = m_path;
    if (askForPath || path.isEmpty())
        path = QFileDialog::getSaveFileName(m_parent, tr("Save experiment"),
                                            path.isEmpty() ? QStringLiteral("experiment.json") : path,
                                            tr("NormLab experiments (*.json)"));
    if (path.isEmpty()) return false;
    const QString error = saveTo(path);
    if (!error.isEmpty()) {
        auto* box = new QMessageBox(QMessageBox::Warning, tr("Cannot save the experiment"), error,
                                    QMessageBox::Ok, m_parent);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->setObjectName(QStringLiteral("errorDialog"));
        box->open();
    }
    return error.isEmpty();
}

QString ExperimentDocument::backupPath(const QString& path) {
    return path + QStringLiteral(".bak");
}

QString ExperimentDocument::saveTo(const QString& path) {
    // The file being replaced is kept, whole, before anything is written over it.
    if (QFileInfo(path).isFile()) {
        const QString backup = backupPath(path);
        const QString staged = backup + QStringLiteral(".new");
        QFile::remove(staged);
        if (!QFile::copy(path, staged))
            return tr("cannot keep a backup of %1 (as %2), so it was not replaced; check the folder is "
                      "writable and has space")
                .arg(path, backup);
        QFile::remove(backup);
        if (!QFile::rename(staged, backup))
            return tr("cannot keep a backup of %1 (as %2), so it was not replaced").arg(path, backup);
    }
    const QString error = ui::saveExperiment(m_snapshot(), path);
    if (!error.isEmpty()) return error;
    m_path = path;
    rememberRecent(path);
    setDirty(false);
    return {};
}

QStringList ExperimentDocument::recentFiles() {
    return QSettings().value(kRecentKey).toStringList();
}

void ExperimentDocument::rememberRecent(const QString& path) {
    QSettings settings;
    QStringList recent = settings.value(kRecentKey).toStringList();
    recent.removeAll(path);
    recent.prepend(path);
    while (recent.size() > kMaxRecent) recent.removeLast();
    settings.setValue(kRecentKey, recent);
    emit recentChanged();
}

}  // namespace normlab::gui
