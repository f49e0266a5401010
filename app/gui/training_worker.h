// The engine thread's object: owns the trainers (one per compared run, stepped in turn), writes each
// run's folder as it goes, and sends telemetry to the GUI by value at most ~30 times a second.
// Control slots are invoked queued from the GUI thread and take effect between two steps; stop is
// also an atomic flag checked before every step.
#pragma once
#include <QMetaType>
#include <QObject>
#include <QString>
#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <vector>

#include "engine/config/config.h"
#include "engine/io/provenance.h"
#include "engine/io/snapshot_ring.h"
#include "engine/train/live_changes.h"
#include "ui/history/run_update.h"

namespace normlab {
class Trainer;
class RunFolder;
}  // namespace normlab

namespace normlab::gui {

struct RunSpec {
    int id = -1;
    QString name;
    normlab::Config config;
    QString folder;                            // the run folder to create (CLI layout)
    std::vector<normlab::LiveChange> changes;  // live changes to replay, each before its step
};

struct RunPlan {
    std::vector<RunSpec> runs;
    int64_t pauseAtStep = 0;  // > 0: pause once, when the runs have taken this many steps (lessons)
};

enum class WorkerState { Idle, Running, Paused, Finished };
// What the status bar calls each state ("status: paused"): the one table of their names.
QString workerStateName(WorkerState state);

class TrainingWorker : public QObject {
    Q_OBJECT
  public:
    explicit TrainingWorker(QObject* parent = nullptr);
    ~TrainingWorker() override;

    // Any thread: ends the runs before their next step.
    void requestStop() { m_stopRequested.store(true); }
    // Any thread: optimizer steps taken so far over all runs of this worker.
    int64_t stepsTaken() const { return m_stepsTaken.load(); }
    static constexpr int kEmitIntervalMs = 33;

  public slots:
    // Builds every run (validating first) and starts stepping; on bad input emits failed() and
    // starts nothing. Replaces any previous runs (which are finalised as stopped).
    void start(const normlab::gui::RunPlan& plan, bool paused);
    // Adds one run to those running or paused, from its step 0, leaving the others as they are (their
    // steps, pause and pause point); on bad input emits runRefused() and adds nothing.
    void addRun(const normlab::gui::RunSpec& spec);
    // Branches the run `parentId` at its current step into a new run `spec` (its id, name, folder and
    // the changes to make from the next step; its config is the parent's now): the parent's state is
    // kept in its folder as model-step-N.safetensors, the fork starts from it with the parent's history
    // up to N (folder and GUI) and sees the same batches. Emits forked(), or runRefused() adding nothing.
    void forkRun(int parentId, const normlab::gui::RunSpec& spec);
    // Forks a run that is not training (an opened or replayed folder, `parentId` its id in the GUI's
    // store) from its checkpoint `origin`: the fork starts from that state with the folder's history up
    // to its step and joins the runs training, or, when none is, starts paused on its own. Emits
    // forked(), or runRefused().
    void forkFromCheckpoint(int parentId, const normlab::gui::RunSpec& spec,
                            const normlab::ResumedFrom& origin);
    // Forks run `parentId` (its folder `parentFolder`; training, paused or finished) at its newest fork
    // point at or before `step`: a state kept in memory every few steps (setForkPoints), written into
    // its folder as model-step-N.safetensors, or a checkpoint its folder already keeps. Then as
    // forkFromCheckpoint; runRefused() naming what it keeps when there is none.
    void forkRunAt(int parentId, const QString& parentFolder, const normlab::gui::RunSpec& spec, qint64 step);
    // How often each run's state is kept in memory for forks, how many and within what memory (from now,
    // for every run).
    void setForkPoints(const normlab::SnapshotSettings& settings);
    // The window replaced or reset its runs: the ended ones kept for their fork points go (their ids
    // are the new runs' now). Nothing happens while runs train or are paused (stop them first).
    void forgetRuns();
    // The window's experiment the runs from now on belong to: every batch carries it, so what the runs
    // of a replaced experiment still report (a paused run's final flush) never reaches the new one's.
    void setExperiment(int experiment) { m_experiment = experiment; }
    void pause();
    void resume();
    void stepOnce();
    void stop();
    // At most this many steps a second (each run), for a class to follow; <= 0: as fast as it can.
    void setSpeedLimit(double stepsPerSecond);
    // A live change for one run (-1: every run), applied before its next step.
    void postChange(int runId, const QString& key, const QString& value);
    // Finalises the runs and quits the worker's thread.
    void shutdown();

  signals:
    void telemetry(const normlab::ui::TelemetryBatch& batch);
    void stateChanged(normlab::gui::WorkerState state);
    // The backend a run trains on: at its start and after each live device or threads change.
    void deviceInUse(int runId, const QString& device, const QString& deviceReason);
    // A live change the engine refused (a device that cannot be had, a value out of range): `message`
    // says why; the run goes on unchanged.
    void changeRejected(int runId, const QString& key, const QString& message);
    void failed(const QString& message);
    // A fork was made: run `runId` branches `parentId` at `step` (the parent's steps up to it have been
    // sent before this signal).
    void forked(int runId, int parentId, qint64 step);
    // Run `runId` (added or forked) was not made: no runs training, bad input, or the parent had
    // finished or its state could not be saved or read. `message` says why.
    void runRefused(int runId, const QString& message);

  private:
    struct Session;
    // A run's trainer, folder, provenance and checkpointer; throws on bad input, leaving no folder.
    static std::unique_ptr<Session> makeSession(const RunSpec& spec);
    // Finalises and forgets the runs there were, before a new start.
    void dropSessions();
    // The step-rate and summary clocks and the pace, from now.
    void startClocks();
    // A made session joins those stepping (its pause accounted from now when paused).
    void join(std::unique_ptr<Session> session);
    // A session from checkpoint `origin` (a fork), with `spec`'s changes posted and its folder made.
    static std::unique_ptr<Session> sessionFrom(const RunSpec& spec, const normlab::ResumedFrom& origin);
    // Creates the run's folder (a fork's starts with its parent's history up to the fork).
    static void openFolder(Session& session, const std::optional<normlab::ResumedFrom>& fork = std::nullopt);
    void announce(Session& session);
    void tick();
    void scheduleTick(int delayMs = 0);
    // Under a speed limit, the runs are ahead of it (the pace restarts at every start and resume).
    bool aheadOfPace() const;
    void restartPace();
    // The run the pace follows: the first still training (a finished one, kept for its fork points,
    // never moves).
    const Session* pacer() const;
    void stepAll();
    void reportChanges(const Session& session, const std::vector<normlab::Event>& events);
    void finalise(Session& session, const QString& error = {});
    void finaliseAll();
    void writeSummary(Session& session, const QString& error = {});
    double activeSeconds(const Session& session) const;
    void flush(bool force);
    void setState(WorkerState state);
    bool allFinished() const;
    // The plan's pause point is reached (the first run has taken that many steps).
    bool pausePointReached() const;

    std::vector<std::unique_ptr<Session>> m_sessions;
    std::atomic<bool> m_stopRequested{false};
    std::atomic<int64_t> m_stepsTaken{0};
    WorkerState m_state = WorkerState::Idle;
    bool m_tickScheduled = false;
    int64_t m_pauseAtStep = 0;
    double m_speedLimit = 0.0;  // steps per second; kept across starts
    normlab::SnapshotSettings m_forkPointSettings;
    int m_experiment = 0;
    std::chrono::steady_clock::time_point m_paceStart;
    int64_t m_paceSteps = 0;  // the first run's steps when the pace restarted
    std::chrono::steady_clock::time_point m_lastEmit, m_lastSummary, m_pausedAt;
};

}  // namespace normlab::gui

Q_DECLARE_METATYPE(normlab::gui::RunPlan)
Q_DECLARE_METATYPE(normlab::gui::WorkerState)
