// PlotZoom: the zoom's span and follow rule, and the rubber band a drag draws.
#include "ui/plots/plot_zoom.h"

#include <QRubberBand>
#include <algorithm>
#include <cmath>

namespace normlab::ui {

std::optional<StepSpan> PlotZoom::window(double newest) {
    m_latest = newest;
    if (!m_span) return std::nullopt;
    auto [lo, hi] = *m_span;
    if (m_following && newest > hi) {
        lo += newest - hi;
        hi = newest;
        m_span = StepSpan{lo, hi};
    }
    return m_span;
}

bool PlotZoom::set(std::optional<StepSpan> span) {
    if (span && !(span->second > span->first)) span.reset();
    if (span == m_span) return false;
    m_span = span;
    m_following = !span || span->second >= m_latest;
    return true;
}

void PlotZoom::press(QPoint at) {
    m_pressAt = at;
    m_dragging = false;
}

bool PlotZoom::drag(QPoint at, const QRectF& plotArea, QWidget* viewport) {
    if (!m_dragging && std::abs(at.x() - m_pressAt.x()) < 6) return false;
    m_dragging = true;
    if (!m_band) m_band = new QRubberBand(QRubberBand::Rectangle, viewport);
    m_band->setGeometry(QRect(QPoint(std::min(at.x(), m_pressAt.x()), int(plotArea.top())),
                              QPoint(std::max(at.x(), m_pressAt.x()), int(plotArea.bottom()))));
    m_band->show();
    return true;
}

std::optional<QPoint> PlotZoom::release() {
    if (!m_dragging) return std::nullopt;
    m_dragging = false;
    m_band->hide();
    return m_pressAt;
}

std::optional<StepSpan> PlotZoom::wheelSpan(double lo, double hi, double at, double notches, bool pan,
                                            double first, double last) {
    const double span = hi - lo;
    const double scale = std::pow(0.8, notches);
    StepSpan next = pan ? StepSpan{lo - notches * span / 10, hi - notches * span / 10}
                        : StepSpan{at - (at - lo) * scale, at + (hi - at) * scale};
    if (next.second - next.first >= last - first) return std::nullopt;
    const double shift = next.first < first   ? first - next.first
                         : next.second > last ? last - next.second
                                              : 0.0;
    return StepSpan{next.first + shift, next.second + shift};
}

}  // namespace normlab::ui
