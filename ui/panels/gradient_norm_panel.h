// The gradient norms of every visible run over steps: the whole model's, the embeddings' and the
// output head's.
#pragma once
#include "ui/panels/line_panel.h"

namespace normlab::ui {

class GradientNormPanel : public LinePanel {
    Q_OBJECT
  public:
    explicit GradientNormPanel(const TelemetryStore& store, QWidget* parent = nullptr);
    PlotContent buildContent(int columns) const override;
};

}  // namespace normlab::ui
