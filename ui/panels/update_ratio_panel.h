// The update/parameter ratio ||update||/||W|| per block of one run over steps, each block a colour by
// depth.
#pragma once
#include "ui/panels/line_panel.h"
#include "ui/panels/run_selector.h"

namespace normlab::ui {

class UpdateRatioPanel : public LinePanel {
    Q_OBJECT
  public:
    explicit UpdateRatioPanel(const TelemetryStore& store, QWidget* parent = nullptr);
    PlotContent buildContent(int columns) const override;

  private:
    RunSelector* m_runs = nullptr;
};

}  // namespace normlab::ui
