// Run > Fork points...: how often each run trained in the window keeps its state in memory for forks
// at an earlier step, how many and within what memory; kept in the settings (forkPoints/...) and read
// back at start (forkPointSettings).
#pragma once
#include <QDialog>

#include "engine/io/snapshot_ring.h"

class QSpinBox;

namespace normlab::gui {

// The saved settings, or SnapshotSettings' defaults.
normlab::SnapshotSettings forkPointSettings();
void saveForkPointSettings(const normlab::SnapshotSettings& settings);

class ForkPointsDialog : public QDialog {
    Q_OBJECT
  public:
    ForkPointsDialog(const normlab::SnapshotSettings& settings, QWidget* parent = nullptr);
    normlab::SnapshotSettings settings() const;

  private:
    QSpinBox* m_every = nullptr;
    QSpinBox* m_keep = nullptr;
    QSpinBox* m_megabytes = nullptr;
};

}  // namespace normlab::gui
