// LinePlot's state (internal to line_plot.cpp and line_plot_interaction.cpp): the QtCharts chart and
// axes, the pooled series, markers, bands, the legend, the pinned readout and the zoom.
#pragma once
#include <QAreaSeries>
#include <QChart>
#include <QChartView>
#include <QCoreApplication>
#include <QGraphicsLineItem>
#include <QGraphicsRectItem>
#include <QGraphicsSimpleTextItem>
#include <QLabel>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QRubberBand>
#include <QScatterSeries>
#include <QToolTip>
#include <QValueAxis>
#include <algorithm>
#include <cmath>
#include <optional>

#include "ui/plots/axis_range.h"
#include "ui/plots/colour_map.h"
#include "ui/plots/line_plot.h"
#include "ui/plots/line_plot_parts.h"
#include "ui/plots/line_split.h"

namespace normlab::ui {

struct LinePlot::Impl {
    QChart* chart = nullptr;
    QChartView* view = nullptr;
    QAbstractAxis* xAxis = nullptr;
    QAbstractAxis* yAxis = nullptr;
    QAbstractAxis* y2Axis = nullptr;
    bool xLog = false, yLog = false, y2Log = false, hasY2 = false;
    std::optional<AxisRange> xShown, yShown, y2Shown;  // ranges on screen
    // A data series: two QLineSeries, a head that stays and a live tail (line_split.h).
    struct Line {
        QLineSeries* head = nullptr;
        QLineSeries* tail = nullptr;
        QVector<QPointF> points;  // all it shows
        int headCount = 0;
        QScatterSeries* nonFinite = nullptr;  // a marker at the top for each NaN or Inf value
        QVector<double> nonFiniteSteps;
    };
    std::vector<Line> lines;              // pooled
    std::vector<QAbstractSeries*> bands;  // rebuilt when they change (rare: theory mode)
    std::vector<PlotBand> bandsShown;
    std::vector<QGraphicsSimpleTextItem*> markerLabels;
    std::vector<PlotMarker> markers;  // those drawn, with their lines
    std::vector<QLineSeries*> markerLines;
    QGraphicsSimpleTextItem* emptyLabel = nullptr;
    QLabel* legend = nullptr;
    ChartStyle style;
    // The pinned readout (pinReadout): its step, line and text box.
    // The zoomed step span (none: everything), whether it slides with the newest step, and the drag
    // that draws a new one.
    std::optional<std::pair<double, double>> zoom;
    bool followLatest = true;
    QPoint pressAt;
    bool dragging = false;
    QRubberBand* rubberBand = nullptr;

    // The step span shown when zoomed: the zoom, slid so that it ends at `latest` when following.
    double latest = -INFINITY;  // the newest step of the content shown

    // setContent's steps (line_plot.cpp): the axis titles; the axis ranges for what is drawn (whether
    // the step or the left value axis changed); the lines and the legend; the event markers within the
    // step axis (redrawn when `redraw` or when they change); the text of an empty chart.
    void setAxisTitles(const PlotContent& content);
    bool applyRanges(const PlotContent& content, const DrawnContent& drawn,
                     const std::optional<std::pair<double, double>>& window);
    void showLines(LinePlot* plot, const PlotContent& content, DrawnContent& drawn);
    void showMarkers(const std::vector<PlotMarker>& all, bool redraw, const QFont& font);
    void showEmptyText(const QString& text);

    std::optional<std::pair<double, double>> zoomWindow(double newest) {
        latest = newest;
        if (!zoom) return std::nullopt;
        auto [lo, hi] = *zoom;
        if (followLatest && newest > hi) {
            lo += newest - hi;
            hi = newest;
            zoom = {lo, hi};
        }
        return zoom;
    }

    // The user's notes: a text box and an arrow from it to its point, per annotation.
    struct Note {
        QGraphicsSimpleTextItem* text = nullptr;
        QGraphicsLineItem* arrow = nullptr;
    };
    std::vector<Note> notes;

    void placeNotes(const std::vector<PlotAnnotation>& annotations) {
        while (notes.size() > annotations.size()) {
            delete notes.back().text;
            delete notes.back().arrow;
            notes.pop_back();
        }
        while (notes.size() < annotations.size()) {
            Note note{new QGraphicsSimpleTextItem(chart), new QGraphicsLineItem(chart)};
            note.text->setZValue(900);
            note.arrow->setZValue(900);
            notes.push_back(note);
        }
        if (lines.empty()) return;
        QFont font = chart->titleFont();
        font.setBold(false);
        font.setPointSizeF(style.points(8.5));
        for (size_t i = 0; i < notes.size(); ++i) {
            const PlotAnnotation& annotation = annotations[i];
            const QPointF at = chart->mapToPosition({annotation.x, annotation.y}, lines.front().tail);
            const bool shown = chart->plotArea().contains(at);
            notes[i].text->setVisible(shown);
            notes[i].arrow->setVisible(shown);
            if (!shown) continue;
            notes[i].text->setFont(font);
            notes[i].text->setText(annotation.text);
            notes[i].text->setBrush(QColor(40, 40, 40));
            // The text above and to the right of its point, kept inside the plot.
            const QRectF box = notes[i].text->boundingRect();
            const double offset = 18.0 * style.lineScale();
            QPointF corner(at.x() + offset, at.y() - offset - box.height());
            corner.setX(std::min(corner.x(), chart->plotArea().right() - box.width()));
            corner.setY(std::max(corner.y(), chart->plotArea().top()));
            notes[i].text->setPos(corner);
            notes[i].arrow->setPen(QPen(QColor(40, 40, 40), 1.2 * style.lineScale()));
            notes[i].arrow->setLine(QLineF(QPointF(corner.x(), corner.y() + box.height()), at));
        }
    }

    std::optional<double> pinned;
    QGraphicsLineItem* pinLine = nullptr;
    QGraphicsSimpleTextItem* pinText = nullptr;
    QGraphicsRectItem* pinBox = nullptr;

    // Every series' value at the point nearest to `x` ("name: value" lines).
    QString readoutAt(double x, const PlotContent& content) const {
        QStringList rows{QStringLiteral("%1 = %2").arg(content.x.title).arg(x, 0, 'g', 8)};
        for (size_t i = 0; i < lines.size() && i < content.series.size(); ++i) {
            const QVector<QPointF>& points = lines[i].points;
            if (points.isEmpty()) continue;
            const auto after = std::lower_bound(points.begin(), points.end(), x,
                                                [](const QPointF& p, double value) { return p.x() < value; });
            auto nearest = after == points.end() ? after - 1 : after;
            if (after != points.begin() && std::abs((after - 1)->x() - x) <= std::abs(nearest->x() - x))
                nearest = after - 1;
            rows << QStringLiteral("%1: %2").arg(content.series[i].name).arg(nearest->y(), 0, 'g', 6);
        }
        return rows.join(QLatin1Char('\n'));
    }

    // The drawn step nearest to `x` on the first series that has points (x itself when none has).
    double nearestDrawnStep(double x) const {
        for (const Line& line : lines) {
            if (line.points.isEmpty()) continue;
            return std::min_element(line.points.begin(), line.points.end(),
                                    [x](const QPointF& p, const QPointF& q) {
                                        return std::abs(p.x() - x) < std::abs(q.x() - x);
                                    })
                ->x();
        }
        return x;
    }

    // Places the pinned line and box for the current plot area and data.
    void placeReadout(const PlotContent& content) {
        const bool shown = pinned && xShown && *pinned >= xShown->min && *pinned <= xShown->max;
        for (QGraphicsItem* item :
             {static_cast<QGraphicsItem*>(pinLine), static_cast<QGraphicsItem*>(pinText),
              static_cast<QGraphicsItem*>(pinBox)})
            item->setVisible(shown);
        if (!shown || lines.empty()) return;
        const QRectF area = chart->plotArea();
        const double x = chart->mapToPosition({*pinned, yShown ? yShown->min : 0.0}, lines.front().tail).x();
        pinLine->setLine(x, area.top(), x, area.bottom());
        QFont font = pinText->font();
        font.setPointSizeF(style.points(8));
        pinText->setFont(font);
        pinText->setText(readoutAt(*pinned, content));
        const QRectF text = pinText->boundingRect();
        const double left = x + 6 + text.width() < area.right() ? x + 6 : x - 6 - text.width();
        pinText->setPos(left, area.top() + 4);
        pinBox->setRect(QRectF(left - 3, area.top() + 1, text.width() + 6, text.height() + 6));
    }

    double widthScale() const { return style.lineScale(); }

    // Makes axes of the kinds `content` needs; true when they were rebuilt (everything is redone).
    bool ensureAxes(const PlotContent& content) {
        const bool rebuild = !xAxis || xLog != content.x.log || yLog != content.y.log ||
                             hasY2 != content.y2.has_value() || (content.y2 && y2Log != content.y2->log);
        if (!rebuild) return false;
        while (!lines.empty()) removeLine();
        for (QLineSeries* line : markerLines) chart->removeSeries(line), delete line;
        markerLines.clear();
        for (QGraphicsSimpleTextItem* label : markerLabels) delete label;
        markerLabels.clear();
        markers.clear();
        clearBands();
        for (QAbstractAxis* axis : chart->axes()) chart->removeAxis(axis), delete axis;
        xAxis = makeAxis(content.x);
        yAxis = makeAxis(content.y);
        chart->addAxis(xAxis, Qt::AlignBottom);
        chart->addAxis(yAxis, Qt::AlignLeft);
        y2Axis = nullptr;
        if (content.y2) {
            y2Axis = makeAxis(*content.y2);
            chart->addAxis(y2Axis, Qt::AlignRight);
        }
        xLog = content.x.log;
        yLog = content.y.log;
        hasY2 = content.y2.has_value();
        y2Log = content.y2 && content.y2->log;
        xShown.reset();
        yShown.reset();
        y2Shown.reset();
        for (QAbstractAxis* axis : {xAxis, yAxis, y2Axis}) {
            if (!axis) continue;
            QFont labels = axis->labelsFont();
            labels.setPointSizeF(style.points(ChartStyle::kBasePointSize));
            axis->setLabelsFont(labels);
            QFont title = axis->titleFont();
            title.setPointSizeF(style.points(9));
            axis->setTitleFont(title);
        }
        return true;
    }

    void addLine(LinePlot* plot) {
        Line line{new QLineSeries, new QLineSeries, {}, 0, new QScatterSeries, {}};
        line.nonFinite->setMarkerShape(QScatterSeries::MarkerShapeTriangle);
        line.nonFinite->setBorderColor(nonFiniteColour());
        chart->addSeries(line.nonFinite);
        attach(line.nonFinite, false);
        for (QLineSeries* part : {line.head, line.tail}) {
            chart->addSeries(part);
            attach(part, false);
            QObject::connect(part, &QLineSeries::hovered, plot,
                             [plot, part](const QPointF& point, bool state) {
                                 if (state) plot->m_impl->showValueTip(plot->m_content, part, point);
                             });
        }
        lines.push_back(line);
    }

    void removeLine() {
        for (QXYSeries* part :
             {static_cast<QXYSeries*>(lines.back().head), static_cast<QXYSeries*>(lines.back().tail),
              static_cast<QXYSeries*>(lines.back().nonFinite)})
            chart->removeSeries(part), delete part;
        lines.pop_back();
    }

    void setLine(Line& line, const PlotSeries& spec, QVector<QPointF> points) {
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

    // The NaN / Inf markers of `line`, in its colour, just under the top of the value range.
    void setNonFinite(Line& line, const PlotSeries& spec, QVector<double> steps) {
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

    // True when the range changed.
    static bool applyRange(QAbstractAxis* axis, std::optional<AxisRange>& shown, const AxisRange& range) {
        if (shown == range) return false;
        setAxisRange(axis, range);
        shown = range;
        return true;
    }

    void clearBands() {
        for (QAbstractSeries* series : bands) chart->removeSeries(series), delete series;
        bands.clear();
        bandsShown.clear();
    }

    void attach(QAbstractSeries* series, bool secondary) {
        series->attachAxis(xAxis);
        series->attachAxis(secondary && y2Axis ? y2Axis : yAxis);
    }

    void setBands(const std::vector<PlotBand>& content) {
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

    // Vertical dashed lines from the bottom to the top of the value range, with rotated labels.
    void setMarkers(const std::vector<PlotMarker>& shown, const AxisRange& y, const QFont& font) {
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

    // The exact value of the point of `line` nearest to `point` (by x), as a tooltip.
    void showValueTip(const PlotContent& content, QLineSeries* line, const QPointF& point) const {
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

    // Tick intervals whose labels fit the plot's size at the labels' font (axis_range.h), after every
    // range change and layout: QtCharts would drop the labels that overlap instead.
    void fitTicks() {
        const QRectF area = chart->plotArea();
        if (!xAxis || area.height() <= 0.0 || area.width() <= 0.0) return;
        const auto fit = [](QAbstractAxis* axis, const std::optional<AxisRange>& shown, double pixels,
                            double label) {
            if (!axis || !shown) return;
            if (auto* log = qobject_cast<QLogValueAxis*>(axis)) {
                const double base = logBaseFitting(*shown, pixels, label);
                if (log->base() == base) return;
                log->setBase(base);
                log->setMinorTickCount(base == 10.0 ? -1 : 0);
            } else if (auto* value = qobject_cast<QValueAxis*>(axis)) {
                const double tick = tickIntervalFitting(*shown, pixels, label);
                if (value->tickInterval() != tick) value->setTickInterval(tick);
            }
        };
        const QFontMetricsF metrics(yAxis->labelsFont());
        fit(yAxis, yShown, area.height(), metrics.height());
        fit(y2Axis, y2Shown, area.height(), metrics.height());
        if (xShown)
            fit(xAxis, xShown, area.width(),
                metrics.horizontalAdvance(
                    QString::number(std::max(std::abs(xShown->min), std::abs(xShown->max)), 'g', 4)) +
                    metrics.averageCharWidth());
    }

    // A value axis' title shrinks (to 60% at the least) rather than be elided when it is longer than
    // the plot is tall (presentation sizes, small figures).
    void fitAxisTitles() {
        const double available = chart->plotArea().height() - 4.0;
        if (available <= 0.0) return;
        for (QAbstractAxis* axis : {yAxis, y2Axis}) {
            if (!axis) continue;
            const double full = style.points(9);
            QFont font = axis->titleFont();
            double size = full;
            for (font.setPointSizeF(size);
                 QFontMetricsF(font).horizontalAdvance(axis->titleText()) > available && size > 0.6 * full;
                 font.setPointSizeF(size))
                size *= 0.92;
            if (std::abs(axis->titleFont().pointSizeF() - font.pointSizeF()) > 0.05) axis->setTitleFont(font);
        }
    }

    // Marker labels and the empty-plot text follow the plot area (after layout changes too).
    void placeLabels() {
        fitTicks();
        fitAxisTitles();
        const double top = yShown ? yShown->max : 1.0;
        for (size_t i = 0; i < markerLabels.size(); ++i) {
            const QPointF at = chart->mapToPosition({markers[i].x, top}, markerLines[i]);
            markerLabels[i]->setPos(at.x() + markerLabels[i]->boundingRect().height() + 1, at.y() + 2);
        }
        emptyLabel->setPos(chart->plotArea().center() - emptyLabel->boundingRect().center());
    }
};

}  // namespace normlab::ui
