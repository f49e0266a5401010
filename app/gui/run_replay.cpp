// Playback of recorded run folders (run_replay.h).
#include "app/gui/run_replay.h"

#include <QDir>
#include <QFileInfo>
#include <algorithm>
#include <cmath>

#include "engine/core/errors.h"
#include "engine/io/run_folder_reader.h"

namespace normlab::gui {

RunReplay::RunReplay(ui::TelemetryStore& store, QObject* parent) : QObject(parent), m_store(store) {
    m_timer.setInterval(33);  // the dashboard redraws at most this often anyway
    connect(&m_timer, &QTimer::timeout, this, &RunReplay::tick);
}

QStringList RunReplay::load(const QStringList& folders) {
    QStringList problems;
    for (const QString& folder : folders) {
        std::vector<std::string> runs;
        try {
            runs = normlab::find_run_folders(QDir(folder).absolutePath().toStdString());
        } catch (const normlab::InputError& error) {
            problems << QString::fromStdString(error.what());
            continue;
        }
        for (const std::string& run : runs)
            if (const QString problem = loadOne(QString::fromStdString(run)); !problem.isEmpty())
                problems << problem;
    }
    return problems;
}

QString RunReplay::loadOne(const QString& folder) {
    try {
        normlab::RunFolderReader reader(folder.toStdString());
        Recorded recorded;
        // The whole backlog, in the reader's bounded chunks.
        for (normlab::RunFolderReader::Update update = reader.poll();; update = reader.poll()) {
            std::move(update.records.begin(), update.records.end(), std::back_inserter(recorded.records));
            std::move(update.events.begin(), update.events.end(), std::back_inserter(recorded.events));
            if (!update.more) break;
        }
        if (recorded.records.empty()) return tr("%1: no steps recorded to replay").arg(folder);
        if (const auto summary = reader.summary()) {
            recorded.endStatus = normlab::status_from_summary(summary->status);
            if (recorded.endStatus == normlab::RunStatus::Running)
                recorded.endStatus = normlab::RunStatus::Stopped;
            recorded.divergedAt = summary->diverged_at.value_or(-1);
            recorded.firstBadLayer = summary->first_bad_layer;
        }
        recorded.id = m_nextId++;
        ui::RunHistory& run =
            m_store.addRun(recorded.id, QFileInfo(folder).fileName(), reader.config(), folder);
        run.source = tr("replay");
        run.knownKeys = reader.knownKeys();
        m_runs.push_back(std::move(recorded));
        return {};
    } catch (const normlab::InputError& error) {
        return QString::fromStdString(error.what());
    }
}

void RunReplay::clear() {
    pause();
    for (const Recorded& run : m_runs) m_store.removeRun(run.id);
    m_runs.clear();
    m_position = 0.0;
    m_shown = 0;
    m_pausePoint.reset();
}

void RunReplay::setSpeed(double stepsPerSecond) {
    if (stepsPerSecond > 0.0 && std::isfinite(stepsPerSecond)) m_speed = stepsPerSecond;
}

void RunReplay::play() {
    if (!active() || finished() || playing()) return;
    m_clock.start();
    m_timer.start();
    markPaused(false);
    emit stateChanged();
}

void RunReplay::pause() {
    if (!playing()) return;
    m_timer.stop();
    markPaused(true);
    emit stateChanged();
}

void RunReplay::markPaused(bool paused) {
    for (const Recorded& run : m_runs) m_store.setRunPaused(run.id, paused);
}

void RunReplay::stepOnce() {
    if (playing() || finished()) return;
    m_position = static_cast<double>(m_shown + 1);
    revealUpTo(m_shown + 1);
}

bool RunReplay::finished() const {
    return active() && m_shown >= lastStep();
}

void RunReplay::setPausePoint(int64_t step, const QString& text) {
    m_pausePoint = std::pair{step, text};
}

QStringList RunReplay::runNames() const {
    QStringList names;
    for (const Recorded& run : m_runs)
        if (const ui::RunHistory* history = m_store.run(run.id))
            names << QFileInfo(history->folder).fileName();
    return names;
}

int64_t RunReplay::lastStep() const {
    int64_t last = 0;
    for (const Recorded& run : m_runs) last = std::max(last, run.records.back().step);
    return last;
}

void RunReplay::tick() {
    m_position += m_clock.restart() / 1000.0 * m_speed;
    int64_t target = std::min(static_cast<int64_t>(std::floor(m_position)), lastStep());
    const bool atPause = m_pausePoint && m_shown < m_pausePoint->first && target >= m_pausePoint->first;
    if (atPause) target = m_pausePoint->first;
    if (target > m_shown) revealUpTo(target);
    if (atPause) {
        m_position = static_cast<double>(target);
        pause();
        emit pausePoint(m_pausePoint->second);
    } else if (finished()) {
        m_timer.stop();
        emit stateChanged();
    }
}

void RunReplay::revealUpTo(int64_t step) {
    ui::TelemetryBatch batch;
    for (Recorded& run : m_runs) {
        ui::RunUpdate update;
        update.runId = run.id;
        while (run.nextRecord < run.records.size() && run.records[run.nextRecord].step <= step)
            update.records.push_back(run.records[run.nextRecord++]);
        while (run.nextEvent < run.events.size() && run.events[run.nextEvent].step <= step)
            update.events.push_back(run.events[run.nextEvent++]);
        const bool done = run.nextRecord == run.records.size();
        update.step = run.nextRecord == 0 ? 0 : run.records[run.nextRecord - 1].step;
        update.stepsPerSecond = m_speed;
        update.status = done ? run.endStatus : normlab::RunStatus::Running;
        if (done) update.divergedAt = run.divergedAt, update.firstBadLayer = run.firstBadLayer;
        batch.runs.push_back(std::move(update));
    }
    m_shown = step;
    m_store.absorb(batch);
    emit stepShown();
}

}  // namespace normlab::gui
