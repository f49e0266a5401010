// The residual activation norm per block against block index (with Lemma 2's band for Pre-LN and its
// 1.5 level for Post-LN in theory mode).
#pragma once
#include "ui/panels/block_profile_panel.h"

namespace normlab::ui {

class BlockResidPanel : public BlockProfilePanel {
    Q_OBJECT
  public:
    explicit BlockResidPanel(const TelemetryStore& store, QWidget* parent = nullptr);
    PlotContent buildContent(int columns) const override;
};

}  // namespace normlab::ui
