// What a line plot shows, as plain values: axes, series, shaded bands and labelled vertical markers.
// Chart panels build this; LinePlot (the only QtCharts user) draws it, so the chart library can be
// swapped without touching the panels.
#pragma once
#include <QColor>
#include <QPointF>
#include <QString>
#include <QVector>
#include <optional>
#include <vector>

namespace normlab::ui {

struct AxisSpec {
    QString title;
    bool log = false;
    std::optional<double> min, max;  // unset: from the data
    QString note;                    // shown as "title (note)" where there is room (not in presentation)

    bool operator==(const AxisSpec&) const = default;
};

struct PlotSeries {
    QString name;
    QColor colour;
    QVector<QPointF> points;
    double width = 2.0;
    Qt::PenStyle style = Qt::SolidLine;
    bool onSecondaryAxis = false;
    bool inLegend = true;
    bool pointsVisible = false;  // draw dots (block profiles)

    bool operator==(const PlotSeries&) const = default;
};

struct PlotBand {
    QString name;                   // the band's own name (CSV exports, chart series)
    QVector<QPointF> lower, upper;  // same x values
    QColor colour;
    QString legend;  // what the legend says of it, shown once for bands that say the same; empty: name

    bool operator==(const PlotBand&) const = default;
};

struct PlotMarker {
    double x = 0.0;
    QString label;
    QColor colour;

    bool operator==(const PlotMarker&) const = default;
};

// A note the user pinned to a chart: text with an arrow to the point (step, value) it is about.
struct PlotAnnotation {
    double x = 0.0, y = 0.0;
    QString text;

    bool operator==(const PlotAnnotation&) const = default;
};

struct PlotContent {
    AxisSpec x, y;
    std::optional<AxisSpec> y2;  // a second value axis on the right
    std::vector<PlotSeries> series;
    std::vector<PlotBand> bands;
    std::vector<PlotMarker> markers;
    QString emptyText;  // shown when there is nothing to draw
    // What the line styles mean when the legend names runs rather than series ("dashed: validation"),
    // shown at the end of the legend (never elided like an axis title).
    QString styleKey;
    // Lines of numbers under the legend, wrapped (the difference chart's comparison of two groups).
    QString note;
    std::vector<PlotAnnotation> annotations;  // on the left value axis

    bool operator==(const PlotContent&) const = default;
};

}  // namespace normlab::ui
