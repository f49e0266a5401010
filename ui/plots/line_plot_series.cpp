// LinePlot's pooled series (line_plot_impl.h): the lines (head and live tail), NaN / Inf markers,
// Lemma bands and labelled event markers.
#include "ui/plots/line_plot_impl.h"

namespace normlab::ui {

void LinePlot::Impl::addLine(LinePlot* plot) {
    Line line{new QLineSeries, new QLineSeries, {}, 0, new QScatterSeries, {}};
    line.nonFinite->setMarkerShape(QScatterSeries::MarkerShapeTriangle);
    line.nonFinite->setBorderColor(nonFiniteColour());
    chart->addSeries(line.nonFinite);
    attach(line.nonFinite, false);
    for (QLineSeries* part : {line.head, line.tail}) {
        chart->addSeries(part);
        attach(part, false);
        QObject::connect(part, &QLineSeries::hovered, plot, [plot, part](const QPointF& point, bool state) {
            if (state) plot->m_impl->showValueTip(plot->m_content, part, point);
        });
    }
    lines.push_back(line);
}

void LinePlot::Impl::removeLine() {
    for (QXYSeries* part :
         {static_cast<QXYSeries*>(lines.back().head), static_cast<QXYSeries*>(lines.back().tail),
          static_cast<QXYSeries*>(lines.back().nonFinite)})
        chart->removeSeries(part), delete part;
    lines.pop_back();
}

void LinePlot::Impl::setLine(Line& line, const PlotSeries& spec, QVector<QPointF> points) {
    const bool secondary = spec.onSecondaryAxis && y2Axis;
    QPen pen(spec.colour);
    pen.setWidthF(spec.width * widthScale());
    pen.setStyle(spec.style);
    // Qt Charts draws a solid line segment by segment, so round caps join them smoothly; but where
    // segments are under ~2 px (a dense envelope) the caps cannot be seen and their curves made
    // redraws of many runs several times slower (measured by scripts/bench_open_runs.py).
    const bool dense = points.size() > chart->plotArea().width() / 2.0;
    pen.setCapStyle(dense ? Qt::FlatCap : Qt::RoundCap);
    for (QLineSeries* part : {line.head, line.tail}) {
        const auto attachedY = part->attachedAxes();
        const bool onY2 = y2Axis && attachedY.contains(y2Axis);
        if (secondary != onY2) {
            for (QAbstractAxis* axis : attachedY) part->detachAxis(axis);
            attach(part, secondary);
        }
        part->setName(spec.name);
        part->setPen(pen);
        part->setPointsVisible(spec.pointsVisible);
    }
    if (points == line.points) return;
    const LineSplit split = splitLine(line.points, line.headCount, points);
    if (split.headChanged) line.head->replace(points.mid(0, split.headCount));
    line.tail->replace(points.mid(std::max(split.headCount - 1, 0)));
    line.headCount = split.headCount;
    line.points = std::move(points);
}

void LinePlot::Impl::setNonFinite(Line& line, const PlotSeries& spec, QVector<double> steps) {
    const double size = 9.0 * style.lineScale();
    line.nonFinite->setMarkerSize(size);
    line.nonFinite->setColor(spec.colour);
    line.nonFinite->setName(spec.name + QObject::tr(" (NaN or Inf)"));
    const AxisRange& y = *yShown;
    const double top = yLog ? y.max * std::pow(y.min / y.max, 0.03) : y.max - 0.03 * (y.max - y.min);
    QList<QPointF> markers;
    markers.reserve(steps.size());
    for (double step : steps) markers.append({step, top});
    if (markers != line.nonFinite->points()) line.nonFinite->replace(markers);
    line.nonFiniteSteps = std::move(steps);
}

void LinePlot::Impl::clearBands() {
    for (QAbstractSeries* series : bands) chart->removeSeries(series), delete series;
    bands.clear();
    bandsShown.clear();
}

void LinePlot::Impl::attach(QAbstractSeries* series, bool secondary) {
    series->attachAxis(xAxis);
    series->attachAxis(secondary && y2Axis ? y2Axis : yAxis);
}

void LinePlot::Impl::setBands(const std::vector<PlotBand>& content) {
    clearBands();
    for (const PlotBand& band : content) {
        auto* upper = new QLineSeries;
        auto* lower = new QLineSeries;
        upper->append(band.upper);
        lower->append(band.lower);
        auto* area = new QAreaSeries(upper, lower);
        upper->setParent(area);
        lower->setParent(area);
        area->setName(band.name);
        QColor fill = band.colour;
        fill.setAlpha(50);
        area->setBrush(fill);
        QPen edge(band.colour);
        edge.setWidthF(1.0);
        edge.setStyle(Qt::DotLine);
        area->setPen(edge);
        chart->addSeries(area);
        attach(area, false);
        bands.push_back(area);
    }
    bandsShown = content;
}

void LinePlot::Impl::setMarkers(const std::vector<PlotMarker>& shown, const AxisRange& y, const QFont& font) {
    markers = shown;
    while (markerLines.size() > markers.size()) {
        chart->removeSeries(markerLines.back());
        delete markerLines.back();
        markerLines.pop_back();
        delete markerLabels.back();
        markerLabels.pop_back();
    }
    while (markerLines.size() < markers.size()) {
        auto* line = new QLineSeries;
        chart->addSeries(line);
        attach(line, false);
        markerLines.push_back(line);
        auto* label = new QGraphicsSimpleTextItem(chart);
        label->setRotation(90);
        markerLabels.push_back(label);
    }
    for (size_t i = 0; i < markers.size(); ++i) {
        const PlotMarker& marker = markers[i];
        QLineSeries* line = markerLines[i];
        line->replace(QList<QPointF>{{marker.x, y.min}, {marker.x, y.max}});
        QPen pen(marker.colour);
        pen.setStyle(Qt::DashLine);
        pen.setWidthF(1.2 * widthScale());
        line->setPen(pen);
        line->setName(marker.label);
        QGraphicsSimpleTextItem* label = markerLabels[i];
        label->setText(marker.label);
        label->setFont(font);
        label->setBrush(marker.colour.darker(130));
    }
}

}  // namespace normlab::ui
