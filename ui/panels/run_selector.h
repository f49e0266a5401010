// A combo box listing the store's runs (for charts that show one run at a time: heatmaps, update
// ratios); it keeps its choice across refreshes and follows runs being added or removed.
#pragma once
#include <QComboBox>

#include "ui/history/telemetry_store.h"

namespace normlab::ui {

class RunSelector : public QComboBox {
    Q_OBJECT
  public:
    explicit RunSelector(const TelemetryStore& store, QWidget* parent = nullptr);
    // The chosen run, or the first visible one, or nullptr.
    const RunHistory* selectedRun() const;

  private:
    void repopulate();
    const TelemetryStore& m_store;
};

}  // namespace normlab::ui
