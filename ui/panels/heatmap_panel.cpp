// HeatmapPanel content and CSV.
#include "ui/panels/heatmap_panel.h"

#include "ui/export/plot_csv.h"

namespace normlab::ui {

HeatmapPanel::HeatmapPanel(Quantity quantity, const TelemetryStore& store, QWidget* parent)
    : ChartPanel(quantity == Quantity::Gradient ? QStringLiteral("heatmap_gradient")
                                                : QStringLiteral("heatmap_resid"),
                 quantity == Quantity::Gradient ? tr("Gradient norm, block x step")
                                                : tr("Activation norm (resid), block x step"),
                 store, parent),
      m_quantity(quantity) {
    m_runs = addRunSelector();
    m_view = new HeatmapView;
    setChartWidget(m_view);
}

HeatmapContent HeatmapPanel::buildContent() const {
    HeatmapContent content;
    const RunHistory* run = m_runs->selectedRun();
    const bool gradient = m_quantity == Quantity::Gradient;
    content.title = shownTitle();
    content.xTitle = tr("step");
    content.yTitle = tr("block");
    content.colourTitle = gradient ? tr("||grad W||_F") : tr("E||h||^2 / d");
    content.emptyText = tr("Fills as the run trains");
    if (run) content.columns = gradient ? run->gradHeat.columns() : run->residHeat.columns();
    return content;
}

void HeatmapPanel::applyStyle(const ChartStyle& style) {
    m_view->setStyle(style);
}

std::unique_ptr<QWidget> HeatmapPanel::makeFigureChart(const ChartStyle& style) const {
    auto view = std::make_unique<HeatmapView>();
    view->setStyle(style);
    view->setTitleShown(true);
    view->setContent(buildContent());
    return view;
}

void HeatmapPanel::refresh() {
    m_view->setContent(buildContent());
}

QString HeatmapPanel::csv() const {
    const HeatmapContent content = buildContent();
    return csvFromHeatmap(content.title + QStringLiteral(" (") + content.colourTitle + QStringLiteral(")"),
                          content.columns, caption());
}

}  // namespace normlab::ui
