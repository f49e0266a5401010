// The output logits' drift of every visible run over steps: the mean log Z, and the mean logit
// dashed.
#pragma once
#include "ui/panels/line_panel.h"

namespace normlab::ui {

class OutputLogitPanel : public LinePanel {
    Q_OBJECT
  public:
    explicit OutputLogitPanel(const TelemetryStore& store, QWidget* parent = nullptr);
    PlotContent buildContent(int columns) const override;
};

}  // namespace normlab::ui
