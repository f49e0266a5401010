// The pieces of LinePlot that are plain functions: which points an axis can draw (NaN and Inf set
// aside as markers) and the data ranges they span, the legend's rich text, and QtCharts axes made and
// ranged for an AxisSpec.
// Internal to ui/plots (line_plot*.cpp).
#pragma once
#include <QAbstractAxis>
#include <QPointF>
#include <QString>
#include <QVector>
#include <optional>
#include <utility>
#include <vector>

#include "ui/plots/axis_range.h"
#include "ui/plots/plot_content.h"

namespace normlab::ui {

// A series' points split into those the axes can draw and the steps whose value is not finite (drawn as
// markers along the top, never fed to an axis). Log axes also skip values <= 0.
struct DrawablePoints {
    QVector<QPointF> points;
    QVector<double> nonFiniteSteps;
};
DrawablePoints drawable(const QVector<QPointF>& points, bool logX, bool logY);

// A content's series made drawable, one per series, and the data ranges the axes must show: the step
// axis spans every series and band (from 1 on a log axis); when zoomed to `window`, each value axis
// spans only the points inside it.
struct DrawnContent {
    std::vector<DrawablePoints> series;
    DataRange x, y, y2;
    bool anyNonFinite = false;
};
DrawnContent drawnContent(const PlotContent& content, const std::optional<std::pair<double, double>>& window);

// The first and the last step any series reaches (series hold their points in step order); (infinity,
// -infinity) when none has a point.
std::pair<double, double> stepExtent(const PlotContent& content);
double latestStep(const PlotContent& content);

// The legend as wrapping rich text: a short line in each series' colour and style, then its name;
// then the style key, when some value is not finite the NaN/Inf marker, and the content's note.
QString legendHtml(const PlotContent& content, bool hasNonFinite);

// A new log or linear axis for `spec`, and a range applied to it (bounded ticks on any range).
QAbstractAxis* makeAxis(const AxisSpec& spec);
void setAxisRange(QAbstractAxis* axis, const AxisRange& range);

}  // namespace normlab::ui
