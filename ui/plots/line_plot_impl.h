// LinePlot's state (internal to ui/plots/line_plot*.cpp): the QtCharts chart and axes, the pooled
// series, markers, bands, the legend, the pinned readout and the zoom. Its parts live in
// line_plot_axes.cpp, line_plot_series.cpp and line_plot_overlays.cpp.
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
#include <memory>
#include <optional>

#include "ui/plots/axis_range.h"
#include "ui/plots/colour_map.h"
#include "ui/plots/line_plot.h"
#include "ui/plots/line_plot_parts.h"
#include "ui/plots/line_split.h"
#include "ui/plots/plot_readout.h"

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
    QString emptyText;      // what an empty chart says, whole
    void placeEmptyText();  // wrapped to the plot's width, centred

    std::optional<std::pair<double, double>> zoomWindow(double newest);

    // The user's notes: a text box and an arrow from it to its point, per annotation.
    struct Note {
        QGraphicsSimpleTextItem* text = nullptr;
        QGraphicsLineItem* arrow = nullptr;
    };
    std::vector<Note> notes;

    void placeNotes(const std::vector<PlotAnnotation>& annotations);

    std::unique_ptr<PlotReadout> readout;  // the pinned readout: its step, line and box

    // Every series' value at `x`, else its last before it (PlotReadout::text).
    QString readoutAt(double x, const PlotContent& content) const;

    // The drawn step nearest to `x` on the first series that has points (x itself when none has).
    double nearestDrawnStep(double x) const;

    // Places the pinned line and box for the current plot area and data.
    void placeReadout(const PlotContent& content);

    double widthScale() const { return style.lineScale(); }

    // Makes axes of the kinds `content` needs; true when they were rebuilt (everything is redone).
    bool ensureAxes(const PlotContent& content);

    void addLine(LinePlot* plot);

    void removeLine();

    void setLine(Line& line, const PlotSeries& spec, QVector<QPointF> points);

    // The NaN / Inf markers of `line`, in its colour, just under the top of the value range.
    void setNonFinite(Line& line, const PlotSeries& spec, QVector<double> steps);

    // True when the range changed.
    static bool applyRange(QAbstractAxis* axis, std::optional<AxisRange>& shown, const AxisRange& range);

    void clearBands();

    void attach(QAbstractSeries* series, bool secondary);

    void setBands(const std::vector<PlotBand>& content);

    // Vertical dashed lines from the bottom to the top of the value range, with rotated labels.
    void setMarkers(const std::vector<PlotMarker>& shown, const AxisRange& y, const QFont& font);

    // The exact value of the point of `line` nearest to `point` (by x), as a tooltip.
    void showValueTip(const PlotContent& content, QLineSeries* line, const QPointF& point) const;

    // Tick intervals whose labels fit the plot's size at the labels' font (axis_range.h), after every
    // range change and layout: QtCharts would drop the labels that overlap instead.
    void fitTicks();

    // A value axis' title shrinks (to 60% at the least) rather than be elided when it is longer than
    // the plot is tall (presentation sizes, small figures).
    void fitAxisTitles();

    // Marker labels and the empty-plot text follow the plot area (after layout changes too).
    void placeLabels();
};

}  // namespace normlab::ui
