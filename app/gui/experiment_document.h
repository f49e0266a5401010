// The experiment file the window's runs belong to: its path (none while untitled), whether the window
// holds what the file does not (the dirty flag and the window title), the recent-files list, the
// save-or-discard question, and saving with a backup of the file it replaces. A new experiment (a
// lesson, File > New, a config) is untitled, so Save never writes it under another experiment's name.
#pragma once
#include <QObject>
#include <QString>
#include <QStringList>
#include <functional>

#include "ui/experiment/experiment_file.h"

class QWidget;

namespace normlab::gui {

class ExperimentDocument : public QObject {
    Q_OBJECT
  public:
    static constexpr int kMaxRecent = 8;
    // `snapshot` gives the experiment as the window holds it now (what Save writes); `parent` owns
    // the dialogs.
    ExperimentDocument(std::function<ui::Experiment()> snapshot, QWidget* parent);

    const QString& path() const { return m_path; }
    bool dirty() const { return m_dirty; }
    void setDirty(bool dirty);
    // A new experiment replaced the runs: untitled, so that Save asks for a name.
    void startUntitled();
    // The window now shows the experiment read from `path` (saved: not dirty).
    void opened(const QString& path);

    // When dirty, asks whether to save first; false when the user cancelled (or saving failed).
    bool confirmDiscard();
    // Saves to the document's file, asking for one when untitled or when `askForPath`; false when
    // cancelled or failed (the failure is shown).
    bool saveInteractively(bool askForPath);
    // Writes the experiment to `path`, the file it replaces kept as `path`.bak; the error, or empty.
    QString saveTo(const QString& path);

    static QStringList recentFiles();
    // The file name the backup of `path` is kept under.
    static QString backupPath(const QString& path);

  signals:
    void titleChanged(const QString& title);  // "NormLab - name *"
    void recentChanged();

  private:
    void rememberRecent(const QString& path);
    void announceTitle();

    std::function<ui::Experiment()> m_snapshot;
    QWidget* m_parent;
    QString m_path;
    bool m_dirty = false;
};

}  // namespace normlab::gui
