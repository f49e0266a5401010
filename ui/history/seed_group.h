// A seed group in the window: every run of the group is a hidden member in the TelemetryStore, and the
// group's own entry is rebuilt from the members' records: at each logged step the mean record over the
// members that logged it (engine/analysis/record_mean.h) and the band of their losses.
#pragma once
#include <map>
#include <vector>

#include "ui/history/run_history.h"

namespace normlab::ui {

class SeedGroupRecords {
  public:
    // Keeps a member's new records and events (in the order they arrive).
    void absorb(const RunUpdate& update);
    // The member's file started again (or it was reopened): what it sent so far is dropped.
    void restart(int memberId);
    // Member `to` starts with what member `from` of `source` sent so far (a fork of a group's seed).
    void copyMember(const SeedGroupRecords& source, int from, int to);
    // `group`'s history again from scratch: the mean of each logged step and its band in
    // `group.bands` (whose members and spread it reads), with the members' statuses from `runs`.
    void rebuild(RunHistory& group, const std::map<int, RunHistory>& runs) const;

  private:
    // The members' events, one for an event every member had, else each naming its member.
    std::vector<normlab::Event> mergedEvents(const std::vector<const RunHistory*>& members) const;
    std::map<int, std::vector<normlab::StepRecord>> m_records;  // by member id, in step order
    std::map<int, std::vector<normlab::Event>> m_events;
};

}  // namespace normlab::ui
