// Emulated mixed precision of one run over steps (train.precision; docs/precision.md): per block, each a
// colour by depth, the shares of its gradients (solid) and activations (dashed) that underflowed or
// overflowed, or its residual stream's headroom in doublings; or the run's loss scale.
#pragma once
#include <QComboBox>

#include "ui/panels/line_panel.h"
#include "ui/panels/run_selector.h"

namespace normlab::ui {

class PrecisionPanel : public LinePanel {
    Q_OBJECT
  public:
    explicit PrecisionPanel(const TelemetryStore& store, QWidget* parent = nullptr);
    PlotContent buildContent(int columns) const override;

  private:
    enum Show { kUnderflow, kOverflow, kHeadroom, kLossScale };
    void addPair(PlotContent& content, const RunHistory& run, PrecisionQuantity gradients,
                 PrecisionQuantity activations, int columns) const;

    RunSelector* m_runs = nullptr;
    QComboBox* m_quantity = nullptr;  // a Show
};

}  // namespace normlab::ui
