// TrainingWorker: run construction, the stepping loop (time-sliced ticks that return to the event
// loop so control slots run between steps), run-folder writing and coalesced telemetry emission.
#include "app/gui/training_worker.h"

#include <QCoreApplication>
#include <QThread>
#include <QTimer>
#include <algorithm>
#include <array>
#include <exception>
#include <optional>
#include <utility>

#include "engine/core/atomic_file.h"
#include "engine/core/errors.h"
#include "engine/io/checkpoint.h"
#include "engine/io/periodic_checkpoint.h"
#include "engine/io/provenance.h"
#include "engine/io/records_json.h"
#include "engine/io/run_checkpoints.h"
#include "engine/io/run_folder.h"
#include "engine/io/snapshot_ring.h"
#include "engine/train/trainer.h"

namespace normlab::gui {

struct TrainingWorker::Session {
    RunSpec spec;
    std::unique_ptr<normlab::Trainer> trainer;
    std::unique_ptr<normlab::RunFolder> folder;
    std::optional<normlab::PeriodicCheckpoint> checkpoints;  // train.checkpoint_every, into the folder
    normlab::SnapshotRing forkPoints;                        // its state every N steps, in memory
    std::chrono::steady_clock::time_point started;
    ui::RunUpdate pending;
    bool finalised = false;
    double pausedSeconds = 0.0;  // excluded from the summary's steps/s
};

namespace {
// How long one tick steps before returning to the event loop.
constexpr auto kTickBudget = std::chrono::milliseconds(15);
// How often summary.json is rewritten while a run trains (so a crash leaves it current).
constexpr auto kSummaryInterval = std::chrono::seconds(2);

double secondsSince(std::chrono::steady_clock::time_point since) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

}  // namespace

QString workerStateName(WorkerState state) {
    static const std::array<std::pair<WorkerState, const char*>, 4> names{{
        {WorkerState::Idle, QT_TR_NOOP("idle")},
        {WorkerState::Running, QT_TR_NOOP("running")},
        {WorkerState::Paused, QT_TR_NOOP("paused")},
        {WorkerState::Finished, QT_TR_NOOP("finished")},
    }};
    for (const auto& [each, name] : names)
        if (each == state) return QObject::tr(name);
    return QObject::tr("idle");
}

TrainingWorker::TrainingWorker(QObject* parent) : QObject(parent) {
    qRegisterMetaType<normlab::ui::TelemetryBatch>();
    qRegisterMetaType<normlab::gui::RunPlan>();
    qRegisterMetaType<normlab::gui::WorkerState>();
}

TrainingWorker::~TrainingWorker() {
    finaliseAll();
}

std::unique_ptr<TrainingWorker::Session> TrainingWorker::makeSession(const RunSpec& spec) {
    auto session = std::make_unique<Session>();
    session->spec = spec;
    session->trainer = std::make_unique<normlab::Trainer>(spec.config);
    for (const normlab::LiveChange& change : spec.changes) session->trainer->post(change);
    return session;
}

void TrainingWorker::openFolder(Session& session, const std::optional<normlab::ResumedFrom>& fork) {
    const std::string path = session.spec.folder.toStdString();
    const normlab::Config& config = session.trainer->config();
    session.folder = fork ? std::make_unique<normlab::RunFolder>(
                                path, config, normlab::RunFolder::ForkOf{fork->fork_of, fork->step}, false)
                          : std::make_unique<normlab::RunFolder>(path, config, false);
    normlab::write_run_provenance(*session.folder, *session.trainer,
                                  normlab::provenance_json(*session.trainer, fork));
    session.checkpoints.emplace(
        normlab::PeriodicCheckpoint::for_run(session.folder->path(), session.trainer->config()));
}

void TrainingWorker::announce(Session& session) {
    session.forkPoints.set_settings(m_forkPointSettings);
    session.started = std::chrono::steady_clock::now();
    session.pending.runId = session.spec.id;
    emit deviceInUse(session.spec.id, QString::fromStdString(session.trainer->backend().name()),
                     QString::fromStdString(session.trainer->device_reason()));
}

void TrainingWorker::dropSessions() {
    finaliseAll();
    m_sessions.clear();
    m_stopRequested.store(false);
}

void TrainingWorker::startClocks() {
    m_lastEmit = m_lastSummary = m_pausedAt = std::chrono::steady_clock::now();
    restartPace();
}

void TrainingWorker::join(std::unique_ptr<Session> session) {
    announce(*session);
    // Paused now: the pause so far is not this run's (activeSeconds counts from its start).
    if (m_state == WorkerState::Paused) session->pausedSeconds = -secondsSince(m_pausedAt);
    m_sessions.push_back(std::move(session));
}

std::unique_ptr<TrainingWorker::Session> TrainingWorker::sessionFrom(const RunSpec& spec,
                                                                     const normlab::ResumedFrom& origin) {
    auto session = std::make_unique<Session>();
    session->spec = spec;
    session->trainer = normlab::load_checkpoint(origin.checkpoint, {});
    session->spec.config = session->trainer->config();
    for (const normlab::LiveChange& change : spec.changes) session->trainer->post(change);
    openFolder(*session, origin);
    return session;
}

void TrainingWorker::start(const RunPlan& plan, bool paused) {
    dropSessions();
    std::vector<std::unique_ptr<Session>> sessions;
    try {
        for (const RunSpec& spec : plan.runs) sessions.push_back(makeSession(spec));
        // Folders only once every run is valid, so bad input leaves nothing behind.
        for (auto& session : sessions) openFolder(*session);
    } catch (const std::exception& error) {
        emit failed(QString::fromStdString(error.what()));
        setState(WorkerState::Idle);
        return;
    }
    m_sessions = std::move(sessions);
    m_pauseAtStep = plan.pauseAtStep;
    for (auto& session : m_sessions) announce(*session);
    startClocks();
    setState(paused ? WorkerState::Paused : WorkerState::Running);
    if (!paused) scheduleTick();
}

void TrainingWorker::addRun(const RunSpec& spec) {
    if (m_state != WorkerState::Running && m_state != WorkerState::Paused) {
        emit runRefused(spec.id, tr("%1 was not added: no runs are training").arg(spec.name));
        return;
    }
    try {
        std::unique_ptr<Session> session = makeSession(spec);
        openFolder(*session);
        join(std::move(session));
    } catch (const std::exception& error) {
        emit runRefused(spec.id,
                        QStringLiteral("%1: %2").arg(spec.name, QString::fromStdString(error.what())));
        return;
    }
    flush(true);  // the new run appears at step 0 at once
}

void TrainingWorker::forkRun(int parentId, const RunSpec& spec) {
    const auto parent = std::find_if(m_sessions.begin(), m_sessions.end(), [parentId](const auto& session) {
        return session->spec.id == parentId;
    });
    if (parent == m_sessions.end() || (*parent)->finalised || (*parent)->trainer->finished()) {
        emit runRefused(
            spec.id, tr("%1 was not made: only a run that is still training can be forked").arg(spec.name));
        return;
    }
    try {
        // The parent's state now, kept in its folder under its step's name (a fork point on disk too).
        const normlab::Trainer& from = *(*parent)->trainer;
        const normlab::ResumedFrom origin{
            normlab::kept_checkpoint_path((*parent)->folder->path(), from.steps_done()), from.steps_done(),
            (*parent)->folder->path()};
        normlab::save_checkpoint(*(*parent)->trainer, origin.checkpoint);
        std::unique_ptr<Session> session = sessionFrom(spec, origin);
        flush(true);  // the parent's steps up to the fork reach the GUI before the fork does
        join(std::move(session));
        emit forked(spec.id, parentId, origin.step);
    } catch (const std::exception& error) {
        emit runRefused(spec.id,
                        QStringLiteral("%1: %2").arg(spec.name, QString::fromStdString(error.what())));
        return;
    }
    flush(true);
}

void TrainingWorker::forgetRuns() {
    if (m_state == WorkerState::Running || m_state == WorkerState::Paused) return;  // stop() comes first
    dropSessions();
}

void TrainingWorker::setForkPoints(const normlab::SnapshotSettings& settings) {
    m_forkPointSettings = settings;
    for (auto& session : m_sessions) session->forkPoints.set_settings(settings);
    flush(true);  // the kept points' steps and memory, now
}

void TrainingWorker::forkRunAt(int parentId, const QString& parentFolder, const RunSpec& spec, qint64 step) {
    // The parent by id and folder: a run kept from an experiment since replaced has the same id.
    const auto parent =
        std::find_if(m_sessions.begin(), m_sessions.end(), [parentId, &parentFolder](const auto& session) {
            return session->spec.id == parentId &&
                   QString::fromStdString(session->folder->path()) == parentFolder;
        });
    try {
        // The newest fork point at or before the step: kept in memory, else a checkpoint the run's
        // folder keeps (a fork point written out by an earlier fork, or train.checkpoint_keep's).
        std::optional<normlab::ResumedFrom> origin;
        const std::string folder = parentFolder.toStdString();
        if (parent != m_sessions.end()) {
            if (const auto point = (*parent)->forkPoints.at_or_before(step)) {
                origin = normlab::ResumedFrom{normlab::kept_checkpoint_path(folder, point->step), point->step,
                                              folder};
                normlab::write_file_atomically(origin->checkpoint, *point->bytes);
            }
        }
        for (const auto& [kept, file] : normlab::checkpoints_in_folder(folder))
            if (kept <= step && (!origin || kept > origin->step))
                origin = normlab::ResumedFrom{file, kept, folder};
        if (!origin)
            throw normlab::InputError(tr("no fork point at or before step %1 (the run keeps its state every "
                                         "%2 steps, the newest %3 within %4 MB, and a state larger than that "
                                         "is not kept; Run > Fork points sets them)")
                                          .arg(step)
                                          .arg(m_forkPointSettings.every)
                                          .arg(m_forkPointSettings.keep)
                                          .arg(m_forkPointSettings.max_bytes >> 20)
                                          .toStdString());
        forkFromCheckpoint(parentId, spec, *origin);
    } catch (const std::exception& error) {
        emit runRefused(spec.id,
                        QStringLiteral("%1: %2").arg(spec.name, QString::fromStdString(error.what())));
    }
}

void TrainingWorker::forkFromCheckpoint(int parentId, const RunSpec& spec,
                                        const normlab::ResumedFrom& origin) {
    const bool idle = m_state != WorkerState::Running && m_state != WorkerState::Paused;
    try {
        std::unique_ptr<Session> session = sessionFrom(spec, origin);
        if (idle) {  // nothing trains: the fork starts on its own, paused, so the change comes first
            // The ended runs stay (finalised, never stepped again): their fork points can be forked
            // from again.
            m_stopRequested.store(false);
            m_pauseAtStep = 0;
            startClocks();
        }
        join(std::move(session));
        emit forked(spec.id, parentId, origin.step);
        if (idle) setState(WorkerState::Paused);
    } catch (const std::exception& error) {
        emit runRefused(spec.id,
                        QStringLiteral("%1: %2").arg(spec.name, QString::fromStdString(error.what())));
        return;
    }
    flush(true);
}

void TrainingWorker::pause() {
    if (m_state != WorkerState::Running) return;
    m_pausedAt = std::chrono::steady_clock::now();
    flush(true);  // the steps taken so far reach the GUI before it hears of the pause
    setState(WorkerState::Paused);
}

void TrainingWorker::resume() {
    if (m_state != WorkerState::Paused) return;
    for (auto& session : m_sessions) session->pausedSeconds += secondsSince(m_pausedAt);
    restartPace();
    setState(WorkerState::Running);
    scheduleTick();
}

void TrainingWorker::stepOnce() {
    if (m_state != WorkerState::Paused) return;
    stepAll();
    if (allFinished()) {
        finaliseAll();
        setState(WorkerState::Finished);
    }
    flush(true);
}

void TrainingWorker::stop() {
    m_stopRequested.store(true);
    if (m_state == WorkerState::Running || m_state == WorkerState::Paused) {
        finaliseAll();
        flush(true);
        setState(WorkerState::Finished);
    }
}

void TrainingWorker::shutdown() {
    stop();
    m_sessions.clear();
    if (QThread* thread = QThread::currentThread(); thread != QCoreApplication::instance()->thread())
        thread->quit();
}

void TrainingWorker::postChange(int runId, const QString& key, const QString& value) {
    for (auto& session : m_sessions) {
        if (session->finalised || (runId >= 0 && session->spec.id != runId)) continue;
        normlab::LiveChange change;
        change.key = key.toStdString();
        change.value = value.toStdString();
        session->trainer->post(std::move(change));
    }
}

void TrainingWorker::scheduleTick(int delayMs) {
    if (m_tickScheduled) return;
    m_tickScheduled = true;
    QTimer::singleShot(delayMs, this, &TrainingWorker::tick);
}

void TrainingWorker::setSpeedLimit(double stepsPerSecond) {
    m_speedLimit = stepsPerSecond > 0.0 ? stepsPerSecond : 0.0;
    restartPace();
}

const TrainingWorker::Session* TrainingWorker::pacer() const {
    for (const auto& session : m_sessions)
        if (!session->finalised) return session.get();
    return m_sessions.empty() ? nullptr : m_sessions.front().get();
}

void TrainingWorker::restartPace() {
    m_paceStart = std::chrono::steady_clock::now();
    m_paceSteps = pacer() ? pacer()->trainer->steps_done() : 0;
}

bool TrainingWorker::aheadOfPace() const {
    if (m_speedLimit <= 0.0 || !pacer()) return false;
    const int64_t taken = pacer()->trainer->steps_done() - m_paceSteps;
    return static_cast<double>(taken) >= secondsSince(m_paceStart) * m_speedLimit;
}

void TrainingWorker::tick() {
    m_tickScheduled = false;
    if (m_state != WorkerState::Running) return;
    const auto began = std::chrono::steady_clock::now();
    while (!m_stopRequested.load() && !allFinished() && !pausePointReached() && !aheadOfPace() &&
           std::chrono::steady_clock::now() - began < kTickBudget)
        stepAll();
    if (m_stopRequested.load() || allFinished()) {
        finaliseAll();
        flush(true);
        setState(WorkerState::Finished);
        return;
    }
    if (pausePointReached()) {
        m_pauseAtStep = 0;  // once: Resume goes on from here
        pause();
        return;
    }
    flush(false);
    // Under a speed limit, the next step is due in 1 / limit seconds (the event loop stays free).
    scheduleTick(aheadOfPace() ? std::clamp(static_cast<int>(1000.0 / m_speedLimit), 1, 1000) : 0);
}

bool TrainingWorker::pausePointReached() const {
    return m_pauseAtStep > 0 && !m_sessions.empty() &&
           m_sessions.front()->trainer->steps_done() >= m_pauseAtStep;
}

void TrainingWorker::stepAll() {
    for (auto& session : m_sessions) {
        if (session->finalised || m_stopRequested.load()) continue;
        normlab::Trainer& trainer = *session->trainer;
        try {
            const normlab::StepOutcome& outcome = trainer.step();  // valid until the next step
            m_stepsTaken.fetch_add(1);
            session->folder->append_metrics(outcome.record);  // every step, as the CLI writes it
            for (const normlab::Event& event : outcome.events) session->folder->append_event(event);
            if (session->checkpoints->after_step(trainer)) writeSummary(*session);  // names its step
            session->forkPoints.after_step(trainer);
            reportChanges(*session, outcome.events);
            session->pending.records.push_back(outcome.record);
            session->pending.events.insert(session->pending.events.end(), outcome.events.begin(),
                                           outcome.events.end());
            if (trainer.finished()) finalise(*session);
        } catch (const std::exception& error) {
            finalise(*session, QString::fromStdString(error.what()));
            emit failed(
                QStringLiteral("%1: %2").arg(session->spec.name, QString::fromStdString(error.what())));
        }
    }
}

void TrainingWorker::reportChanges(const Session& session, const std::vector<normlab::Event>& events) {
    for (const normlab::Event& event : events) {
        if (event.kind == "rejected_change") {
            emit changeRejected(session.spec.id, QString::fromStdString(event.key),
                                QString::fromStdString(event.message));
        } else if (event.kind == "change" && (event.key == "device" || event.key == "threads")) {
            emit deviceInUse(session.spec.id, QString::fromStdString(session.trainer->backend().name()),
                             QString::fromStdString(session.trainer->device_reason()));
        }
    }
}

void TrainingWorker::finalise(Session& session, const QString& error) {
    if (session.finalised) return;
    session.finalised = true;
    normlab::Trainer& trainer = *session.trainer;
    if (trainer.status() == normlab::RunStatus::Running) {
        if (trainer.steps_done() >= trainer.config().train.steps) {
            trainer.mark_completed();
        } else {
            trainer.mark_stopped();
            const normlab::Event stopped{trainer.steps_done(),
                                         "stopped",
                                         error.isEmpty() ? "stopped from the window" : error.toStdString(),
                                         "",
                                         "",
                                         -1};
            session.pending.events.push_back(stopped);
            if (session.folder) session.folder->append_event(stopped);
        }
    }
    writeSummary(session, error);
}

double TrainingWorker::activeSeconds(const Session& session) const {
    const double paused =
        session.pausedSeconds + (m_state == WorkerState::Paused ? secondsSince(m_pausedAt) : 0.0);
    return std::max(secondsSince(session.started) - paused, 1e-9);
}

void TrainingWorker::writeSummary(Session& session, const QString& error) {
    if (!session.folder) return;
    nlohmann::json summary = normlab::summary_json(*session.trainer, activeSeconds(session));
    if (session.checkpoints) session.checkpoints->annotate(summary);
    if (!error.isEmpty()) {
        summary["status"] = "failed";
        summary["error"] = error.toStdString();
    }
    try {
        session.folder->write_summary(summary);
    } catch (const std::exception& failure) {
        emit failed(QString::fromStdString(failure.what()));
    }
}

void TrainingWorker::finaliseAll() {
    for (auto& session : m_sessions) finalise(*session);
}

bool TrainingWorker::allFinished() const {
    for (const auto& session : m_sessions)
        if (!session->finalised) return false;
    return true;
}

void TrainingWorker::flush(bool force) {
    const auto now = std::chrono::steady_clock::now();
    if (!force && now - m_lastEmit < std::chrono::milliseconds(kEmitIntervalMs)) return;
    m_lastEmit = now;
    if (now - m_lastSummary >= kSummaryInterval) {
        m_lastSummary = now;
        for (auto& session : m_sessions)
            if (!session->finalised) writeSummary(*session);
    }
    ui::TelemetryBatch batch;
    batch.experiment = m_experiment;
    for (auto& session : m_sessions) {
        const normlab::Trainer& trainer = *session->trainer;
        ui::RunUpdate update = std::move(session->pending);
        session->pending = {};
        session->pending.runId = session->spec.id;
        update.runId = session->spec.id;
        update.status = trainer.status();
        update.step = trainer.steps_done();
        update.stepsPerSecond = trainer.steps_per_second();
        update.divergedAt = trainer.diverged_at();
        update.firstBadLayer = trainer.first_bad_layer();
        update.forkPoints = session->forkPoints.steps();
        update.forkPointBytes = session->forkPoints.bytes();
        batch.runs.push_back(std::move(update));
    }
    if (!batch.runs.empty()) emit telemetry(batch);
}

void TrainingWorker::setState(WorkerState state) {
    if (m_state == state) return;
    m_state = state;
    emit stateChanged(state);
}

}  // namespace normlab::gui
