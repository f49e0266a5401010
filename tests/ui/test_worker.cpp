// The engine thread seen from the GUI: start, pause, single step, resume, stop (within one step),
// live changes reaching the engine and showing up as chart markers, divergence as a result, bad
// input as a message, and the run folder written as the run goes.
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <map>

#include "engine/io/checkpoint.h"
#include "engine/train/trainer.h"
#include "tests/ui/ui_test_support.h"
#include "ui/panels/event_markers.h"
#include "ui/panels/loss_panel.h"

using normlab::gui::TrainingWorker;

namespace {
// step -> loss of a run folder's metrics.jsonl.
std::map<int64_t, double> lossesIn(const QString& folder) {
    QFile file(folder + QStringLiteral("/metrics.jsonl"));
    std::map<int64_t, double> losses;
    if (!file.open(QIODevice::ReadOnly)) return losses;
    while (!file.atEnd()) {
        const QJsonObject line = QJsonDocument::fromJson(file.readLine()).object();
        losses[line.value(QStringLiteral("step")).toInteger()] =
            line.value(QStringLiteral("loss")).toDouble();
    }
    return losses;
}
}  // namespace
using normlab::gui::WorkerState;

class WorkerTest : public QObject {
    Q_OBJECT
  private slots:
    void startPauseStepResumeStop();
    void stopAnswersWithinOneStep();
    void liveChangeReachesEngineAndBecomesMarker();
    void divergenceIsAResult();
    void badConfigGivesMessageAndNoFolder();
    void telemetryArrivesCoalesced();
    void liveDeviceChangeSwitchesBackendAndRefusalIsReported();
    void pausePointStopsEveryRunAtThatStep();
    void speedLimitSlowsTheRuns();
    void periodicCheckpointsGoToTheRunFolder();
    void aForkRetracesItsParentOnTheSameBatches();
    void aRefusedRunIsNamedSoTheWindowCanDropIt();
};

void WorkerTest::startPauseStepResumeStop() {
    normlab::test::WorkerHarness h;
    normlab::test::MainThreadSpy states(h.worker, &TrainingWorker::stateChanged);
    h.start({normlab::test::tinyConfig()});
    QVERIFY(h.waitFor([&] { return h.step() >= 5; }));
    QCOMPARE(h.state, WorkerState::Running);

    QMetaObject::invokeMethod(h.worker, &TrainingWorker::pause, Qt::QueuedConnection);
    QVERIFY(h.waitFor([&] { return h.state == WorkerState::Paused; }));
    QTest::qWait(100);  // the pause flush has arrived
    const int64_t paused = h.step();
    const int64_t taken = h.worker->stepsTaken();
    QCOMPARE(taken, paused);
    QTest::qWait(300);
    QCOMPARE(h.worker->stepsTaken(), taken);  // no step while paused

    QMetaObject::invokeMethod(h.worker, &TrainingWorker::stepOnce, Qt::QueuedConnection);
    QVERIFY(h.waitFor([&] { return h.step() == paused + 1; }));
    QTest::qWait(200);
    QCOMPARE(h.worker->stepsTaken(), taken + 1);  // exactly one
    QCOMPARE(h.state, WorkerState::Paused);

    QMetaObject::invokeMethod(h.worker, &TrainingWorker::resume, Qt::QueuedConnection);
    QVERIFY(h.waitFor([&] { return h.step() >= paused + 10; }));

    QMetaObject::invokeMethod(h.worker, &TrainingWorker::stop, Qt::QueuedConnection);
    QVERIFY(h.waitFor([&] { return h.state == WorkerState::Finished; }));
    QCOMPARE(h.store.run(0)->status, normlab::RunStatus::Stopped);
    QVERIFY(states.count() >= 4);  // running, paused, running, finished
}

void WorkerTest::stopAnswersWithinOneStep() {
    normlab::test::WorkerHarness h;
    normlab::Config slow = normlab::test::tinyConfig();
    slow.model.layers = 4;
    slow.model.d_model = 128;
    slow.model.d_ff = 512;
    slow.model.seq_len = 64;
    slow.train.batch_size = 16;  // tens of ms per step
    h.start({slow, slow});
    QVERIFY(h.waitFor([&] { return h.worker->stepsTaken() >= 4; }));
    const int64_t before = h.worker->stepsTaken();
    h.worker->requestStop();
    QVERIFY(h.waitFor([&] { return h.state == WorkerState::Finished; }, 30000));
    // The step under way when stop was asked may finish; no other step starts (over both runs).
    QVERIFY2(h.worker->stepsTaken() - before <= 1,
             qPrintable(QStringLiteral("%1 steps after stop").arg(h.worker->stepsTaken() - before)));
    QFile summary(h.runs.filePath(QStringLiteral("run0/summary.json")));
    QVERIFY(summary.open(QIODevice::ReadOnly));
    QCOMPARE(QJsonDocument::fromJson(summary.readAll()).object().value("status").toString(),
             QStringLiteral("stopped"));
}

void WorkerTest::liveChangeReachesEngineAndBecomesMarker() {
    normlab::test::WorkerHarness h;
    h.start({normlab::test::tinyConfig()});
    QVERIFY(h.waitFor([&] { return h.step() >= 3; }));
    QMetaObject::invokeMethod(
        h.worker, [w = h.worker] { w->postChange(0, QStringLiteral("train.lr"), QStringLiteral("0.0005")); },
        Qt::QueuedConnection);
    const auto changeEvent = [&]() -> const normlab::Event* {
        for (const normlab::Event& event : h.store.run(0)->events)
            if (event.kind == "change" && event.key == "train.lr") return &event;
        return nullptr;
    };
    QVERIFY(h.waitFor([&] { return changeEvent() != nullptr; }));
    const int64_t changedAt = changeEvent()->step;
    // The engine uses it: the logged learning rate after the change is the new one.
    QVERIFY(h.waitFor([&] { return h.step() >= changedAt + 2; }));
    QCOMPARE(*h.store.run(0)->lr.lastValue(), 0.0005);

    const auto markers = normlab::ui::eventMarkers(h.store);
    QCOMPARE(markers.size(), size_t(1));
    QCOMPARE(markers[0].x, double(changedAt));
    QCOMPARE(markers[0].label, QStringLiteral("lr=0.0005"));
    normlab::ui::LossPanel panel(h.store);
    const auto content = panel.buildContent(200);
    QCOMPARE(content.markers.size(), size_t(1));
    QCOMPARE(content.markers[0].label, QStringLiteral("lr=0.0005"));

    // A non-live key is refused by the engine with an event, and the run goes on.
    QMetaObject::invokeMethod(
        h.worker, [w = h.worker] { w->postChange(0, QStringLiteral("model.layers"), QStringLiteral("5")); },
        Qt::QueuedConnection);
    const int64_t now = h.step();
    QVERIFY(h.waitFor([&] { return h.step() >= now + 5; }));
    QCOMPARE(h.store.run(0)->status, normlab::RunStatus::Running);
}

void WorkerTest::divergenceIsAResult() {
    normlab::test::WorkerHarness h;
    normlab::test::MainThreadSpy failures(h.worker, &TrainingWorker::failed);
    h.start({normlab::test::divergingConfig(), normlab::test::tinyConfig(30)});
    QVERIFY(h.waitFor([&] { return h.state == WorkerState::Finished; }));
    const normlab::ui::RunHistory& diverged = *h.store.run(0);
    QCOMPARE(diverged.status, normlab::RunStatus::Diverged);
    QVERIFY(diverged.divergedAt > 0);
    QVERIFY(diverged.firstBadLayer >= 0);
    QVERIFY(diverged.statusText().startsWith(QStringLiteral("diverged at step %1").arg(diverged.divergedAt)));
    bool marker = false;
    for (const auto& m : normlab::ui::eventMarkers(h.store))
        marker |= m.label.startsWith(QStringLiteral("diverged"));
    QVERIFY(marker);
    // The other run of the comparison completed; nothing was reported as a failure.
    QCOMPARE(h.store.run(1)->status, normlab::RunStatus::Completed);
    QCOMPARE(h.store.run(1)->step, int64_t(30));
    QCOMPARE(failures.count(), 0);
}

// train.checkpoint_every in the window: the run folder's checkpoint holds the last multiple of N, and
// summary.json says so.
void WorkerTest::periodicCheckpointsGoToTheRunFolder() {
    normlab::test::WorkerHarness h;
    normlab::Config config = normlab::test::tinyConfig(25);
    config.train.checkpoint_every = 10;
    h.start({config});
    QVERIFY(h.waitFor([&] { return h.state == WorkerState::Finished; }));
    const QString folder = h.store.run(0)->folder;
    QVERIFY(QFile::exists(folder + QStringLiteral("/model.safetensors")));
    QFile summaryFile(folder + QStringLiteral("/summary.json"));
    QVERIFY(summaryFile.open(QIODevice::ReadOnly));
    const QJsonObject summary = QJsonDocument::fromJson(summaryFile.readAll()).object();
    QCOMPARE(summary.value(QStringLiteral("checkpoint_step")).toInt(), 20);
    QCOMPARE(summary.value(QStringLiteral("steps")).toInt(), 25);
    auto resumed =
        normlab::load_checkpoint((folder + QStringLiteral("/model.safetensors")).toStdString(), {});
    QCOMPARE(resumed->steps_done(), int64_t(20));
}

// A fork of a paused run at its step N keeps the parent's state as model-step-N.safetensors, starts
// with the parent's history (folder and GUI), and with no change retraces the parent bit for bit.
void WorkerTest::aForkRetracesItsParentOnTheSameBatches() {
    normlab::test::WorkerHarness h;
    normlab::test::MainThreadSpy forks(h.worker, &TrainingWorker::forked);
    h.start({normlab::test::tinyConfig(40)}, false, 12);
    QVERIFY(h.waitFor([&] { return h.state == WorkerState::Paused; }));
    QTest::qWait(100);
    QCOMPARE(h.step(), int64_t(12));
    const QString fork = h.runs.filePath(QStringLiteral("fork"));
    h.store.addRun(1, QStringLiteral("fork"), normlab::test::tinyConfig(40), fork);
    const normlab::gui::RunSpec spec{1, QStringLiteral("fork"), normlab::test::tinyConfig(40), fork, {}};
    QMetaObject::invokeMethod(
        h.worker, [w = h.worker, spec] { w->forkRun(0, spec); }, Qt::QueuedConnection);
    QVERIFY(forks.wait(30000));
    QCOMPARE(forks.at(0).at(0).toInt(), 1);
    QCOMPARE(forks.at(0).at(1).toInt(), 0);
    QCOMPARE(forks.at(0).at(2).toLongLong(), qint64(12));
    const QString parent = h.store.run(0)->folder;
    QVERIFY(QFile::exists(parent + QStringLiteral("/model-step-12.safetensors")));
    QCOMPARE(lossesIn(fork), lossesIn(parent));  // steps 1-12, copied
    QMetaObject::invokeMethod(h.worker, &TrainingWorker::resume, Qt::QueuedConnection);
    QVERIFY(h.waitFor([&] { return h.state == WorkerState::Finished; }));
    const std::map<int64_t, double> forked = lossesIn(fork);
    QCOMPARE(forked.size(), size_t(40));
    QCOMPARE(forked, lossesIn(parent));
    QFile provenance(fork + QStringLiteral("/provenance.json"));
    QVERIFY(provenance.open(QIODevice::ReadOnly));
    const QJsonObject from = QJsonDocument::fromJson(provenance.readAll())
                                 .object()
                                 .value(QStringLiteral("forked_from"))
                                 .toObject();
    QCOMPARE(from.value(QStringLiteral("run")).toString(), parent);
    QCOMPARE(from.value(QStringLiteral("step")).toInt(), 12);
}

// Adding or forking with nothing training is refused by id (the window drops the entry it made).
void WorkerTest::aRefusedRunIsNamedSoTheWindowCanDropIt() {
    normlab::test::WorkerHarness h;
    normlab::test::MainThreadSpy refused(h.worker, &TrainingWorker::runRefused);
    const normlab::gui::RunSpec spec{4,
                                     QStringLiteral("late"),
                                     normlab::test::tinyConfig(10),
                                     h.runs.filePath(QStringLiteral("late")),
                                     {}};
    QMetaObject::invokeMethod(
        h.worker, [w = h.worker, spec] { w->addRun(spec); }, Qt::QueuedConnection);
    QVERIFY(refused.wait(10000));
    QCOMPARE(refused.at(0).at(0).toInt(), 4);
    QVERIFY(refused.at(0).at(1).toString().contains(QStringLiteral("no runs are training")));
    QMetaObject::invokeMethod(
        h.worker, [w = h.worker, spec] { w->forkRun(0, spec); }, Qt::QueuedConnection);
    QVERIFY(refused.wait(10000));
    QVERIFY(refused.at(1).at(1).toString().contains(QStringLiteral("only a run that is still training")));
    QVERIFY(!QFile::exists(spec.folder));
}

void WorkerTest::badConfigGivesMessageAndNoFolder() {
    normlab::test::WorkerHarness h;
    normlab::test::MainThreadSpy failures(h.worker, &TrainingWorker::failed);
    normlab::Config bad = normlab::test::tinyConfig();
    bad.model.heads = 3;  // 32 is not divisible by 3
    h.start({normlab::test::tinyConfig(), bad});
    QVERIFY(failures.wait(10000));
    QVERIFY2(failures.at(0).at(0).toString().contains(QStringLiteral("heads")),
             qPrintable(failures.at(0).at(0).toString()));
    QVERIFY(!QFile::exists(h.runs.filePath(QStringLiteral("run0"))));  // valid sibling not started either
    QCOMPARE(h.worker->stepsTaken(), int64_t(0));
}

void WorkerTest::telemetryArrivesCoalesced() {
    normlab::test::WorkerHarness h;
    normlab::test::MainThreadSpy batches(h.worker, &TrainingWorker::telemetry);
    h.start({normlab::test::tinyConfig(400)});
    QVERIFY(h.waitFor([&] { return h.state == WorkerState::Finished; }));
    QCOMPARE(h.step(), int64_t(400));
    QCOMPARE(h.store.run(0)->loss.bucketCount(), 400);  // every step arrived
    // Far fewer batches than steps (at most ~30 a second plus state flushes).
    QVERIFY2(batches.count() < 400, qPrintable(QString::number(batches.count())));
    QFile metrics(h.runs.filePath(QStringLiteral("run0/metrics.jsonl")));
    QVERIFY(metrics.open(QIODevice::ReadOnly));
    QCOMPARE(metrics.readAll().count('\n'), 400);
}

void WorkerTest::pausePointStopsEveryRunAtThatStep() {
    // A lesson's pause point: both compared runs stop after exactly 7 steps, once; Resume finishes.
    normlab::test::WorkerHarness h;
    h.start({normlab::test::tinyConfig(40), normlab::test::tinyConfig(40)}, false, 7);
    QVERIFY(h.waitFor([&] { return h.state == WorkerState::Paused; }));
    QVERIFY(h.waitFor([&] { return h.step(0) == 7 && h.step(1) == 7; }, 5000));
    QTest::qWait(200);
    QCOMPARE(h.step(0), 7);  // still paused
    QMetaObject::invokeMethod(h.worker, &TrainingWorker::resume, Qt::QueuedConnection);
    QVERIFY(h.waitFor([&] { return h.state == WorkerState::Finished; }));
    QCOMPARE(h.step(0), 40);
    QCOMPARE(h.step(1), 40);
}

void WorkerTest::speedLimitSlowsTheRuns() {
    // 10 steps a second: after about a second a tiny model (hundreds of steps a second unlimited) has
    // taken about 10; lifting the limit lets it finish.
    normlab::test::WorkerHarness h;
    QMetaObject::invokeMethod(
        h.worker, [w = h.worker] { w->setSpeedLimit(10.0); }, Qt::QueuedConnection);
    h.start({normlab::test::tinyConfig(2000)});
    QVERIFY(h.waitFor([&] { return h.step() >= 1; }));
    QTest::qWait(1000);
    const int64_t steps = h.step();
    QVERIFY2(steps >= 3 && steps <= 25, qPrintable(QString::number(steps)));
    QCOMPARE(h.state, WorkerState::Running);
    QMetaObject::invokeMethod(
        h.worker, [w = h.worker] { w->setSpeedLimit(0.0); }, Qt::QueuedConnection);
    QVERIFY(h.waitFor([&] { return h.state == WorkerState::Finished; }));
    QCOMPARE(h.step(), 2000);
}

QTEST_MAIN(WorkerTest)
// Device and threads change live: the run moves to the new backend and goes on from its state; a
// device that cannot be had is refused with the reason, and the run goes on where it was.
void WorkerTest::liveDeviceChangeSwitchesBackendAndRefusalIsReported() {
    normlab::test::WorkerHarness h;
    normlab::test::MainThreadSpy devices(h.worker, &TrainingWorker::deviceInUse);
    normlab::test::MainThreadSpy refusals(h.worker, &TrainingWorker::changeRejected);
    h.start({normlab::test::tinyConfig(100000)});
    QVERIFY(h.waitFor([&] { return devices.count() == 1 && h.step() >= 3; }));
    QVERIFY(devices.at(0).at(1).toString().contains(QStringLiteral("1 thread)")));

    QMetaObject::invokeMethod(
        h.worker, [w = h.worker] { w->postChange(0, QStringLiteral("threads"), QStringLiteral("2")); },
        Qt::QueuedConnection);
    QVERIFY(h.waitFor([&] { return devices.count() == 2; }));
    QCOMPARE(devices.at(1).at(0).toInt(), 0);
    QVERIFY2(devices.at(1).at(1).toString().contains(QStringLiteral("2 threads)")),
             qPrintable(devices.at(1).at(1).toString()));
    const int64_t switched = h.step();
    QVERIFY(h.waitFor([&] { return h.step() >= switched + 5; }));  // it trains on after the switch

    QMetaObject::invokeMethod(
        h.worker, [w = h.worker] { w->postChange(0, QStringLiteral("device"), QStringLiteral("cuda")); },
        Qt::QueuedConnection);
    QVERIFY(h.waitFor([&] { return refusals.count() == 1; }));
    QCOMPARE(refusals.at(0).at(1).toString(), QStringLiteral("device"));
    QVERIFY2(refusals.at(0).at(2).toString().contains(QStringLiteral("device=cuda")),
             qPrintable(refusals.at(0).at(2).toString()));
    QCOMPARE(devices.count(), 2);  // still on the CPU backend
    const int64_t refused = h.step();
    QVERIFY(h.waitFor([&] { return h.step() >= refused + 5; }));
    QCOMPARE(h.store.run(0)->status, normlab::RunStatus::Running);
}

#include "test_worker.moc"
