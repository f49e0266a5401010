// Attention-logit growth per block of one run over steps (the largest logit), with the RMS of the
// queries and keys that drive it on a second axis.
#pragma once
#include "ui/panels/line_panel.h"
#include "ui/panels/run_selector.h"

namespace normlab::ui {

class AttentionLogitPanel : public LinePanel {
    Q_OBJECT
  public:
    explicit AttentionLogitPanel(const TelemetryStore& store, QWidget* parent = nullptr);
    PlotContent buildContent(int columns) const override;

  private:
    RunSelector* m_runs = nullptr;
};

}  // namespace normlab::ui
