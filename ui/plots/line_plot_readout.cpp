// LinePlot's readings of its data (line_plot_impl.h): the pinned readout's text and place (drawn by
// PlotReadout, plot_readout.h) and the hover tooltip with a point's exact values.
#include <algorithm>

#include "ui/plots/line_plot_impl.h"

namespace normlab::ui {

QString LinePlot::Impl::readoutAt(double x, const PlotContent& content) const {
    return PlotReadout::text(x, content.x.title, lines->readoutSeries(content));
}

void LinePlot::Impl::placeReadout(const PlotContent& content) {
    const std::optional<double>& pinned = readout->step();
    if (!pinned || !xShown || *pinned < xShown->min || *pinned > xShown->max || lines->empty()) {
        readout->hide();
        return;
    }
    const double x = chart->mapToPosition({*pinned, yShown ? yShown->min : 0.0}, lines->anchor()).x();
    readout->place(x, chart->plotArea(), chart->mapRectToScene(chart->rect()), readoutAt(*pinned, content),
                   style.points(8));
}

void LinePlot::Impl::showValueTip(const PlotContent& content, QLineSeries* line, const QPointF& point) const {
    const QList<QPointF> points = line->points();
    if (points.isEmpty()) return;
    const auto nearest =
        std::min_element(points.begin(), points.end(), [&](const QPointF& a, const QPointF& b) {
            return std::abs(a.x() - point.x()) < std::abs(b.x() - point.x());
        });
    const bool secondary = content.y2 && y2Axis && line->attachedAxes().contains(y2Axis);
    // Kept while the pointer rests within a few pixels of where it showed (not the default second).
    const QPoint at = QCursor::pos();
    QToolTip::showText(at,
                       QStringLiteral("%1\n%2 = %3\n%4 = %5")
                           .arg(line->name(), content.x.title)
                           .arg(nearest->x(), 0, 'g', 8)
                           .arg(secondary ? content.y2->title : content.y.title)
                           .arg(nearest->y(), 0, 'g', 6),
                       view, QRect(view->mapFromGlobal(at) - QPoint(12, 12), QSize(24, 24)), 60000);
}

}  // namespace normlab::ui
