// A combo box listing the store's runs (for charts that show one run at a time: heatmaps, update
// ratios); it keeps its choice across refreshes and follows runs being added or removed.
#pragma once
#include <QComboBox>
#include <functional>

#include "ui/history/telemetry_store.h"

namespace normlab::ui {

class RunSelector : public QComboBox {
    Q_OBJECT
  public:
    // Until a run is chosen, it shows the visible run of rank `rank` (0: the first; the last visible one
    // when there are fewer), following runs as they are added.
    explicit RunSelector(const TelemetryStore& store, int rank = 0, QWidget* parent = nullptr);
    // The chosen run, or the visible run of its rank, or nullptr.
    const RunHistory* selectedRun() const;
    // Until a run is chosen, rank among the visible runs `prefers` accepts when there is one (the
    // precision chart: runs that record precision), else among all of them.
    void setPreference(std::function<bool(const RunHistory&)> prefers);

  private:
    void repopulate();
    void nameInToolTip();  // the chosen run's whole name as the tooltip
    // The id of the visible run of rank m_rank (the last visible one when fewer; among the preferred
    // ones when any is), or -1.
    int rankedRun() const;
    const TelemetryStore& m_store;
    int m_rank = 0;
    bool m_chosen = false;  // a run was picked (by the user, or set by code), not worked out
    std::function<bool(const RunHistory&)> m_prefers;
};

}  // namespace normlab::ui
