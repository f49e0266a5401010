// The GUI thread's store of every run's history. It absorbs TelemetryBatches from the worker and
// announces changes; charts read it on their coalesced repaint timer (never per step).
#pragma once
#include <QObject>
#include <map>

#include "ui/history/run_history.h"

namespace normlab::ui {

class TelemetryStore : public QObject {
    Q_OBJECT
  public:
    using QObject::QObject;

    // Adds (or replaces) a run; its colour is the first of a fixed palette that no other run has.
    RunHistory& addRun(int id, const QString& name, const normlab::Config& config, const QString& folder);
    // A fork's past: run `toId` takes `fromId`'s history as it stands (steps, series, events), keeping
    // its own name, colour, config and folder.
    void copyHistory(int fromId, int toId);
    void removeAll();
    void removeRun(int id);
    // Removes the runs trained in this window, keeping opened run folders.
    void removeTrained();
    const std::map<int, RunHistory>& runs() const { return m_runs; }
    RunHistory* run(int id);
    void setVisible(int id, bool visible);
    // The engine thread paused or resumed (the status text of every run trained here follows; opened
    // and replayed runs keep their own).
    void setPaused(bool paused);
    // One run paused or not (a replay's runs, which the replay pauses, not the engine thread).
    void setRunPaused(int id, bool paused);
    void rename(int id, const QString& name);
    // The largest step over visible runs (the time axes' extent).
    int64_t lastStep() const;

    static QColor paletteColour(int index);

  public slots:
    void absorb(const normlab::ui::TelemetryBatch& batch);

  signals:
    void runsChanged();  // runs added, removed, or visibility toggled
    void dataChanged();  // new telemetry

  private:
    std::map<int, RunHistory> m_runs;
};

}  // namespace normlab::ui
