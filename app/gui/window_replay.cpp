// Recorded lessons in the window: File > Replay and normlab --replay play recorded run folders as if
// training; Space and F10 drive the replay while nothing trains; a lesson's recording pauses where the
// lesson does.
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QRegularExpression>
#include <QStatusBar>

#include "app/gui/main_window.h"
#include "app/gui/recording_archive.h"
#include "ui/controls/lessons_panel.h"

namespace normlab::gui {

namespace {
// The lesson a packed recording is of: scripts/record_lessons.sh names it by the lesson's title in
// lower case with every run of other characters a '-'; else the file's name.
QString recordingTitle(const QString& archive) {
    const QString name = QFileInfo(archive).fileName().chopped(static_cast<int>(qstrlen(".tar.gz")));
    for (const ui::Lesson& lesson : ui::lessons()) {
        QString slug = lesson.title.toLower();
        slug.replace(QRegularExpression(QStringLiteral("[^a-z0-9]+")), QStringLiteral("-"));
        if (slug.remove(QRegularExpression(QStringLiteral("^-|-$"))) == name) return lesson.title;
    }
    return name;
}
}  // namespace

QStringList MainWindow::replayFolders(const QStringList& folders, double stepsPerSecond) {
    m_replay->clear();
    QStringList problems, unpacked;
    for (const QString& folder : folders) {  // a packed recording plays from its unpacked copy
        QString error;
        const QString path = isRecordingArchive(folder) ? unpackedRecording(folder, &error) : folder;
        if (path.isEmpty())
            problems << error;
        else
            unpacked << path;
    }
    problems += m_replay->load(unpacked);
    if (!m_replay->active()) return problems;
    hidePlaceholderRuns();
    m_replay->setSpeed(stepsPerSecond);
    // A recording of a lesson (its folders named as the lesson's presets) pauses where the lesson does.
    // Its text shows in the Lessons panel (not loaded: Start there trains it live). The folders come in
    // name order, the presets in the lesson's: compared as sets.
    const QStringList names = m_replay->runNames();
    QStringList sortedNames = names;
    sortedNames.sort();
    for (const ui::Lesson& lesson : ui::lessons()) {
        QStringList presets = lesson.presets;
        presets.sort();
        if (presets != sortedNames) continue;
        m_lessonsPanel->selectLesson(lesson.title);
        if (lesson.pauseAtStep > 0 && !m_scripted)
            m_replay->setPausePoint(lesson.pauseAtStep, lesson.pauseText);
    }
    m_replay->play();
    statusBar()->showMessage(tr("Replaying %1 at %2 steps/s: Space pauses, F10 steps")
                                 .arg(names.size() == 1 ? tr("1 run") : tr("%1 runs").arg(names.size()))
                                 .arg(stepsPerSecond));
    updateActions();
    return problems;
}

void MainWindow::addReplayAction(QMenu* file) {
    const auto replayChosen = [this](const QString& path) {
        if (path.isEmpty()) return;
        const QStringList problems = replayFolders({path});
        if (!problems.isEmpty()) showMessage(tr("Cannot replay"), problems.join(QLatin1Char('\n')));
    };
    // The shipped recordings of the lessons too slow to train in class, one entry each.
    QMenu* recorded = file->addMenu(tr("Replay recorded &lesson"));
    for (const QString& archive : shippedRecordings())
        recorded->addAction(recordingTitle(archive), this,
                            [replayChosen, archive] { replayChosen(archive); });
    recorded->setEnabled(!recorded->isEmpty());
    file->addAction(tr("Re&play run folder(s)..."), this, [this, replayChosen] {
        replayChosen(QFileDialog::getExistingDirectory(
            this, tr("Replay a run folder, or a folder of run folders (a recorded lesson)"), runsRoot()));
    });
}

bool MainWindow::replayHandlesPause() {
    if (!m_replay->active() || runsActive()) return false;
    if (m_replay->playing())
        m_replay->pause();
    else
        m_replay->play();
    updateActions();
    return true;
}

bool MainWindow::replayHandlesStep() {
    if (!m_replay->active() || runsActive() || m_replay->playing()) return false;
    m_replay->stepOnce();
    return true;
}

}  // namespace normlab::gui
