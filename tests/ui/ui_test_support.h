// Shared by the Qt tests: small configs that step fast on one thread, and a worker on its own
// QThread whose telemetry lands in a TelemetryStore (as in the app).
#pragma once
#include <QAction>
#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>
#include <QVariant>
#include <map>

#include "app/gui/training_worker.h"
#include "engine/config/config.h"
#include "engine/io/metrics_line_parser.h"
#include "engine/io/records_json.h"
#include "engine/io/run_folder.h"
#include "engine/train/trainer.h"
#include "ui/history/telemetry_store.h"

namespace normlab::test {

// One run's update made of metrics.jsonl lines, as a run folder's reader hands them to the store.
inline normlab::ui::RunUpdate updateOfLines(int run, const std::vector<const char*>& lines) {
    normlab::ui::RunUpdate update;
    update.runId = run;
    normlab::MetricsLineParser parser;
    for (const char* line : lines) update.records.push_back(parser.parse(line));
    update.step = update.records.back().step;
    return update;
}

// The window's action with this text (a menu or toolbar entry), or null.
inline QAction* actionNamed(QObject& window, const QString& text) {
    for (QAction* action : window.findChildren<QAction*>())
        if (action->text() == text) return action;
    return nullptr;
}

// step -> loss as `folder`/metrics.jsonl holds them (the JSON text's double).
inline std::map<int, double> lossesIn(const QString& folder) {
    std::map<int, double> losses;
    QFile metrics(folder + QStringLiteral("/metrics.jsonl"));
    if (!metrics.open(QIODevice::ReadOnly)) return losses;
    for (const QByteArray& line : metrics.readAll().split('\n')) {
        const QJsonObject record = QJsonDocument::fromJson(line).object();
        if (!record.isEmpty())
            losses[record.value(QStringLiteral("step")).toInt()] =
                record.value(QStringLiteral("loss")).toDouble();
    }
    return losses;
}

inline normlab::Config tinyConfig(int steps = 2000) {
    normlab::Config config;
    config.model.layers = 2;
    config.model.d_model = 32;
    config.model.d_ff = 64;
    config.model.heads = 2;
    config.model.seq_len = 16;
    config.train.batch_size = 4;
    config.train.steps = steps;
    config.telemetry.val_every = 0;
    config.threads = 1;
    return config;
}

// Post-LN-free SGD at a huge learning rate: non-finite within a few steps.
// Trains `config` for its train.steps into a new run folder, as normlab-cli train writes it.
inline void writeRunFolder(const QString& folder, const normlab::Config& config) {
    normlab::Trainer trainer(config);
    normlab::RunFolder run(folder.toStdString(), config, false);
    for (int i = 0; i < config.train.steps; ++i) run.append_metrics(trainer.step().record);
    run.write_summary(normlab::summary_json(trainer, 1.0));
}

inline normlab::Config divergingConfig() {
    normlab::Config config = tinyConfig(200);
    config.model.norm_placement = normlab::NormPlacement::None;
    config.train.optimizer = normlab::OptimizerKind::Sgd;
    config.train.lr = 50.0;
    config.train.diverge_loss = 0.0;  // diverges by a non-finite value, naming the first bad block
    return config;
}

// A QSignalSpy for an object in another thread: QSignalSpy appends in the emitting thread while the test
// reads it in the main one (ThreadSanitizer reports the race); this one is connected through the main
// thread's event queue, so it records there. wait() processes events until a call arrives.
class MainThreadSpy : public QObject {
  public:
    template <class Sender, class... Args>
    MainThreadSpy(Sender* sender, void (Sender::*signal)(Args...)) {
        connect(
            sender, signal, this,
            [this](Args... args) { m_calls.append(QVariantList{QVariant::fromValue(args)...}); },
            Qt::QueuedConnection);
    }
    qsizetype count() const { return m_calls.size(); }
    const QVariantList& at(qsizetype i) const { return m_calls.at(i); }
    bool wait(int timeoutMs) {
        const qsizetype before = m_calls.size();
        QDeadlineTimer deadline(timeoutMs);
        while (m_calls.size() == before && !deadline.hasExpired())
            QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
        return m_calls.size() > before;
    }

  private:
    QList<QVariantList> m_calls;
};

class WorkerHarness {
  public:
    WorkerHarness() {
        worker = new gui::TrainingWorker;
        worker->moveToThread(&thread);
        QObject::connect(&thread, &QThread::finished, worker, &QObject::deleteLater);
        QObject::connect(worker, &gui::TrainingWorker::telemetry, &store, &ui::TelemetryStore::absorb);
        QObject::connect(worker, &gui::TrainingWorker::stateChanged, &store,
                         [this](gui::WorkerState s) { state = s; });
        thread.start();
    }
    ~WorkerHarness() {
        worker->requestStop();
        QMetaObject::invokeMethod(worker, &gui::TrainingWorker::shutdown, Qt::QueuedConnection);
        thread.wait();
    }
    void start(const std::vector<normlab::Config>& configs, bool paused = false, int64_t pauseAtStep = 0) {
        gui::RunPlan plan;
        plan.pauseAtStep = pauseAtStep;
        for (size_t i = 0; i < configs.size(); ++i) {
            const int id = static_cast<int>(i);
            const QString folder = runs.filePath(QStringLiteral("run%1").arg(id));
            store.addRun(id, QStringLiteral("run %1").arg(id), configs[i], folder);
            plan.runs.push_back({id, QStringLiteral("run %1").arg(id), configs[i], folder});
        }
        QMetaObject::invokeMethod(
            worker, [w = worker, plan, paused] { w->start(plan, paused); }, Qt::QueuedConnection);
    }
    // Waits (processing events) until pred() holds; false on timeout.
    template <class Pred>
    bool waitFor(Pred pred, int timeoutMs = 60000) {
        return QTest::qWaitFor(pred, timeoutMs);
    }
    int64_t step(int id = 0) { return store.run(id) ? store.run(id)->step : -1; }

    QTemporaryDir runs;
    QThread thread;
    gui::TrainingWorker* worker = nullptr;
    ui::TelemetryStore store;
    gui::WorkerState state = gui::WorkerState::Idle;
};

}  // namespace normlab::test
