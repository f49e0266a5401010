// Forks at an earlier step (a chart's pinned readout) of a run trained in the window: its fork points
// (the state every N steps in memory) show in the Runs panel with their memory; a finished run forked at
// step 25 branches from its point at 20, starts paused with the parent's history up to 20, and with no
// change trains bit for bit as the parent did after 20 (same batches); a step before the first point is
// refused by name; the parent can be forked again from another point.
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QListWidget>
#include <QMessageBox>
#include <QTemporaryDir>
#include <QTest>
#include <map>
#include <optional>

#include "app/gui/main_window.h"
#include "tests/ui/ui_test_support.h"

using normlab::gui::MainWindow;
using normlab::gui::WorkerState;
using normlab::test::actionNamed;
using normlab::test::lossesIn;

class ForkPointsTest : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase();
    void finishedRunForksAtAnEarlierStepBitForBit();

  private:
    QTemporaryDir m_dir;
};

void ForkPointsTest::initTestCase() {
    qputenv("NORMLAB_RUNS_DIR", m_dir.filePath(QStringLiteral("runs")).toUtf8());
}

void ForkPointsTest::finishedRunForksAtAnEarlierStepBitForBit() {
    MainWindow window;
    window.setForkPoints({10, 4, size_t{64} << 20});
    window.loadConfig(normlab::test::tinyConfig(60), QStringLiteral("parent"));
    window.show();
    window.startRuns();
    QVERIFY(QTest::qWaitFor([&] { return window.workerState() == WorkerState::Finished; }, 60000));
    QTest::qWait(100);
    const normlab::ui::RunHistory& parent = *window.store().run(0);
    QCOMPARE(parent.forkPoints, (std::vector<int64_t>{30, 40, 50, 60}));  // the newest 4
    QVERIFY(parent.forkPointBytes > 4 * 1000);
    auto* runList = window.findChild<QListWidget*>(QStringLiteral("runList"));
    QVERIFY2(runList->item(0)->text().contains(QStringLiteral("fork points: steps 30-60 (4 kept,")),
             qPrintable(runList->item(0)->text()));

    // Where a chart's fork entry would start (its menu names this step, not the pinned one).
    QCOMPARE(window.forkTargetAt(45).step, std::optional<int64_t>(40));
    QCOMPARE(window.forkTargetAt(60).step, std::optional<int64_t>(60));
    QCOMPARE(window.forkTargetAt(45).run, QStringLiteral("parent"));
    QVERIFY(!window.forkTargetAt(45).now);
    QVERIFY(!window.forkTargetAt(25).step);
    QVERIFY2(window.forkTargetAt(25).problem.contains(QStringLiteral("(its first is at step 30)")),
             qPrintable(window.forkTargetAt(25).problem));

    // Before the first point kept: refused, naming what is kept, and no run added.
    const QString refused = window.forkRunAt(0, 25);
    QVERIFY2(refused.contains(QStringLiteral("no fork point at or before step 25")), qPrintable(refused));
    QTest::qWait(100);
    QCOMPARE(window.store().runs().size(), size_t(1));

    // At 45: from the point at 40, paused, with the parent's history up to 40.
    QCOMPARE(window.forkRunAt(0, 45), QString());
    QVERIFY(QTest::qWaitFor(
        [&] {
            return window.store().run(1) && window.store().run(1)->name == QStringLiteral("parent / fork@40");
        },
        30000));
    QVERIFY(QTest::qWaitFor([&] { return window.workerState() == WorkerState::Paused; }, 30000));
    QCOMPARE(window.store().run(1)->step, int64_t(40));
    QCOMPARE(window.store().run(1)->loss.samples().size(), qsizetype(40));
    actionNamed(window, QStringLiteral("Resume"))->trigger();
    QVERIFY(QTest::qWaitFor([&] { return window.workerState() == WorkerState::Finished; }, 60000));
    const std::map<int, double> parentLosses = lossesIn(window.store().run(0)->folder);
    const std::map<int, double> forkLosses = lossesIn(window.store().run(1)->folder);
    QCOMPARE(parentLosses.size(), size_t(60));
    QCOMPARE(forkLosses.size(), size_t(60));  // 1..40 copied from the parent, 41..60 its own
    for (int step = 1; step <= 60; ++step) QCOMPARE(forkLosses.at(step), parentLosses.at(step));
    QVERIFY(QFile::exists(window.store().run(0)->folder + QStringLiteral("/model-step-40.safetensors")));

    // The parent can be forked again, from another point it keeps; the first fork is left as it ended.
    QCOMPARE(window.forkRunAt(0, 35), QString());
    QVERIFY(QTest::qWaitFor(
        [&] {
            return window.store().run(2) && window.store().run(2)->name == QStringLiteral("parent / fork@30");
        },
        30000));
    QVERIFY(QTest::qWaitFor([&] { return window.workerState() == WorkerState::Paused; }, 30000));
    actionNamed(window, QStringLiteral("Resume"))->trigger();
    QVERIFY(QTest::qWaitFor([&] { return window.workerState() == WorkerState::Finished; }, 60000));
    QCOMPARE(lossesIn(window.store().run(2)->folder), parentLosses);
    QCOMPARE(window.store().run(1)->step, int64_t(60));
    QCOMPARE(lossesIn(window.store().run(1)->folder).size(), size_t(60));

    // A new experiment: the ended runs kept for their fork points go with the old one, so nothing of
    // them reaches the new runs' entries (a flush now would have shown "completed, step 60" on run 0).
    window.loadConfig(normlab::test::tinyConfig(60), QStringLiteral("next"));
    QTest::qWait(200);
    window.setForkPoints({10, 4, size_t{64} << 20});  // the engine thread reports every run it holds
    QTest::qWait(300);
    QCOMPARE(window.store().run(0)->name, QStringLiteral("next"));
    QVERIFY(!window.store().run(0)->started);
    QCOMPARE(window.store().run(0)->step, int64_t(0));
    QVERIFY(window.store().run(0)->forkPoints.empty());
}

QTEST_MAIN(ForkPointsTest)
#include "test_fork_points.moc"
