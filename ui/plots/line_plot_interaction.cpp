// LinePlot's mouse: a click pins a readout of every series at the nearest step (a click on that column
// unpins it); dragging across the plot zooms the step axis to the dragged span, the wheel zooms
// around the pointer (with Shift it pans), and a double click shows everything again.
#include <QMouseEvent>
#include <QWheelEvent>
#include <utility>

#include "ui/plots/line_plot_impl.h"

namespace normlab::ui {

void LinePlot::pinReadout(double x) {
    m_impl->readout->pin(x);
    m_impl->placeReadout(m_content);
}

void LinePlot::unpinReadout() {
    m_impl->readout->pin(std::nullopt);
    m_impl->placeReadout(m_content);
}

std::optional<double> LinePlot::pinnedStep() const {
    return m_impl->readout->step();
}

QString LinePlot::readoutText() const {
    const std::optional<double>& pinned = m_impl->readout->step();
    return pinned ? m_impl->readoutAt(*pinned, m_content) : QString();
}

QRect LinePlot::widgetRectOf(const QRectF& sceneBox) const {
    if (sceneBox.isEmpty()) return {};
    const QRect inView = m_impl->view->mapFromScene(sceneBox).boundingRect();
    return QRect(m_impl->view->viewport()->mapTo(this, inView.topLeft()), inView.size());
}

QRect LinePlot::readoutGeometry() const {
    return widgetRectOf(m_impl->readout->sceneBox());
}

QRect LinePlot::emptyTextGeometry() const {
    return widgetRectOf(m_impl->overlays->emptyTextBox());
}

void LinePlot::setZoom(std::optional<std::pair<double, double>> span) {
    if (!m_impl->zoom.set(span)) return;
    redraw();
    emit zoomChanged();
}

std::optional<std::pair<double, double>> LinePlot::zoom() const {
    return m_impl->zoom.span();
}

void LinePlot::setFollowLatest(bool follow) {
    m_impl->zoom.setFollowing(follow);
    redraw();
}

bool LinePlot::followLatest() const {
    return m_impl->zoom.following();
}

namespace {
// The step under a viewport position, on `series`' axes.
double stepAt(QChart* chart, QChartView* view, QAbstractSeries* series, const QPoint& position) {
    return chart->mapToValue(view->mapToScene(position), series).x();
}
}  // namespace

bool LinePlot::eventFilter(QObject* watched, QEvent* event) {
    Impl& impl = *m_impl;
    if (watched != impl.view->viewport() || impl.lines->empty()) return QWidget::eventFilter(watched, event);
    switch (event->type()) {
        case QEvent::MouseButtonPress: {
            const auto* mouse = static_cast<QMouseEvent*>(event);
            if (mouse->button() == Qt::LeftButton) impl.zoom.press(mouse->position().toPoint());
            return false;
        }
        case QEvent::MouseMove:
            return dragTo(*static_cast<QMouseEvent*>(event));
        case QEvent::MouseButtonDblClick:
            // Shows everything; the pin the first click of the two set or cleared is put back, and the
            // second click's release does nothing.
            setZoom(std::nullopt);
            if (impl.pinBeforeClick)
                pinReadout(*impl.pinBeforeClick);
            else
                unpinReadout();
            impl.skipRelease = true;
            return true;
        case QEvent::Wheel:
            return wheelZoom(*static_cast<QWheelEvent*>(event));
        case QEvent::MouseButtonRelease:
            return release(*static_cast<QMouseEvent*>(event));
        default:
            return QWidget::eventFilter(watched, event);
    }
}

bool LinePlot::dragTo(const QMouseEvent& mouse) {
    Impl& impl = *m_impl;
    if (!(mouse.buttons() & Qt::LeftButton)) return false;
    const QRectF area = impl.view->mapFromScene(impl.chart->plotArea()).boundingRect();
    return impl.zoom.drag(mouse.position().toPoint(), area, impl.view->viewport());
}

bool LinePlot::wheelZoom(const QWheelEvent& wheel) {
    // Zoom around the pointer (Shift: pan by a tenth of the span).
    Impl& impl = *m_impl;
    if (!impl.xShown || wheel.angleDelta().y() == 0) return false;
    const double at = stepAt(impl.chart, impl.view, impl.lines->anchor(), wheel.position().toPoint());
    const auto [first, last] = stepExtent(m_content);
    setZoom(PlotZoom::wheelSpan(impl.xShown->min, impl.xShown->max, at, wheel.angleDelta().y() / 120.0,
                                wheel.modifiers() & Qt::ShiftModifier, first, last));
    return true;
}

bool LinePlot::release(const QMouseEvent& mouse) {
    Impl& impl = *m_impl;
    if (mouse.button() != Qt::LeftButton) return false;
    QAbstractSeries* series = impl.lines->anchor();
    if (const std::optional<QPoint> pressedAt = impl.zoom.release()) {
        // A drag across the plot: the step axis shows the dragged span.
        const double a = stepAt(impl.chart, impl.view, series, *pressedAt);
        const double b = stepAt(impl.chart, impl.view, series, mouse.position().toPoint());
        setZoom(std::pair{std::min(a, b), std::max(a, b)});
        return true;
    }
    // A click pins the readout at the nearest drawn step; on the pinned column, unpins it.
    if (std::exchange(impl.skipRelease, false)) return true;
    const QPointF scene = impl.view->mapToScene(mouse.position().toPoint());
    if (!impl.chart->plotArea().contains(scene)) return false;
    impl.pinBeforeClick = impl.readout->step();
    const double x = impl.lines->nearestDrawnStep(impl.chart->mapToValue(scene, series).x());
    const double columnWidth =
        impl.xShown ? (impl.xShown->max - impl.xShown->min) / std::max(1.0, impl.chart->plotArea().width())
                    : 0;
    if (const std::optional<double>& pinned = impl.readout->step();
        pinned && std::abs(*pinned - x) <= 4 * columnWidth)
        unpinReadout();
    else
        pinReadout(x);
    return false;
}

}  // namespace normlab::ui
