// Recorded runs played back in the window as if training (normlab --replay, File > Replay): each
// folder's records are read once, then revealed step by step at a chosen speed, with pause, single
// steps and a lesson's pause point, so a lesson too slow for the machine can be shown in class.
#pragma once
#include <QElapsedTimer>
#include <QObject>
#include <QStringList>
#include <QTimer>
#include <optional>
#include <vector>

#include "engine/train/telemetry.h"
#include "ui/history/telemetry_store.h"

namespace normlab::gui {

class RunReplay : public QObject {
    Q_OBJECT
  public:
    static constexpr int kFirstReplayId = 5000;  // trained runs use 0, 1, ...; opened ones 1000, ...
    static constexpr double kDefaultSpeed = 10.0;
    static constexpr double kFullSpeed = 200.0;  // the toolbar's "full speed"

    explicit RunReplay(ui::TelemetryStore& store, QObject* parent = nullptr);

    // Reads the folders (each a run folder, or a folder of them) and adds each as a replayed run at
    // step 0, paused. Returns one problem per folder that cannot be replayed; the rest load regardless.
    QStringList load(const QStringList& folders);
    // Removes the replayed runs from the store.
    void clear();
    bool active() const { return !m_runs.empty(); }
    // Steps a second of every run (> 0); the position keeps going from where it is.
    void setSpeed(double stepsPerSecond);
    double speed() const { return m_speed; }
    void play();
    void pause();
    void stepOnce();  // paused: one more step of every run
    bool playing() const { return m_timer.isActive(); }
    bool finished() const;
    int64_t step() const { return m_shown; }
    // Playing pauses once on reaching `step` (a lesson's pause point), emitting pausePoint.
    void setPausePoint(int64_t step, const QString& text);
    // The folders' names (their runs' names), to match them with a lesson's presets.
    QStringList runNames() const;

  signals:
    void stateChanged();  // playing, paused, or finished
    void stepShown();     // the charts have the records up to step() now
    void pausePoint(const QString& text);

  private:
    struct Recorded {
        int id = -1;
        std::vector<normlab::StepRecord> records;
        std::vector<normlab::Event> events;
        size_t nextRecord = 0, nextEvent = 0;
        normlab::RunStatus endStatus = normlab::RunStatus::Completed;
        int64_t divergedAt = -1;
        int firstBadLayer = -1;
    };
    QString loadOne(const QString& folder);
    void tick();
    void revealUpTo(int64_t step);  // every run's records and events up to `step` into the store
    void markPaused(bool paused);   // the runs' status text ("replay, paused") follows the replay
    int64_t lastStep() const;

    ui::TelemetryStore& m_store;
    std::vector<Recorded> m_runs;
    QTimer m_timer;
    QElapsedTimer m_clock;
    double m_speed = kDefaultSpeed;
    double m_position = 0.0;  // fractional step of the replay clock
    int64_t m_shown = 0;      // the last step revealed
    std::optional<std::pair<int64_t, QString>> m_pausePoint;
    int m_nextId = kFirstReplayId;
};

}  // namespace normlab::gui
