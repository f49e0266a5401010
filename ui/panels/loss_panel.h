// Loss over steps for every visible run (train solid, validation dashed with dots) with the learning
// rate on a second axis, and every live change, spike and divergence marked.
#pragma once
#include "ui/panels/line_panel.h"

namespace normlab::ui {

class LossPanel : public LinePanel {
    Q_OBJECT
  public:
    explicit LossPanel(const TelemetryStore& store, QWidget* parent = nullptr);
    PlotContent buildContent(int columns) const override;
};

}  // namespace normlab::ui
