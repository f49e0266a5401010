// QtCharts implementation of LinePlot. QtCharts redoes a series' geometry when its points change and
// every series' geometry plus the axis layout when a range changes, so an update touches only what
// changed: series are pooled and replaced only when their points differ, axis ranges are rounded and
// sticky (axis_range.h), bands and markers are rebuilt only when they change. Log axes skip values <= 0.
#include "ui/plots/line_plot.h"

#include <QVBoxLayout>

#include "ui/plots/line_plot_impl.h"

namespace normlab::ui {

LinePlot::LinePlot(const QString& title, QWidget* parent)
    : QWidget(parent), m_impl(std::make_unique<Impl>()), m_title(title) {
    m_impl->chart = new QChart;
    m_impl->chart->legend()->hide();  // our own legend below wraps instead of eliding names
    m_impl->chart->setMargins(QMargins(4, 4, 4, 4));
    m_impl->view = new QChartView(m_impl->chart, this);
    m_impl->view->setRenderHint(QPainter::Antialiasing);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addWidget(m_impl->view, 1);
    m_impl->legend = new QLabel;
    m_impl->legend->setObjectName(QStringLiteral("legend"));
    m_impl->legend->setWordWrap(true);
    m_impl->legend->setTextFormat(Qt::RichText);
    m_impl->legend->setAlignment(Qt::AlignCenter);
    m_impl->legend->setContentsMargins(6, 0, 6, 4);
    m_impl->legend->setAutoFillBackground(true);
    QPalette white = m_impl->legend->palette();
    white.setColor(QPalette::Window, Qt::white);
    m_impl->legend->setPalette(white);
    layout->addWidget(m_impl->legend);
    m_impl->emptyLabel = new QGraphicsSimpleTextItem(m_impl->chart);
    m_impl->pinLine = new QGraphicsLineItem(m_impl->chart);
    m_impl->pinLine->setPen(QPen(QColor(60, 60, 60), 1.0, Qt::DashLine));
    m_impl->pinBox = new QGraphicsRectItem(m_impl->chart);
    m_impl->pinBox->setBrush(QColor(255, 255, 255, 235));
    m_impl->pinBox->setPen(QPen(QColor(120, 120, 120)));
    m_impl->pinText = new QGraphicsSimpleTextItem(m_impl->chart);
    for (QGraphicsItem* item :
         {static_cast<QGraphicsItem*>(m_impl->pinLine), static_cast<QGraphicsItem*>(m_impl->pinBox),
          static_cast<QGraphicsItem*>(m_impl->pinText)}) {
        item->setZValue(1000 + (item == m_impl->pinText));
        item->setVisible(false);
    }
    m_impl->view->viewport()->installEventFilter(this);
    m_impl->emptyLabel->setBrush(QColor(120, 120, 120));
    connect(m_impl->chart, &QChart::plotAreaChanged, this, [this] {
        m_impl->placeLabels();
        m_impl->placeReadout(m_content);
        m_impl->placeNotes(m_content.annotations);
    });
    setMinimumSize(200, 150);
    setStyle(ChartStyle{});
}

LinePlot::~LinePlot() = default;

void LinePlot::setTitleShown(bool shown) {
    m_impl->chart->setTitle(shown ? m_title : QString());
}

int LinePlot::plotColumns() const {
    const int width = static_cast<int>(m_impl->chart->plotArea().width());
    return std::max(width, 64);
}

QPointF LinePlot::positionOf(const QPointF& value, bool secondary) const {
    const Impl& impl = *m_impl;
    QAbstractSeries* series = nullptr;
    for (const Impl::Line& line : impl.lines)
        if (line.tail->attachedAxes().contains(secondary && impl.y2Axis ? impl.y2Axis : impl.yAxis))
            series = line.tail;
    const QPointF scene = impl.chart->mapToPosition(value, series);
    return QPointF(impl.view->viewport()->mapTo(this, impl.view->mapFromScene(scene)));
}

void LinePlot::setStyle(const ChartStyle& style) {
    Impl& impl = *m_impl;
    impl.style = style;
    QFont titleFont = impl.chart->titleFont();
    titleFont.setPointSizeF(style.points(11));
    titleFont.setBold(true);
    impl.chart->setTitleFont(titleFont);
    QFont legendFont = impl.legend->font();
    legendFont.setPointSizeF(style.points(9));
    impl.legend->setFont(legendFont);
    impl.chart->setBackgroundVisible(style.opaque);
    impl.view->setBackgroundBrush(style.opaque ? QBrush(Qt::white) : QBrush(Qt::transparent));
    impl.view->setStyleSheet(style.opaque ? QString() : QStringLiteral("background: transparent"));
    impl.legend->setAutoFillBackground(style.opaque);
    // Axes take their fonts when made: remake them, if there are any yet. (Axes made and deleted before
    // the chart was first laid out leave stray labels in its corner.)
    if (!impl.xAxis) return;
    impl.xAxis = nullptr;
    const PlotContent content = m_content;
    m_content = {};
    setContent(content);
}

void LinePlot::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    m_impl->placeLabels();
}

QPointF LinePlot::valueAt(const QPoint& position) const {
    const Impl& impl = *m_impl;
    const QPointF scene = impl.view->mapToScene(impl.view->viewport()->mapFrom(this, position));
    return impl.lines.empty() ? QPointF() : impl.chart->mapToValue(scene, impl.lines.front().tail);
}

void LinePlot::redraw() {
    const PlotContent content = m_content;
    m_content = {};
    setContent(content);
}

bool LinePlot::setContent(const PlotContent& content) {
    Impl& impl = *m_impl;
    if (impl.xAxis && content == m_content) return false;
    m_content = content;
    const bool rebuilt = impl.ensureAxes(content);
    // Presentation fonts leave no room for an axis title's note: the legend tells the line styles.
    const auto titleOf = [&impl](const AxisSpec& spec) {
        return spec.note.isEmpty() || impl.style.fontScale > 1.2
                   ? spec.title
                   : QStringLiteral("%1 (%2)").arg(spec.title, spec.note);
    };
    impl.xAxis->setTitleText(titleOf(content.x));
    impl.yAxis->setTitleText(titleOf(content.y));
    if (impl.y2Axis) impl.y2Axis->setTitleText(titleOf(*content.y2));

    // Ranges from what will be drawn.
    DataRange xData, yData, y2Data;
    std::vector<DrawablePoints> drawn;
    drawn.reserve(content.series.size());
    bool anyNonFinite = false;
    // Zoomed: the value axes fit what lies inside the step span shown.
    double latest = -INFINITY;
    for (const PlotSeries& series : content.series)
        if (!series.points.isEmpty()) latest = std::max(latest, series.points.back().x());
    const std::optional<std::pair<double, double>> window = impl.zoomWindow(latest);
    for (const PlotSeries& series : content.series) {
        const bool secondary = series.onSecondaryAxis && content.y2;
        drawn.push_back(drawable(series.points, content.x.log, secondary ? content.y2->log : content.y.log));
        for (const QPointF& p : drawn.back().points) {
            xData.include(p.x());
            if (!window || (p.x() >= window->first && p.x() <= window->second))
                (secondary ? y2Data : yData).include(p.y());
        }
        for (double step : drawn.back().nonFiniteSteps) xData.include(step);
        anyNonFinite = anyNonFinite || !drawn.back().nonFiniteSteps.isEmpty();
    }
    for (const PlotBand& band : content.bands) {
        for (const QPointF& p : band.lower)
            xData.include(p.x()), yData.include(content.y.log && p.y() <= 0 ? NAN : p.y());
        for (const QPointF& p : band.upper) yData.include(p.y());
    }
    if (content.x.log) {
        DataRange positive;
        // Drawable points are positive already; a range that reaches 0 (a step at 0) starts at 1.
        if (xData.set) positive.include(xData.min > 0.0 ? xData.min : 1.0), positive.include(xData.max);
        xData = positive;
    }
    const AxisRange xRange =
        window ? AxisRange{window->first, window->second, niceStep((window->second - window->first) / 6.0),
                           true,          window->first,  window->second}
               : stableAxisRange(content.x, xData, impl.xShown);
    const bool xChanged = Impl::applyRange(impl.xAxis, impl.xShown, xRange);
    const bool yChanged =
        Impl::applyRange(impl.yAxis, impl.yShown, stableAxisRange(content.y, yData, impl.yShown));
    if (impl.y2Axis)
        Impl::applyRange(impl.y2Axis, impl.y2Shown, stableAxisRange(*content.y2, y2Data, impl.y2Shown));

    // Data series: reuse the pool, replace points only where they differ.
    while (impl.lines.size() > content.series.size()) impl.removeLine();
    while (impl.lines.size() < content.series.size()) impl.addLine(this);
    for (size_t i = 0; i < content.series.size(); ++i) {
        impl.setLine(impl.lines[i], content.series[i], std::move(drawn[i].points));
        impl.setNonFinite(impl.lines[i], content.series[i], std::move(drawn[i].nonFiniteSteps));
    }
    impl.legend->setText(legendHtml(content, anyNonFinite));
    impl.legend->setVisible(!impl.legend->text().isEmpty());

    if (rebuilt || content.bands != impl.bandsShown) impl.setBands(content.bands);
    std::vector<PlotMarker> markers;
    for (const PlotMarker& marker : content.markers)
        if (marker.x >= impl.xShown->min && marker.x <= impl.xShown->max) markers.push_back(marker);
    if (rebuilt || xChanged || yChanged || markers != impl.markers) {
        QFont markerFont = font();
        markerFont.setPointSizeF(impl.style.points(7.5));
        impl.setMarkers(markers, *impl.yShown, markerFont);
    }
    const bool empty = std::all_of(impl.lines.begin(), impl.lines.end(),
                                   [](const Impl::Line& line) { return line.points.isEmpty(); });
    const QString emptyText = empty ? content.emptyText : QString();
    if (impl.emptyLabel->text() != emptyText) impl.emptyLabel->setText(emptyText);
    impl.placeLabels();
    impl.placeReadout(content);
    impl.placeNotes(content.annotations);
    // Let the scene work out what it must repaint now, so that a repaint of the window that follows
    // (the dashboard's, inside its timing) draws it.
    QCoreApplication::sendPostedEvents(impl.chart->scene(), QEvent::MetaCall);
    return true;
}

}  // namespace normlab::ui
