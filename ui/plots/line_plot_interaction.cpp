// LinePlot's mouse: a click pins a readout of every series at the nearest step (a click on that column
// unpins it); dragging across the plot zooms the step axis to the dragged span, the wheel zooms
// around the pointer (with Shift it pans), and a double click shows everything again.
#include <QMouseEvent>
#include <QWheelEvent>

#include "ui/plots/line_plot_impl.h"

namespace normlab::ui {

void LinePlot::pinReadout(double x) {
    m_impl->pinned = x;
    m_impl->placeReadout(m_content);
}

void LinePlot::unpinReadout() {
    m_impl->pinned.reset();
    m_impl->placeReadout(m_content);
}

std::optional<double> LinePlot::pinnedStep() const {
    return m_impl->pinned;
}

QString LinePlot::readoutText() const {
    return m_impl->pinned ? m_impl->readoutAt(*m_impl->pinned, m_content) : QString();
}

bool LinePlot::eventFilter(QObject* watched, QEvent* event) {
    // A left click on the plot pins the readout at the nearest drawn step; on the pinned column, unpins.
    if (event->type() != QEvent::MouseButtonRelease || watched != m_impl->view->viewport())
        return QWidget::eventFilter(watched, event);
    const auto* mouse = static_cast<QMouseEvent*>(event);
    const QPointF scene = m_impl->view->mapToScene(mouse->position().toPoint());
    if (mouse->button() != Qt::LeftButton || !m_impl->chart->plotArea().contains(scene) ||
        m_impl->lines.empty())
        return false;
    double x = m_impl->chart->mapToValue(scene, m_impl->lines.front().tail).x();
    // Snapped to the nearest drawn step of the first line that has points.
    for (const Impl::Line& line : m_impl->lines) {
        if (line.points.isEmpty()) continue;
        x = std::min_element(line.points.begin(), line.points.end(), [x](const QPointF& a, const QPointF& b) {
                return std::abs(a.x() - x) < std::abs(b.x() - x);
            })->x();
        break;
    }
    const double columnWidth = m_impl->xShown ? (m_impl->xShown->max - m_impl->xShown->min) /
                                                    std::max(1.0, m_impl->chart->plotArea().width())
                                              : 0;
    if (m_impl->pinned && std::abs(*m_impl->pinned - x) <= 4 * columnWidth)
        unpinReadout();
    else
        pinReadout(x);
    return false;
}

}  // namespace normlab::ui
