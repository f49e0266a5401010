// A line chart's data series, pooled: each drawn as two QLineSeries (a head that stays and a live tail,
// line_split.h) and a scatter series of NaN / Inf markers along the top, each replaced only where its
// points change (QtCharts redoes a series' geometry whenever they are set).
#pragma once
#include <QPointF>
#include <QVector>
#include <functional>
#include <vector>

#include "ui/plots/plot_content.h"
#include "ui/plots/plot_readout.h"

class QAbstractAxis;
class QAbstractSeries;
class QChart;
class QLineSeries;
class QObject;
class QScatterSeries;

namespace normlab::ui {

// The axes a line is drawn against: the step axis, the left value axis and the right one, if any.
struct LineAxes {
    QAbstractAxis* x = nullptr;
    QAbstractAxis* y = nullptr;
    QAbstractAxis* y2 = nullptr;
    void attach(QAbstractSeries* series, bool secondary) const;
};

class PlotLines {
  public:
    // `onHover` is called (in `context`'s thread) when the pointer rests on a line's point.
    using Hover = std::function<void(QLineSeries*, const QPointF&)>;
    PlotLines(QChart* chart, QObject* context, Hover onHover);

    // Makes the pool `count` lines long, new ones attached to `axes`.
    void resize(size_t count, const LineAxes& axes);
    size_t size() const { return m_lines.size(); }
    bool empty() const { return m_lines.empty(); }
    // Whether no line has a point.
    bool allEmpty() const;

    // Line i shows `spec` with `points` (on the right axis when asked for and there is one); its width
    // scales with `lineScale`, and dense lines (segments under ~2 px of `plotWidth`) use flat caps.
    void set(size_t i, const PlotSeries& spec, QVector<QPointF> points, const LineAxes& axes,
             double lineScale, double plotWidth);
    // Line i's NaN / Inf markers at `steps`, in its colour, at value `top`.
    void setNonFinite(size_t i, const PlotSeries& spec, QVector<double> steps, double top, double lineScale);

    // The series that positions and values are mapped through: the first line's (none when empty), or
    // the last one drawn against `axis`.
    QLineSeries* anchor() const;
    QLineSeries* anchorOn(QAbstractAxis* axis) const;
    // The drawn step nearest to `x` on the first line that has points (x itself when none has).
    double nearestDrawnStep(double x) const;
    // Each line's name (from `content`) and points, for the pinned readout.
    std::vector<PlotReadout::Series> readoutSeries(const PlotContent& content) const;

  private:
    struct Line {
        QLineSeries* head = nullptr;
        QLineSeries* tail = nullptr;
        QVector<QPointF> points;  // all it shows
        int headCount = 0;
        QScatterSeries* nonFinite = nullptr;
    };
    void add(const LineAxes& axes);
    void removeLast();

    QChart* m_chart;
    QObject* m_context;
    Hover m_onHover;
    std::vector<Line> m_lines;
};

}  // namespace normlab::ui
