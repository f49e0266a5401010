// Recorded runs replayed in the window: every record of each folder reaches the charts, in step
// order, at the chosen speed; Space pauses and resumes, F10 steps one step while paused; a lesson's
// recording pauses at the lesson's pause point with its text; a folder that is not a run is refused; a
// packed recording (.tar.gz) is unpacked once into the cache and plays from there; a replayed run forks
// into live training from a checkpoint its folder keeps and trains on the parent's batches.
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QListWidget>
#include <QProcess>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include "app/gui/main_window.h"
#include "app/gui/recording_archive.h"
#include "tests/ui/ui_test_support.h"
#include "ui/controls/lessons.h"
#include "ui/controls/lessons_panel.h"

using normlab::gui::MainWindow;
using normlab::gui::RunReplay;
using normlab::gui::WorkerState;
using normlab::test::actionNamed;

class ReplayTest : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase();
    void replayShowsEveryStepAndObeysPauseAndStep();
    void aLessonsRecordingPausesWhereTheLessonDoes();
    void aFolderThatIsNoRunIsRefused();
    void aPackedRecordingPlaysFromItsUnpackedCopy();
    void aReplayedRunForksIntoLiveTrainingFromAKeptCheckpoint();

  private:
    QTemporaryDir m_dir;
};

namespace {
// A widget with focus in the window (keys go where the user's would).
QWidget* focused(MainWindow& window) {
    window.show();
    if (!QTest::qWaitForWindowExposed(&window)) return nullptr;
    auto* runs = window.findChild<QListWidget*>(QStringLiteral("runList"));
    runs->setFocus();
    return QTest::qWaitFor([&] { return runs->hasFocus(); }, 2000) ? runs : nullptr;
}

// The replayed runs of the window's store, by name.
std::map<QString, const normlab::ui::RunHistory*> replayed(MainWindow& window) {
    std::map<QString, const normlab::ui::RunHistory*> runs;
    for (const auto& [id, run] : window.store().runs())
        if (id >= RunReplay::kFirstReplayId) runs[run.name] = &run;
    return runs;
}
}  // namespace

namespace {
// step -> loss of a run folder's metrics.jsonl
std::map<int64_t, double> lossesIn(const QString& folder) {
    std::map<int64_t, double> losses;
    QFile file(folder + QStringLiteral("/metrics.jsonl"));
    if (!file.open(QIODevice::ReadOnly)) return losses;
    while (!file.atEnd()) {
        const nlohmann::json record = nlohmann::json::parse(file.readLine().toStdString());
        losses[record.at("step").get<int64_t>()] = record.at("loss").get<double>();
    }
    return losses;
}
}  // namespace

void ReplayTest::initTestCase() {
    qputenv("NORMLAB_RUNS_DIR", m_dir.filePath(QStringLiteral("runs")).toUtf8());
    QDir(m_dir.path()).mkpath(QStringLiteral("two"));
    normlab::Config pre = normlab::test::tinyConfig(30);
    normlab::test::writeRunFolder(m_dir.filePath(QStringLiteral("two/pre")), pre);
    normlab::Config post = pre;
    post.model.norm_placement = normlab::NormPlacement::Post;
    post.train.steps = 20;
    normlab::test::writeRunFolder(m_dir.filePath(QStringLiteral("two/post")), post);
}

void ReplayTest::replayShowsEveryStepAndObeysPauseAndStep() {
    MainWindow window;
    QWidget* keys = focused(window);
    QVERIFY(keys);
    QCOMPARE(window.replayFolders({m_dir.filePath(QStringLiteral("two"))}, 5.0), QStringList());
    RunReplay& replay = window.replay();
    QVERIFY(replay.playing());
    QTest::keyClick(keys, Qt::Key_Space);  // pause at once
    QVERIFY(!replay.playing());
    const int64_t paused = replay.step();
    QTest::keyClick(keys, Qt::Key_F10);  // one step
    QCOMPARE(replay.step(), paused + 1);
    auto runs = replayed(window);
    QCOMPARE(runs.size(), size_t(2));
    QCOMPARE(runs.at(QStringLiteral("pre"))->step, paused + 1);
    QCOMPARE(runs.at(QStringLiteral("pre"))->loss.samples().size(), static_cast<int>(paused + 1));
    QTest::qWait(300);
    QCOMPARE(replay.step(), paused + 1);  // paused stays paused
    // The status bar says what moves: the replay, paused, at its step.
    QStringList labels;
    for (const QLabel* label : window.statusBar()->findChildren<QLabel*>()) labels << label->text();
    QVERIFY2(labels.contains(QStringLiteral("status: replay paused")) &&
                 labels.contains(QStringLiteral("step: %1").arg(paused + 1)),
             qPrintable(labels.join(QStringLiteral(" | "))));
    // ... and so do the Runs list's lines: the replay's pause, not the engine thread's (idle here).
    QCOMPARE(runs.at(QStringLiteral("pre"))->statusText().left(14), QStringLiteral("replay, paused"));

    // At 5 steps/s, half a second of play is about 2-3 steps.
    QTest::keyClick(keys, Qt::Key_Space);
    QCOMPARE(runs.at(QStringLiteral("pre"))->statusText().left(15), QStringLiteral("replay, running"));
    QTest::qWait(500);
    QTest::keyClick(keys, Qt::Key_Space);
    const int64_t played = replay.step() - (paused + 1);
    QVERIFY2(played >= 1 && played <= 6, qPrintable(QString::number(played)));

    // Faster, to the end: every record of each folder, in order, and each run's end status.
    replay.setSpeed(1000.0);
    replay.play();
    QVERIFY(QTest::qWaitFor([&] { return replay.finished(); }, 10000));
    runs = replayed(window);
    QCOMPARE(runs.at(QStringLiteral("pre"))->step, int64_t(30));
    QCOMPARE(runs.at(QStringLiteral("post"))->step, int64_t(20));
    QCOMPARE(runs.at(QStringLiteral("pre"))->loss.samples().size(), 30);
    QCOMPARE(runs.at(QStringLiteral("post"))->status, normlab::RunStatus::Completed);
    QCOMPARE(runs.at(QStringLiteral("pre"))->statusText(), QStringLiteral("replay, completed"));
}

void ReplayTest::aLessonsRecordingPausesWhereTheLessonDoes() {
    // Folders named as the first lesson's presets make its recording: it pauses at the lesson's step.
    const normlab::ui::Lesson& lesson = normlab::ui::lessons().front();
    QVERIFY(lesson.pauseAtStep > 0);
    const QString root = m_dir.filePath(QStringLiteral("lesson"));
    for (const QString& preset : lesson.presets)
        normlab::test::writeRunFolder(root + QLatin1Char('/') + preset,
                                      normlab::test::tinyConfig(static_cast<int>(lesson.pauseAtStep) + 10));
    MainWindow window;
    QWidget* keys = focused(window);
    QVERIFY(keys);
    QCOMPARE(window.replayFolders({root}, 2000.0), QStringList());
    QVERIFY(QTest::qWaitFor([&] { return !window.replay().playing(); }, 10000));
    QCOMPARE(window.replay().step(), int64_t(lesson.pauseAtStep));
    QVERIFY(!window.replay().finished());
    QCOMPARE(window.statusBar()->currentMessage(), lesson.pauseText);
    QTest::keyClick(keys, Qt::Key_Space);
    QVERIFY(QTest::qWaitFor([&] { return window.replay().finished(); }, 10000));
    QCOMPARE(window.replay().step(), int64_t(lesson.pauseAtStep + 10));
    // The Lessons panel shows the recorded lesson's text (another lesson's, before).
    const normlab::ui::Lesson& other = normlab::ui::lessons().at(1);
    const QString otherRoot = m_dir.filePath(QStringLiteral("other-lesson"));
    for (const QString& preset : other.presets)
        normlab::test::writeRunFolder(otherRoot + QLatin1Char('/') + preset, normlab::test::tinyConfig(5));
    auto* lessonsPanel = window.findChild<normlab::ui::LessonsPanel*>();
    QVERIFY(lessonsPanel && lessonsPanel->shownLesson() != other.title);
    QCOMPARE(window.replayFolders({otherRoot}, 2000.0), QStringList());
    QCOMPARE(lessonsPanel->shownLesson(), other.title);
    QVERIFY(lessonsPanel->loadedLesson() != other.title);  // shown, not loaded for training
}

void ReplayTest::aFolderThatIsNoRunIsRefused() {
    MainWindow window;
    QDir(m_dir.path()).mkpath(QStringLiteral("empty"));
    const QStringList problems = window.replayFolders(
        {m_dir.filePath(QStringLiteral("empty")), m_dir.filePath(QStringLiteral("two"))});
    QCOMPARE(problems.size(), 1);
    QVERIFY2(problems.front().contains(QStringLiteral("empty")), qPrintable(problems.front()));
    QCOMPARE(replayed(window).size(), size_t(2));  // the good folder plays regardless
}

void ReplayTest::aPackedRecordingPlaysFromItsUnpackedCopy() {
    QStandardPaths::setTestModeEnabled(true);  // the unpacked copy goes to a test cache
    const QString archive = m_dir.filePath(QStringLiteral("two.tar.gz"));
    QCOMPARE(QProcess::execute(QStringLiteral("tar"), {QStringLiteral("-czf"), archive, QStringLiteral("-C"),
                                                       m_dir.path(), QStringLiteral("two")}),
             0);
    QString error;
    const QString unpacked = normlab::gui::unpackedRecording(archive, &error);
    QVERIFY2(QFileInfo(unpacked).fileName() == QStringLiteral("two"), qPrintable(unpacked + error));
    QCOMPARE(normlab::gui::unpackedRecording(archive, &error), unpacked);  // once: the cached copy
    MainWindow window;
    QCOMPARE(window.replayFolders({archive}, 1000.0), QStringList());
    QCOMPARE(replayed(window).size(), size_t(2));
    QVERIFY(QTest::qWaitFor([&] { return window.replay().finished(); }, 10000));
    QCOMPARE(replayed(window).at(QStringLiteral("pre"))->step, int64_t(30));

    // A broken archive says so and plays nothing.
    const QString broken = m_dir.filePath(QStringLiteral("broken.tar.gz"));
    QFile file(broken);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("not gzip at all");
    file.close();
    const QStringList problems = window.replayFolders({broken});
    QCOMPARE(problems.size(), 1);
    QVERIFY2(problems.front().contains(QStringLiteral("tar could not unpack")), qPrintable(problems.front()));
    QVERIFY(!window.replay().active());
    QDir(QFileInfo(unpacked).path()).removeRecursively();  // the test's cached copy
}

// The lecture's move: a recorded run, paused, becomes live training from the state its folder kept at a
// step; with no change, the fork's steps after it equal the parent's bit for bit (the same batches).
void ReplayTest::aReplayedRunForksIntoLiveTrainingFromAKeptCheckpoint() {
    QString parentFolder;
    {
        MainWindow trainer;
        normlab::Config config = normlab::test::tinyConfig(30);
        config.train.checkpoint_every = 10;
        config.train.checkpoint_keep = 0;  // keeps model-step-10, -20, -30
        trainer.loadConfig(config, QStringLiteral("recorded"));
        trainer.startRuns();
        QVERIFY(QTest::qWaitFor([&] { return trainer.workerState() == WorkerState::Finished; }, 60000));
        parentFolder = trainer.store().run(0)->folder;
    }
    MainWindow window;
    window.setScripted(true);  // no dialog asks for the step
    QCOMPARE(window.replayFolders({parentFolder}, 5.0), QStringList());
    const int replayId = RunReplay::kFirstReplayId;
    QVERIFY(window.store().run(replayId));
    // Fork here (Ctrl+K) waits for training, or for a replayed or opened run to be selected.
    QAction* forkAction = actionNamed(window, QStringLiteral("Fork here"));
    QVERIFY(forkAction && !forkAction->isEnabled());
    auto* runList = window.findChild<QListWidget*>(QStringLiteral("runList"));
    for (int row = 0; row < runList->count(); ++row)
        if (runList->item(row)->data(Qt::UserRole).toInt() == replayId) runList->setCurrentRow(row);
    QVERIFY(forkAction->isEnabled());
    const QString refused = window.forkFromFolderAt(replayId, 15);
    QVERIFY2(refused.contains(QStringLiteral("10")) && refused.contains(QStringLiteral("20")),
             qPrintable(refused));
    QCOMPARE(window.forkFromFolderAt(replayId, 20), QString());
    QVERIFY(QTest::qWaitFor([&] { return window.workerState() == WorkerState::Paused; }, 30000));
    const QString name = QStringLiteral("%1 / fork@20").arg(QFileInfo(parentFolder).fileName());
    const normlab::ui::RunHistory* fork = nullptr;
    for (const auto& [id, run] : window.store().runs())
        if (run.name == name) fork = &run;
    QVERIFY(fork);
    QCOMPARE(fork->step, int64_t(20));  // the folder's history up to the fork, and not past it
    QVERIFY(fork->loss.bucketCount() > 0);
    actionNamed(window, QStringLiteral("Resume"))->trigger();
    QVERIFY(QTest::qWaitFor([&] { return window.workerState() == WorkerState::Finished; }, 60000));
    const std::map<int64_t, double> parent = lossesIn(parentFolder);
    const std::map<int64_t, double> forked = lossesIn(fork->folder);
    QCOMPARE(forked.size(), size_t(30));
    QCOMPARE(forked, parent);  // steps 1-20 copied, 21-30 retrained on the same batches
}

QTEST_MAIN(ReplayTest)
#include "test_replay.moc"
