// The optimizer's per-block state of one run over steps, each block a colour by depth: the RMS of the
// last update with Adam's gradient scale sqrt(mean v) on a second axis, or the share of coordinates
// whose sqrt(v) is below Adam's epsilon.
#pragma once
#include <QComboBox>

#include "ui/panels/line_panel.h"
#include "ui/panels/run_selector.h"

namespace normlab::ui {

class OptimizerStatePanel : public LinePanel {
    Q_OBJECT
  public:
    explicit OptimizerStatePanel(const TelemetryStore& store, QWidget* parent = nullptr);
    PlotContent buildContent(int columns) const override;

  private:
    RunSelector* m_runs = nullptr;
    QComboBox* m_quantity = nullptr;  // the update and sqrt(v), or the epsilon share
};

}  // namespace normlab::ui
