// The GUI thread's store of every run's history. It absorbs TelemetryBatches from the worker and
// announces changes; charts read it on their coalesced repaint timer (never per step).
#pragma once
#include <QObject>
#include <QTimer>
#include <map>

#include "ui/history/run_history.h"
#include "ui/history/seed_group.h"

namespace normlab::ui {

class TelemetryStore : public QObject {
    Q_OBJECT
  public:
    explicit TelemetryStore(QObject* parent = nullptr);

    // Adds (or replaces) a run; its colour is the first of a fixed palette that no other run has.
    RunHistory& addRun(int id, const QString& name, const normlab::Config& config, const QString& folder);
    // A fork's past: run `toId` takes `fromId`'s history as it stands (steps, series, events), keeping
    // its own name, colour, config and folder; both seeds of groups, `toId`'s group takes it too.
    void copyHistory(int fromId, int toId);
    // A seed group: entry `id` whose line is the mean over `members` (runs already added, which it hides
    // and keeps beside it) and whose band is their spread (spread()); its colour is chosen as addRun's.
    // `seeds` names their seeds in words (seedListText).
    RunHistory& addGroup(int id, const QString& name, const normlab::Config& config, const QString& folder,
                         const std::vector<int>& members, const QString& seeds);
    // The band every group draws: the 95% t interval of the mean (default) or one sd.
    void setSpread(Spread spread);
    Spread spread() const { return m_spread; }
    // Each seed's own line (thin, in the group's colour) beside the group's mean, or not.
    void setSeedsShown(int groupId, bool shown);
    // Run `id` starts again from nothing (its file was started again): its history and, for a group's
    // member, what the group holds of it.
    void restartRun(int id);
    // Rebuilds the groups whose members changed now (the store does so itself ~10 times a second).
    void rebuildGroups();
    void removeAll();
    void removeRun(int id);  // a group's members go with it
    // Removes the runs trained in this window, keeping opened run folders.
    void removeTrained();
    const std::map<int, RunHistory>& runs() const { return m_runs; }
    RunHistory* run(int id);
    const RunHistory* run(int id) const;
    // A run's config as it trains now (a fork's, read back from its folder); views that compare the
    // runs' configs (the Runs list) follow.
    void setConfig(int id, const normlab::Config& config);
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
    // The first palette colour no other run has.
    QColor freeColour(int id) const;
    void scheduleGroupRebuild(int groupId);
    std::map<int, RunHistory> m_runs;
    std::map<int, SeedGroupRecords> m_groups;  // by group entry id
    std::vector<int> m_dirtyGroups;
    QTimer m_groupTimer;
    Spread m_spread = Spread::Ci95;
};

}  // namespace normlab::ui
