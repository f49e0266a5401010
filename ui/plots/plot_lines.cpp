// PlotLines: the pool of data series, their pens, their split into a head and a live tail, and the
// NaN / Inf markers.
#include "ui/plots/plot_lines.h"

#include <QChart>
#include <QLineSeries>
#include <QScatterSeries>
#include <algorithm>
#include <cmath>
#include <utility>

#include "ui/plots/colour_map.h"
#include "ui/plots/line_split.h"

namespace normlab::ui {

void LineAxes::attach(QAbstractSeries* series, bool secondary) const {
    series->attachAxis(x);
    series->attachAxis(secondary && y2 ? y2 : y);
}

PlotLines::PlotLines(QChart* chart, QObject* context, Hover onHover)
    : m_chart(chart), m_context(context), m_onHover(std::move(onHover)) {}

void PlotLines::resize(size_t count, const LineAxes& axes) {
    while (m_lines.size() > count) removeLast();
    while (m_lines.size() < count) add(axes);
}

bool PlotLines::allEmpty() const {
    return std::all_of(m_lines.begin(), m_lines.end(),
                       [](const Line& line) { return line.points.isEmpty(); });
}

void PlotLines::add(const LineAxes& axes) {
    Line line{new QLineSeries, new QLineSeries, {}, 0, new QScatterSeries};
    line.nonFinite->setMarkerShape(QScatterSeries::MarkerShapeTriangle);
    line.nonFinite->setBorderColor(nonFiniteColour());
    m_chart->addSeries(line.nonFinite);
    axes.attach(line.nonFinite, false);
    for (QLineSeries* part : {line.head, line.tail}) {
        m_chart->addSeries(part);
        axes.attach(part, false);
        QObject::connect(part, &QLineSeries::hovered, m_context,
                         [this, part](const QPointF& point, bool state) {
                             if (state) m_onHover(part, point);
                         });
    }
    m_lines.push_back(line);
}

void PlotLines::removeLast() {
    const Line& line = m_lines.back();
    for (QXYSeries* part : {static_cast<QXYSeries*>(line.head), static_cast<QXYSeries*>(line.tail),
                            static_cast<QXYSeries*>(line.nonFinite)})
        m_chart->removeSeries(part), delete part;
    m_lines.pop_back();
}

void PlotLines::set(size_t i, const PlotSeries& spec, QVector<QPointF> points, const LineAxes& axes,
                    double lineScale, double plotWidth) {
    Line& line = m_lines[i];
    const bool secondary = spec.onSecondaryAxis && axes.y2;
    QPen pen(spec.colour);
    pen.setWidthF(spec.width * lineScale);
    pen.setStyle(spec.style);
    // Qt Charts draws a solid line segment by segment, so round caps join them smoothly; but where
    // segments are under ~2 px (a dense envelope) the caps cannot be seen and their curves made
    // redraws of many runs several times slower (measured by scripts/bench_open_runs.py).
    const bool dense = points.size() > plotWidth / 2.0;
    pen.setCapStyle(dense ? Qt::FlatCap : Qt::RoundCap);
    for (QLineSeries* part : {line.head, line.tail}) {
        const auto attachedY = part->attachedAxes();
        const bool onY2 = axes.y2 && attachedY.contains(axes.y2);
        if (secondary != onY2) {
            for (QAbstractAxis* axis : attachedY) part->detachAxis(axis);
            axes.attach(part, secondary);
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

void PlotLines::setNonFinite(size_t i, const PlotSeries& spec, QVector<double> steps, double top,
                             double lineScale) {
    QScatterSeries* markers = m_lines[i].nonFinite;
    markers->setMarkerSize(9.0 * lineScale);
    markers->setColor(spec.colour);
    markers->setName(spec.name + QObject::tr(" (NaN or Inf)"));
    QList<QPointF> at;
    at.reserve(steps.size());
    for (double step : steps) at.append({step, top});
    if (at != markers->points()) markers->replace(at);
}

QLineSeries* PlotLines::anchor() const {
    return m_lines.empty() ? nullptr : m_lines.front().tail;
}

QLineSeries* PlotLines::anchorOn(QAbstractAxis* axis) const {
    QLineSeries* found = nullptr;
    for (const Line& line : m_lines)
        if (line.tail->attachedAxes().contains(axis)) found = line.tail;
    return found;
}

double PlotLines::nearestDrawnStep(double x) const {
    for (const Line& line : m_lines) {
        if (line.points.isEmpty()) continue;
        return std::min_element(line.points.begin(), line.points.end(),
                                [x](const QPointF& p, const QPointF& q) {
                                    return std::abs(p.x() - x) < std::abs(q.x() - x);
                                })
            ->x();
    }
    return x;
}

std::vector<PlotReadout::Series> PlotLines::readoutSeries(const PlotContent& content) const {
    std::vector<PlotReadout::Series> series;
    for (size_t i = 0; i < m_lines.size() && i < content.series.size(); ++i)
        series.push_back({content.series[i].name, &m_lines[i].points});
    return series;
}

}  // namespace normlab::ui
