// Start again after runs trained, and a fork's entry: Start (F5) on a finished experiment trains each run
// as it was recorded (a fork follows its parent's losses bit for bit to its fork step, then its own
// change), asks before the controls' edits replace recorded changes (as recorded / with my edits /
// cancel), and a fork made while an edit had not yet reached its parent shows the config it trains with.
#include <QAbstractButton>
#include <QApplication>
#include <QComboBox>
#include <QDockWidget>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLineEdit>
#include <QListWidget>
#include <QMessageBox>
#include <QPushButton>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <map>

#include "app/gui/main_window.h"
#include "tests/ui/ui_test_support.h"
#include "ui/controls/config_panel.h"
#include "ui/experiment/experiment_file.h"

using normlab::gui::MainWindow;
using normlab::gui::WorkerState;
using normlab::test::actionNamed;
using normlab::test::lossesIn;

class RestartTest : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase();
    void forkMadeBeforeAnEditReachedItsParentShowsHowItTrains();
    void startAgainReplaysRecordedRunsAndAsksBeforeDroppingChanges();
    void aRunStoppedBeforeItsRecordedChangeKeepsIt();
    void aNewExperimentWhilePausedStartsClean();
    void anAddedRunIsSelectedAndItsRowFollowsTheControls();
    void aRunIsNamedChangedOnlyOnceTheChangeReachesIt();

  private:
    // The "stuck" Post-LN run trained to a pause: the step it paused at (-1: it did not get there).
    static int64_t trainToPause(MainWindow& window);
    // Trains every run a few steps past `step`, then stops them.
    static void trainPastThenStop(MainWindow& window, int64_t step);
    // Clicks the button named `text` of the edits-or-recorded question once it shows (its own loop).
    static void answerQuestionWith(const QString& text);
    static QStringList changesIn(const QString& folder);
    QTemporaryDir m_dir;
};

void RestartTest::initTestCase() {
    qputenv("NORMLAB_RUNS_DIR", m_dir.filePath(QStringLiteral("runs")).toUtf8());
}

int64_t RestartTest::trainToPause(MainWindow& window) {
    normlab::Config config = normlab::test::tinyConfig(100000);
    config.model.norm_placement = normlab::NormPlacement::Post;
    window.loadConfig(config, QStringLiteral("stuck"));
    window.show();
    window.startRuns();
    if (!QTest::qWaitFor([&] { return window.store().run(0)->step >= 8; }, 30000)) return -1;
    actionNamed(window, QStringLiteral("Pause"))->trigger();
    if (!QTest::qWaitFor([&] { return window.workerState() == WorkerState::Paused; }, 30000)) return -1;
    QTest::qWait(100);
    return window.store().run(0)->step;
}

void RestartTest::trainPastThenStop(MainWindow& window, int64_t step) {
    QVERIFY(QTest::qWaitFor(
        [&] {
            for (const auto& [id, run] : window.store().runs())
                if (run.step < step + 4) return false;
            return true;
        },
        60000));
    actionNamed(window, QStringLiteral("Stop"))->trigger();
    QVERIFY(QTest::qWaitFor([&] { return window.workerState() == WorkerState::Finished; }, 30000));
}

void RestartTest::answerQuestionWith(const QString& text) {
    auto* poll = new QTimer;
    poll->setInterval(20);
    QObject::connect(poll, &QTimer::timeout, [poll, text] {
        for (QWidget* widget : QApplication::topLevelWidgets()) {
            auto* box = qobject_cast<QMessageBox*>(widget);
            if (!box || !box->isVisible() || box->objectName() != QStringLiteral("editsOrRecorded")) continue;
            for (QAbstractButton* button : box->buttons())
                if (button->text() == text) {
                    poll->stop();
                    poll->deleteLater();
                    button->click();
                    return;
                }
        }
    });
    poll->start();
}

QStringList RestartTest::changesIn(const QString& folder) {
    QFile file(folder + QStringLiteral("/events.jsonl"));
    QStringList found;
    if (file.open(QIODevice::ReadOnly))
        while (!file.atEnd())
            if (const QString line = QString::fromUtf8(file.readLine()).trimmed();
                line.contains(QStringLiteral("\"kind\":\"change\"")))
                found << line;
    return found;
}

// Paused, the user switches Post-LN to Pre-LN in the controls (a live change the parent takes at its next
// step), then forks: the fork is the parent's state now, Post-LN, and its entry and the controls say so
// (they once showed Pre-LN while it trained as Post-LN); the status bar says the edit went to the parent.
void RestartTest::forkMadeBeforeAnEditReachedItsParentShowsHowItTrains() {
    MainWindow window;
    const int64_t at = trainToPause(window);
    QVERIFY(at > 0);
    auto* placement = window.configPanel().findChild<QComboBox*>(QStringLiteral("model.norm_placement"));
    placement->setCurrentIndex(placement->findData(QStringLiteral("pre")));
    QCOMPARE(window.configPanel().config().model.norm_placement, normlab::NormPlacement::Pre);
    window.findChild<QPushButton*>(QStringLiteral("forkRun"))->click();
    QVERIFY(QTest::qWaitFor(
        [&] {
            return window.store().run(1) && window.store().run(1)->name.contains(QStringLiteral("fork@"));
        },
        30000));
    QCOMPARE(window.store().run(1)->config.model.norm_placement, normlab::NormPlacement::Post);
    QCOMPARE(window.configPanel().config().model.norm_placement, normlab::NormPlacement::Post);
    QCOMPARE(window.store().run(1)->name, QStringLiteral("stuck / fork@%1").arg(at));  // not "(changed)"
    QVERIFY2(
        window.store().run(1)->folder.endsWith(QStringLiteral("-stuck_fork_%1").arg(at)),  // its step too
        qPrintable(window.store().run(1)->folder));
    // The Runs list compares what they train with: nothing between them (it once said pre for the fork).
    auto* runList = window.findChild<QListWidget*>(QStringLiteral("runList"));
    for (int row = 0; row < runList->count(); ++row)
        QVERIFY2(!runList->item(row)->text().contains(QStringLiteral("norm_placement=pre")),
                 qPrintable(runList->item(row)->text()));
    const QString said = window.statusBar()->currentMessage();
    QVERIFY2(said.contains(QStringLiteral(
                 "without your edit of model.norm_placement (it reaches stuck at its next step)")),
             qPrintable(said));
    actionNamed(window, QStringLiteral("Resume"))->trigger();
    trainPastThenStop(window, at);
    const QStringList parent = changesIn(window.store().run(0)->folder);
    QCOMPARE(parent.size(), 1);  // the edit reached the parent, at the step after the fork
    QVERIFY2(parent.front().contains(QStringLiteral("\"step\":%1").arg(at + 1)), qPrintable(parent.front()));
    QVERIFY(changesIn(window.store().run(1)->folder).isEmpty());
}

// A fork switched to Pre-LN after its fork step, stopped; Start again: both runs train as recorded (the
// fork keeps its name, follows its parent's losses to the fork step and switches at the same step).
// Edited afterwards, Start asks: Cancel starts nothing, "As recorded" drops the edit, "With my edits"
// trains the edit from step 0 without the recorded change, under a name that is no longer a fork's.
void RestartTest::startAgainReplaysRecordedRunsAndAsksBeforeDroppingChanges() {
    MainWindow window;
    const int64_t at = trainToPause(window);
    QVERIFY(at > 0);
    window.findChild<QPushButton*>(QStringLiteral("forkRun"))->click();
    QVERIFY(QTest::qWaitFor([&] { return window.store().run(1) != nullptr; }, 30000));
    const QString forkName = QStringLiteral("stuck / fork@%1").arg(at);
    QVERIFY(QTest::qWaitFor([&] { return window.store().run(1)->name == forkName; }, 30000));
    auto* placement = window.configPanel().findChild<QComboBox*>(QStringLiteral("model.norm_placement"));
    placement->setCurrentIndex(placement->findData(QStringLiteral("pre")));
    actionNamed(window, QStringLiteral("Resume"))->trigger();
    trainPastThenStop(window, at);

    // Nothing edited: no question, both as recorded.
    const QString firstFolder = window.store().run(1)->folder;
    QCOMPARE(window.startRuns(), QString());
    QVERIFY(window.store().run(1)->folder != firstFolder);
    trainPastThenStop(window, at);
    QVERIFY(window.store().run(1)->name.startsWith(forkName));  // "... (changed)": it switches live
    const QStringList replayed = changesIn(window.store().run(1)->folder);
    QCOMPARE(replayed.size(), 1);
    QVERIFY2(replayed.front().contains(QStringLiteral("\"step\":%1").arg(at + 1)) &&
                 replayed.front().contains(QStringLiteral("\"value\":\"pre\"")),
             qPrintable(replayed.front()));
    const std::map<int, double> parent = lossesIn(window.store().run(0)->folder);
    const std::map<int, double> fork = lossesIn(window.store().run(1)->folder);
    for (int step = 1; step <= at; ++step) QCOMPARE(fork.at(step), parent.at(step));  // same batches
    QVERIFY(fork.at(int(at) + 2) != parent.at(int(at) + 2));                          // then Pre-LN

    // The learning rate edited: Cancel starts nothing.
    auto* lr = window.configPanel().findChild<QLineEdit*>(QStringLiteral("train.lr"));
    const QString recordedLr = lr->text();
    const auto editLr = [&] {
        lr->setText(QStringLiteral("0.00123"));
        lr->setModified(true);
        QMetaObject::invokeMethod(lr, "editingFinished");
    };
    editLr();
    const QString folderBefore = window.store().run(1)->folder;
    answerQuestionWith(QStringLiteral("Cancel"));
    QCOMPARE(window.startRuns(), QStringLiteral("cancelled"));
    QCOMPARE(window.workerState(), WorkerState::Finished);
    QCOMPARE(window.store().run(1)->folder, folderBefore);

    // As recorded: the edit goes, the change is replayed.
    answerQuestionWith(QStringLiteral("As recorded"));
    QCOMPARE(window.startRuns(), QString());
    QCOMPARE(lr->text(), recordedLr);
    trainPastThenStop(window, at);
    QVERIFY(window.store().run(1)->name.startsWith(forkName));  // "... (changed)": it switches live
    QCOMPARE(changesIn(window.store().run(1)->folder).size(), 1);

    // With my edits: from step 0 with the new rate, no change, no longer named a fork.
    editLr();
    answerQuestionWith(QStringLiteral("With my edits"));
    QCOMPARE(window.startRuns(), QString());
    trainPastThenStop(window, at);
    QVERIFY2(!window.store().run(1)->name.contains(QStringLiteral("fork")),
             qPrintable(window.store().run(1)->name));
    auto* controls = window.findChild<QDockWidget*>(QStringLiteral("controlsDock"));
    QCOMPARE(controls->windowTitle(),
             QStringLiteral("Controls: editing %1").arg(window.store().run(1)->name));
    QVERIFY(changesIn(window.store().run(1)->folder).isEmpty());
    QCOMPARE(window.store().run(1)->config.train.lr, 0.00123);
    const QString said = window.statusBar()->currentMessage();
    QVERIFY2(said.contains(QStringLiteral("starts from step 0 with your edits: train.lr=0.00123")),
             qPrintable(said));
}

// Replayed at 5 steps a second and stopped long before its recorded change's step: the change is still
// the run's (saved, and replayed by the next Start). It was lost once, the run still named "(changed)".
void RestartTest::aRunStoppedBeforeItsRecordedChangeKeepsIt() {
    MainWindow window;
    const int64_t at = trainToPause(window);
    QVERIFY(at > 0);
    auto* placement = window.configPanel().findChild<QComboBox*>(QStringLiteral("model.norm_placement"));
    placement->setCurrentIndex(placement->findData(QStringLiteral("pre")));  // reaches it at at + 1
    actionNamed(window, QStringLiteral("Resume"))->trigger();
    trainPastThenStop(window, at);
    auto* speed = window.findChild<QComboBox*>(QStringLiteral("speedLimit"));
    speed->setCurrentIndex(speed->findData(5.0));
    QCOMPARE(window.startRuns(), QString());
    QTest::qWait(300);
    actionNamed(window, QStringLiteral("Stop"))->trigger();
    QVERIFY(QTest::qWaitFor([&] { return window.workerState() == WorkerState::Finished; }, 30000));
    QVERIFY2(window.store().run(0)->step < at, "the replay got to the change: the test is void");
    const QString path = m_dir.filePath(QStringLiteral("stopped-early.json"));
    QCOMPARE(window.saveExperimentTo(path), QString());
    const normlab::ui::Experiment saved = normlab::ui::loadExperiment(path);
    QCOMPARE(saved.runs.at(0).changes,
             (std::vector<normlab::LiveChange>{{"model.norm_placement", "pre", at + 1}}));
    speed->setCurrentIndex(speed->findData(0.0));
    QCOMPARE(window.startRuns(), QString());
    trainPastThenStop(window, at);
    QCOMPARE(changesIn(window.store().run(0)->folder).size(), 1);  // replayed again
}

// File > New experiment while a run is paused: the new run is not started, shows nothing of the old one
// (its last flush as it stopped once landed in the new entry: "stopped, step 567, fork points ..."), and
// Start names no edits.
void RestartTest::aNewExperimentWhilePausedStartsClean() {
    MainWindow window;
    QVERIFY(trainToPause(window) > 0);
    window.loadConfig(normlab::test::tinyConfig(100000), QStringLiteral("next"));
    QTest::qWait(500);
    QCOMPARE(window.store().run(0)->name, QStringLiteral("next"));
    QVERIFY(!window.store().run(0)->started);
    QCOMPARE(window.store().run(0)->step, int64_t(0));
    QVERIFY(window.store().run(0)->forkPoints.empty());
    QCOMPARE(window.startRuns(), QString());
    QVERIFY2(!window.statusBar()->currentMessage().contains(QStringLiteral("edits")),
             qPrintable(window.statusBar()->currentMessage()));
    actionNamed(window, QStringLiteral("Stop"))->trigger();
    QVERIFY(QTest::qWaitFor([&] { return window.workerState() == WorkerState::Finished; }, 30000));
}

// "Add run with current settings" before any run trained: the new run is the one selected in Runs (the
// controls edit it; the highlight once stayed on the first run, so edits meant for a next run went to
// this one unseen), and its row shows what the controls set before it trains.
void RestartTest::anAddedRunIsSelectedAndItsRowFollowsTheControls() {
    MainWindow window;
    window.loadConfig(normlab::test::tinyConfig(100), QStringLiteral("first"));
    window.show();
    window.findChild<QPushButton*>(QStringLiteral("addRun"))->click();
    auto* runList = window.findChild<QListWidget*>(QStringLiteral("runList"));
    QVERIFY(runList->currentItem());
    QCOMPARE(runList->currentItem()->data(Qt::UserRole).toInt(), 1);
    auto* placement = window.configPanel().findChild<QComboBox*>(QStringLiteral("model.norm_placement"));
    placement->setCurrentIndex(placement->findData(QStringLiteral("post")));
    QCOMPARE(window.store().run(1)->config.model.norm_placement, normlab::NormPlacement::Post);
    QCOMPARE(window.store().run(0)->config.model.norm_placement, normlab::NormPlacement::Pre);
    QTest::qWait(100);
    QVERIFY2(runList->item(1)->text().contains(QStringLiteral("norm_placement=post")),
             qPrintable(runList->item(1)->text()));
}

// An edit made while paused reaches the run at its next step: stopped before that, the run never took
// it and keeps its name (it was named "(changed)" at once); resumed, it is renamed when the change
// arrives, and the Controls title follows.
void RestartTest::aRunIsNamedChangedOnlyOnceTheChangeReachesIt() {
    MainWindow window;
    const int64_t at = trainToPause(window);
    QVERIFY(at > 0);
    auto* placement = window.configPanel().findChild<QComboBox*>(QStringLiteral("model.norm_placement"));
    placement->setCurrentIndex(placement->findData(QStringLiteral("pre")));
    QTest::qWait(200);
    QCOMPARE(window.store().run(0)->name, QStringLiteral("stuck"));
    actionNamed(window, QStringLiteral("Stop"))->trigger();
    QVERIFY(QTest::qWaitFor([&] { return window.workerState() == WorkerState::Finished; }, 30000));
    QTest::qWait(200);
    QCOMPARE(window.store().run(0)->name, QStringLiteral("stuck"));
    QVERIFY(changesIn(window.store().run(0)->folder).isEmpty());

    MainWindow resumed;
    QVERIFY(trainToPause(resumed) > 0);
    auto* other = resumed.configPanel().findChild<QComboBox*>(QStringLiteral("model.norm_placement"));
    other->setCurrentIndex(other->findData(QStringLiteral("pre")));
    actionNamed(resumed, QStringLiteral("Resume"))->trigger();
    QVERIFY(QTest::qWaitFor([&] { return resumed.store().run(0)->name == QStringLiteral("stuck (changed)"); },
                            30000));
    auto* controls = resumed.findChild<QDockWidget*>(QStringLiteral("controlsDock"));
    QCOMPARE(controls->windowTitle(), QStringLiteral("Controls: editing stuck (changed)"));
    actionNamed(resumed, QStringLiteral("Stop"))->trigger();
    QVERIFY(QTest::qWaitFor([&] { return resumed.workerState() == WorkerState::Finished; }, 30000));
}

QTEST_MAIN(RestartTest)
#include "test_restart.moc"
