// Block x step heatmap of one run (chosen in the header): the total gradient norm of each block's
// matrices, or its residual activation norm `resid`, on a log colour scale.
#pragma once
#include "ui/panels/chart_panel.h"
#include "ui/panels/run_selector.h"
#include "ui/plots/heatmap_view.h"

namespace normlab::ui {

class HeatmapPanel : public ChartPanel {
    Q_OBJECT
  public:
    enum class Quantity { Gradient, Resid };
    HeatmapPanel(Quantity quantity, const TelemetryStore& store, QWidget* parent = nullptr);

    void refresh() override;
    QString csv() const override;
    std::unique_ptr<QWidget> makeFigureChart(const ChartStyle& style) const override;
    HeatmapView& view() const { return *m_view; }

  protected:
    void applyStyle(const ChartStyle& style) override;

  private:
    HeatmapContent buildContent() const;

    Quantity m_quantity;
    RunSelector* m_runs = nullptr;
    HeatmapView* m_view = nullptr;
};

}  // namespace normlab::ui
