// The gradient norm per block of a chosen weight matrix against block index (Xiong et al.'s Figure 3),
// now and at the first step.
#pragma once
#include <QComboBox>

#include "ui/panels/block_profile_panel.h"

namespace normlab::ui {

class BlockGradientPanel : public BlockProfilePanel {
    Q_OBJECT
  public:
    explicit BlockGradientPanel(const TelemetryStore& store, QWidget* parent = nullptr);
    PlotContent buildContent(int columns) const override;

  private:
    QComboBox* m_tensor = nullptr;
};

}  // namespace normlab::ui
