// LinePanel: refresh and CSV through buildContent().
#include "ui/panels/line_panel.h"

#include "ui/panels/plot_csv.h"

namespace normlab::ui {

LinePanel::LinePanel(const QString& id, const QString& title, const TelemetryStore& store, QWidget* parent)
    : ChartPanel(id, title, store, parent), m_plot(new LinePlot(title)) {
    setChartWidget(m_plot);
}

void LinePanel::refresh() {
    m_plot->setContent(buildContent(m_plot->plotColumns()));
}

QString LinePanel::csv() const {
    return csvFromPlot(title(), buildContent(0), caption());
}

void LinePanel::setPresentation(bool large) {
    m_plot->setPresentation(large);
}

QVector<QPointF> LinePanel::pointsOf(const DecimatedSeries& series, int columns) const {
    if (columns <= 0) return series.samples();
    return series.envelope(1.0, std::max<double>(2.0, static_cast<double>(store().lastStep())), columns);
}

}  // namespace normlab::ui
