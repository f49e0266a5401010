// A line chart's zoom on the step axis: the span shown (none: everything), whether it slides with the
// newest step, and the drag that draws a new span (a rubber band over the plot). LinePlot turns mouse
// events into these calls (line_plot_interaction.cpp).
#pragma once
#include <QPoint>
#include <QRectF>
#include <limits>
#include <optional>
#include <utility>

class QRubberBand;
class QWidget;

namespace normlab::ui {

using StepSpan = std::pair<double, double>;

class PlotZoom {
  public:
    // The span to show for content whose newest step is `newest`: none, or the zoom, slid to end at
    // `newest` when following and the content has grown past it.
    std::optional<StepSpan> window(double newest);

    // Sets the span (an empty or reversed one: none); false when it is what is set. A span that reaches
    // the newest step seen keeps following it; one into the past stays put.
    bool set(std::optional<StepSpan> span);
    const std::optional<StepSpan>& span() const { return m_span; }
    void setFollowing(bool follow) { m_following = follow; }
    bool following() const { return m_following; }

    // A left press at `at` (viewport pixels) may start a drag; moving with the button held past a few
    // pixels shows the band over `plotArea` (viewport pixels) and returns true.
    void press(QPoint at);
    bool drag(QPoint at, const QRectF& plotArea, QWidget* viewport);
    // The release ends a drag: where it started, or none when there was no drag.
    std::optional<QPoint> release();

    // The span a wheel turn of `notches` makes of [lo, hi]: zoomed around step `at` (0.8 a notch), or
    // with `pan` moved a tenth of the span a notch; kept inside the data's steps [first, last], and none
    // (everything) once it would span them all.
    static std::optional<StepSpan> wheelSpan(double lo, double hi, double at, double notches, bool pan,
                                             double first, double last);

  private:
    std::optional<StepSpan> m_span;
    bool m_following = true;
    double m_latest = -std::numeric_limits<double>::infinity();  // the newest step of the content last shown
    QPoint m_pressAt;
    bool m_dragging = false;
    QRubberBand* m_band = nullptr;  // owned by the viewport it is drawn on
};

}  // namespace normlab::ui
