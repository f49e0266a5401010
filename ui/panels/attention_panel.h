// Attention health of every visible run over steps: the mean entropy over blocks, and the largest
// logit dashed on a second axis.
#pragma once
#include "ui/panels/line_panel.h"

namespace normlab::ui {

class AttentionPanel : public LinePanel {
    Q_OBJECT
  public:
    explicit AttentionPanel(const TelemetryStore& store, QWidget* parent = nullptr);
    PlotContent buildContent(int columns) const override;
};

}  // namespace normlab::ui
