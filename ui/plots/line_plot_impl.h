// LinePlot's state (internal to ui/plots/line_plot*.cpp): the QtCharts chart, view and axes with the
// ranges shown, the legend, and the parts that own the rest: the data lines (plot_lines.h), what is drawn
// over them (plot_overlays.h), the pinned readout (plot_readout.h) and the zoom (plot_zoom.h).
#pragma once
#include <QAbstractAxis>
#include <QChart>
#include <QChartView>
#include <QCoreApplication>
#include <QLabel>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QToolTip>
#include <QValueAxis>
#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>

#include "ui/plots/axis_range.h"
#include "ui/plots/line_plot.h"
#include "ui/plots/line_plot_parts.h"
#include "ui/plots/plot_lines.h"
#include "ui/plots/plot_overlays.h"
#include "ui/plots/plot_readout.h"
#include "ui/plots/plot_zoom.h"

namespace normlab::ui {

struct LinePlot::Impl {
    QChart* chart = nullptr;
    QChartView* view = nullptr;
    QAbstractAxis* xAxis = nullptr;
    QAbstractAxis* yAxis = nullptr;
    QAbstractAxis* y2Axis = nullptr;
    bool xLog = false, yLog = false, y2Log = false, hasY2 = false;
    std::optional<AxisRange> xShown, yShown, y2Shown;  // ranges on screen
    QLabel* legend = nullptr;
    ChartStyle style;
    std::unique_ptr<PlotLines> lines;
    std::unique_ptr<PlotOverlays> overlays;
    std::unique_ptr<PlotReadout> readout;  // the pinned readout: its step, line and box
    PlotZoom zoom;
    // A click's pin before it (a double click puts it back) and whether the release ending a double
    // click is to be ignored.
    std::optional<double> pinBeforeClick;
    bool skipRelease = false;

    LineAxes axes() const { return {xAxis, yAxis, y2Axis}; }

    // setContent's steps (line_plot.cpp): the axis titles; the axis ranges for what is drawn (whether
    // the step or the left value axis changed); the lines and the legend.
    void setAxisTitles(const PlotContent& content);
    bool applyRanges(const PlotContent& content, const DrawnContent& drawn,
                     const std::optional<StepSpan>& window);
    void showLines(const PlotContent& content, DrawnContent& drawn);

    // Every series' value at `x`, else its last before it (PlotReadout::text).
    QString readoutAt(double x, const PlotContent& content) const;
    // Places the pinned line and box for the current plot area and data.
    void placeReadout(const PlotContent& content);

    // Makes axes of the kinds `content` needs; true when they were rebuilt (everything is redone).
    bool ensureAxes(const PlotContent& content);
    // True when the range changed.
    static bool applyRange(QAbstractAxis* axis, std::optional<AxisRange>& shown, const AxisRange& range);

    // The exact value of the point of `line` nearest to `point` (by x), as a tooltip.
    void showValueTip(const PlotContent& content, QLineSeries* line, const QPointF& point) const;

    // Tick intervals whose labels fit the plot's size at the labels' font (axis_range.h), after every
    // range change and layout: QtCharts would drop the labels that overlap instead.
    void fitTicks();
    // A value axis' title shrinks (to 60% at the least) rather than be elided when it is longer than
    // the plot is tall (presentation sizes, small figures).
    void fitAxisTitles();
    // Ticks, axis titles, marker labels and the empty-plot text follow the plot area (after layout
    // changes too).
    void placeLabels();
};

}  // namespace normlab::ui
