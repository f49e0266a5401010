// The residual stream's branches per block over steps: each sub-layer's contribution share
// ||a F(x)|| / ||x||, its branch as added against the stream it is added to (the PreNorm dilution:
// Pre-LN's deep blocks add a shrinking share), attention or FFN, each block a colour by depth.
#pragma once
#include <QComboBox>

#include "ui/panels/line_panel.h"
#include "ui/panels/run_selector.h"

namespace normlab::ui {

class BranchSharePanel : public LinePanel {
    Q_OBJECT
  public:
    explicit BranchSharePanel(const TelemetryStore& store, QWidget* parent = nullptr);
    PlotContent buildContent(int columns) const override;

  private:
    RunSelector* m_runs = nullptr;
    QComboBox* m_sublayer = nullptr;  // attention or FFN
};

}  // namespace normlab::ui
