// QtCharts implementation of LinePlot. QtCharts redoes a series' geometry when its points change and
// every series' geometry plus the axis layout when a range changes, so an update touches only what
// changed: series are pooled and replaced only when their points differ, axis ranges are rounded and
// sticky (axis_range.h), bands and markers are rebuilt only when they change. Log axes skip values <= 0.
#include "ui/plots/line_plot.h"

#include <QFontMetricsF>
#include <QStringList>
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
    m_impl->readout = std::make_unique<PlotReadout>(m_impl->chart);
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
    impl.setAxisTitles(content);
    // Ranges from what will be drawn; zoomed, the value axes fit what lies inside the step span shown.
    const std::optional<std::pair<double, double>> window = impl.zoomWindow(latestStep(content));
    DrawnContent drawn = drawnContent(content, window);
    const bool rangeChanged = impl.applyRanges(content, drawn, window);
    impl.showLines(this, content, drawn);
    if (rebuilt || content.bands != impl.bandsShown) impl.setBands(content.bands);
    QFont markerFont = font();
    markerFont.setPointSizeF(impl.style.points(7.5));
    impl.showMarkers(content.markers, rebuilt || rangeChanged, markerFont);
    impl.showEmptyText(content.emptyText);
    impl.placeLabels();
    impl.placeReadout(content);
    impl.placeNotes(content.annotations);
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
                                 const std::optional<std::pair<double, double>>& window) {
    const AxisRange xRange =
        window ? AxisRange{window->first, window->second, niceStep((window->second - window->first) / 6.0),
                           true,          window->first,  window->second}
               : stableAxisRange(content.x, drawn.x, xShown);
    const bool xChanged = applyRange(xAxis, xShown, xRange);
    const bool yChanged = applyRange(yAxis, yShown, stableAxisRange(content.y, drawn.y, yShown));
    if (y2Axis) applyRange(y2Axis, y2Shown, stableAxisRange(*content.y2, drawn.y2, y2Shown));
    return xChanged || yChanged;
}

void LinePlot::Impl::showLines(LinePlot* plot, const PlotContent& content, DrawnContent& drawn) {
    // Reuse the pool, replace points only where they differ.
    while (lines.size() > content.series.size()) removeLine();
    while (lines.size() < content.series.size()) addLine(plot);
    for (size_t i = 0; i < content.series.size(); ++i) {
        setLine(lines[i], content.series[i], std::move(drawn.series[i].points));
        setNonFinite(lines[i], content.series[i], std::move(drawn.series[i].nonFiniteSteps));
    }
    legend->setText(legendHtml(content, drawn.anyNonFinite));
    legend->setVisible(!legend->text().isEmpty());
}

void LinePlot::Impl::showMarkers(const std::vector<PlotMarker>& all, bool redraw, const QFont& font) {
    std::vector<PlotMarker> shown;
    for (const PlotMarker& marker : all)
        if (marker.x >= xShown->min && marker.x <= xShown->max) shown.push_back(marker);
    if (redraw || shown != markers) setMarkers(shown, *yShown, font);
}

void LinePlot::Impl::showEmptyText(const QString& text) {
    const bool empty =
        std::all_of(lines.begin(), lines.end(), [](const Line& line) { return line.points.isEmpty(); });
    emptyText = empty ? text : QString();
    placeEmptyText();
}

void LinePlot::Impl::placeEmptyText() {
    // Wrapped at the plot's width and centred on it (a long one ran over both axes of a narrow chart).
    const QFontMetricsF metrics(emptyLabel->font());
    const double width = std::max(40.0, chart->plotArea().width() - 8);
    QStringList rows;
    QString row;
    for (const QString& word : emptyText.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
        const QString longer = row.isEmpty() ? word : row + QLatin1Char(' ') + word;
        if (!row.isEmpty() && metrics.horizontalAdvance(longer) > width) {
            rows << row;
            row = word;
        } else {
            row = longer;
        }
    }
    if (!row.isEmpty()) rows << row;
    if (const QString wrapped = rows.join(QLatin1Char('\n')); emptyLabel->text() != wrapped)
        emptyLabel->setText(wrapped);
    emptyLabel->setPos(chart->plotArea().center() - emptyLabel->boundingRect().center());
}

}  // namespace normlab::ui
