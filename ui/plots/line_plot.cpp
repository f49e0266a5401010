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
    m_impl->lines = std::make_unique<PlotLines>(
        m_impl->chart, this,
        [this](QLineSeries* line, const QPointF& at) { m_impl->showValueTip(m_content, line, at); });
    m_impl->overlays = std::make_unique<PlotOverlays>(m_impl->chart);
    m_impl->readout = std::make_unique<PlotReadout>(m_impl->chart);
    m_impl->view->viewport()->installEventFilter(this);
    connect(m_impl->chart, &QChart::plotAreaChanged, this, [this] {
        m_impl->placeLabels();
        m_impl->placeReadout(m_content);
        m_impl->overlays->placeNotes(m_content.annotations, m_impl->lines->anchor(), m_impl->style);
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
    QAbstractSeries* series = impl.lines->anchorOn(secondary && impl.y2Axis ? impl.y2Axis : impl.yAxis);
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
    return impl.lines->empty() ? QPointF() : impl.chart->mapToValue(scene, impl.lines->anchor());
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
    impl.setAxisTitles(content);
    // Ranges from what will be drawn; zoomed, the value axes fit what lies inside the step span shown.
    const std::optional<StepSpan> window = impl.zoom.window(latestStep(content));
    DrawnContent drawn = drawnContent(content, window);
    const bool rangeChanged = impl.applyRanges(content, drawn, window);
    impl.showLines(content, drawn);
    impl.overlays->setBands(content.bands, impl.xAxis, impl.yAxis, rebuilt);
    QFont markerFont = font();
    markerFont.setPointSizeF(impl.style.points(7.5));
    impl.overlays->setMarkers(content.markers, *impl.xShown, *impl.yShown, impl.xAxis, impl.yAxis, markerFont,
                              impl.style.lineScale(), rebuilt || rangeChanged);
    impl.overlays->setEmptyText(impl.lines->allEmpty() ? content.emptyText : QString());
    impl.placeLabels();
    impl.placeReadout(content);
    impl.overlays->placeNotes(content.annotations, impl.lines->anchor(), impl.style);
    // Let the scene work out what it must repaint now, so that a repaint of the window that follows
    // (the dashboard's, inside its timing) draws it.
    QCoreApplication::sendPostedEvents(impl.chart->scene(), QEvent::MetaCall);
    return true;
}

void LinePlot::Impl::setAxisTitles(const PlotContent& content) {
    // Presentation fonts leave no room for an axis title's note: the legend tells the line styles.
    const auto titleOf = [this](const AxisSpec& spec) {
        return spec.note.isEmpty() || style.fontScale > 1.2
                   ? spec.title
                   : QStringLiteral("%1 (%2)").arg(spec.title, spec.note);
    };
    xAxis->setTitleText(titleOf(content.x));
    yAxis->setTitleText(titleOf(content.y));
    if (y2Axis) y2Axis->setTitleText(titleOf(*content.y2));
}

bool LinePlot::Impl::applyRanges(const PlotContent& content, const DrawnContent& drawn,
                                 const std::optional<StepSpan>& window) {
    const AxisRange xRange =
        window ? AxisRange{window->first, window->second, niceStep((window->second - window->first) / 6.0),
                           true,          window->first,  window->second}
               : stableAxisRange(content.x, drawn.x, xShown);
    const bool xChanged = applyRange(xAxis, xShown, xRange);
    const bool yChanged = applyRange(yAxis, yShown, stableAxisRange(content.y, drawn.y, yShown));
    if (y2Axis) applyRange(y2Axis, y2Shown, stableAxisRange(*content.y2, drawn.y2, y2Shown));
    return xChanged || yChanged;
}

void LinePlot::Impl::showLines(const PlotContent& content, DrawnContent& drawn) {
    // Reuse the pool, replace points only where they differ; NaN / Inf markers just under the top.
    lines->resize(content.series.size(), axes());
    const AxisRange& y = *yShown;
    const double top = yLog ? y.max * std::pow(y.min / y.max, 0.03) : y.max - 0.03 * (y.max - y.min);
    for (size_t i = 0; i < content.series.size(); ++i) {
        lines->set(i, content.series[i], std::move(drawn.series[i].points), axes(), style.lineScale(),
                   chart->plotArea().width());
        lines->setNonFinite(i, content.series[i], std::move(drawn.series[i].nonFiniteSteps), top,
                            style.lineScale());
    }
    legend->setText(legendHtml(content, drawn.anyNonFinite));
    legend->setVisible(!legend->text().isEmpty());
}

}  // namespace normlab::ui
