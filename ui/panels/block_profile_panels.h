// Per-block profiles against block index, now and at the first step (faint): the gradient norm of a
// chosen weight matrix (Xiong et al.'s Figure 3) and the residual activation norm `resid` (with
// Lemma 2's band for Pre-LN and its 1.5 level for Post-LN in theory mode). Log value axes.
#pragma once
#include <QComboBox>

#include "ui/panels/line_panel.h"

namespace normlab::ui {

class BlockGradientPanel : public LinePanel {
    Q_OBJECT
  public:
    explicit BlockGradientPanel(const TelemetryStore& store, QWidget* parent = nullptr);
    PlotContent buildContent(int columns) const override;
    void setTensor(GradientTensor tensor);

  private:
    QComboBox* m_tensor = nullptr;
};

class BlockResidPanel : public LinePanel {
    Q_OBJECT
  public:
    explicit BlockResidPanel(const TelemetryStore& store, QWidget* parent = nullptr);
    PlotContent buildContent(int columns) const override;
};

}  // namespace normlab::ui
