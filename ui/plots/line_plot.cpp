// QtCharts implementation of LinePlot. Series objects are pooled and their points replaced on each
// update (no re-creation at 30 Hz); axes are rebuilt only when their kind changes. Log axes skip
// values <= 0, which a log scale cannot show.
#include "ui/plots/line_plot.h"

#include <QAreaSeries>
#include <QChart>
#include <QChartView>
#include <QGraphicsSimpleTextItem>
#include <QLabel>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QToolTip>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

namespace normlab::ui {

namespace {
struct Range {
    double min = 0.0, max = 0.0;
    bool set = false;
    void include(double value) {
        if (!std::isfinite(value)) return;
        min = set ? std::min(min, value) : value;
        max = set ? std::max(max, value) : value;
        set = true;
    }
};

QVector<QPointF> drawable(const QVector<QPointF>& points, bool logY) {
    if (!logY) return points;
    QVector<QPointF> kept;
    kept.reserve(points.size());
    for (const QPointF& p : points)
        if (p.y() > 0.0) kept.append(p);
    return kept;
}

// Widens a data range into a readable axis range.
std::pair<double, double> axisRange(const AxisSpec& spec, Range data) {
    if (!data.set) data = spec.log ? Range{1e-3, 1.0, true} : Range{0.0, 1.0, true};
    double lo = spec.min.value_or(data.min), hi = spec.max.value_or(data.max);
    if (spec.log) {
        lo = std::max(lo, 1e-30);
        hi = std::max(hi, lo);
        // Whole decades, so that a log axis always has labelled ticks at both ends.
        if (!spec.min) lo = std::pow(10.0, std::floor(std::log10(lo) + 1e-9));
        if (!spec.max) hi = std::pow(10.0, std::ceil(std::log10(hi) - 1e-9));
        if (hi <= lo) hi = lo * 10.0;
        return {lo, hi};
    }
    if (hi <= lo) {
        lo -= 0.5;
        hi += 0.5;
    }
    const double pad = 0.05 * (hi - lo);
    return {spec.min ? lo : lo - pad, spec.max ? hi : hi + pad};
}

// The legend as wrapping rich text: a short line in each series' colour and style, then its name.
QString legendHtml(const PlotContent& content) {
    QStringList items;
    const auto glyph = [](Qt::PenStyle style) {
        switch (style) {
            case Qt::DashLine:
                return QStringLiteral("&#8211; &#8211;");
            case Qt::DotLine:
                return QStringLiteral("&middot;&middot;&middot;&middot;");
            case Qt::DashDotLine:
                return QStringLiteral("&#8211;&middot;&#8211;");
            default:
                return QStringLiteral("&#8212;&#8212;");
        }
    };
    for (const PlotSeries& series : content.series) {
        if (!series.inLegend) continue;
        QColor colour = series.colour;
        colour.setAlpha(255);
        items << QStringLiteral("<span style='white-space:nowrap'><b style='color:%1'>%2</b>&nbsp;%3</span>")
                     .arg(colour.name(), glyph(series.style), series.name.toHtmlEscaped());
    }
    for (const PlotBand& band : content.bands)
        items << QStringLiteral(
                     "<span style='white-space:nowrap'><b style='color:%1'>&#9608;&#9608;</b>&nbsp;%2</span>")
                     .arg(band.colour.lighter(150).name(), band.name.toHtmlEscaped());
    return items.join(QStringLiteral(" &nbsp;&nbsp; "));
}

QAbstractAxis* makeAxis(const AxisSpec& spec) {
    if (spec.log) {
        auto* axis = new QLogValueAxis;
        axis->setTruncateLabels(false);
        axis->setBase(10.0);
        axis->setLabelFormat("%.3g");
        axis->setMinorTickCount(-1);
        axis->setTitleText(spec.title);
        return axis;
    }
    auto* axis = new QValueAxis;
    axis->setTruncateLabels(false);
    axis->setLabelFormat("%.4g");
    axis->setTickType(QValueAxis::TicksDynamic);
    axis->setTitleText(spec.title);
    return axis;
}

void setAxisRange(QAbstractAxis* axis, std::pair<double, double> range) {
    axis->setRange(range.first, range.second);
    if (auto* log = qobject_cast<QLogValueAxis*>(axis)) {
        // At most ~7 labels: over many decades, label every 10^k (a base of 100, 1000, ...).
        const double decades = std::log10(range.second / range.first);
        log->setBase(std::pow(10.0, std::max(1.0, std::ceil(decades / 7.0))));
        log->setRange(range.first, range.second);
    }
    if (auto* value = qobject_cast<QValueAxis*>(axis)) {
        // About six ticks on round numbers.
        const double raw = (range.second - range.first) / 6.0;
        const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
        const double step = raw / magnitude < 2   ? 2 * magnitude
                            : raw / magnitude < 5 ? 5 * magnitude
                                                  : 10 * magnitude;
        value->setTickInterval(step / 2.0 >= raw ? step / 2.0 : step);
        value->setTickAnchor(0.0);
    }
}
}  // namespace

struct LinePlot::Impl {
    QChart* chart = nullptr;
    QChartView* view = nullptr;
    QAbstractAxis* xAxis = nullptr;
    QAbstractAxis* yAxis = nullptr;
    QAbstractAxis* y2Axis = nullptr;
    bool xLog = false, yLog = false, y2Log = false, hasY2 = false;
    std::vector<QLineSeries*> lines;       // data series pool
    std::vector<QAbstractSeries*> extras;  // bands, rebuilt per update (rare: theory mode)
    std::vector<QGraphicsSimpleTextItem*> markerLabels;
    std::vector<PlotMarker> markers;  // those drawn, with their lines
    std::vector<QLineSeries*> markerLines;
    double yAxisMax = 1.0;
    QGraphicsSimpleTextItem* emptyLabel = nullptr;
    QLabel* legend = nullptr;
    bool presentation = false;

    double widthScale() const { return presentation ? 2.0 : 1.0; }

    void ensureAxes(const PlotContent& content) {
        const bool rebuild = !xAxis || xLog != content.x.log || yLog != content.y.log ||
                             hasY2 != content.y2.has_value() || (content.y2 && y2Log != content.y2->log);
        if (!rebuild) return;
        for (QLineSeries* line : lines) chart->removeSeries(line), delete line;
        lines.clear();
        for (QLineSeries* line : markerLines) chart->removeSeries(line), delete line;
        markerLines.clear();
        for (QGraphicsSimpleTextItem* label : markerLabels) delete label;
        markerLabels.clear();
        clearExtras();
        for (QAbstractAxis* axis : chart->axes()) chart->removeAxis(axis), delete axis;
        xAxis = makeAxis(content.x);
        yAxis = makeAxis(content.y);
        chart->addAxis(xAxis, Qt::AlignBottom);
        chart->addAxis(yAxis, Qt::AlignLeft);
        y2Axis = nullptr;
        if (content.y2) {
            y2Axis = makeAxis(*content.y2);
            chart->addAxis(y2Axis, Qt::AlignRight);
        }
        xLog = content.x.log;
        yLog = content.y.log;
        hasY2 = content.y2.has_value();
        y2Log = content.y2 && content.y2->log;
    }

    void clearExtras() {
        for (QAbstractSeries* series : extras) chart->removeSeries(series), delete series;
        extras.clear();
    }

    void attach(QAbstractSeries* series, bool secondary) {
        series->attachAxis(xAxis);
        series->attachAxis(secondary && y2Axis ? y2Axis : yAxis);
    }

    // Marker labels and the empty-plot text follow the plot area (after layout changes too).
    void placeLabels() {
        const double top = yAxisMax;
        for (size_t i = 0; i < markerLabels.size(); ++i) {
            const QPointF at = chart->mapToPosition({markers[i].x, top}, markerLines[i]);
            markerLabels[i]->setPos(at.x() + markerLabels[i]->boundingRect().height() + 1, at.y() + 2);
        }
        emptyLabel->setPos(chart->plotArea().center() - emptyLabel->boundingRect().center());
    }
};

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
    m_impl->emptyLabel->setBrush(QColor(120, 120, 120));
    connect(m_impl->chart, &QChart::plotAreaChanged, this, [this] { m_impl->placeLabels(); });
    setMinimumSize(200, 150);
}

LinePlot::~LinePlot() = default;

void LinePlot::setTitleShown(bool shown) {
    m_impl->chart->setTitle(shown ? m_title : QString());
}

int LinePlot::plotColumns() const {
    const int width = static_cast<int>(m_impl->chart->plotArea().width());
    return std::max(width, 64);
}

void LinePlot::setPresentation(bool large) {
    m_impl->presentation = large;
    QFont titleFont = m_impl->chart->titleFont();
    titleFont.setPointSizeF(large ? 20 : 11);
    titleFont.setBold(true);
    m_impl->chart->setTitleFont(titleFont);
    QFont legendFont = m_impl->legend->font();
    legendFont.setPointSizeF(large ? 15 : 9);
    m_impl->legend->setFont(legendFont);
    m_impl->xAxis = nullptr;  // rebuild axes with the new fonts
    setContent(m_content);
}

void LinePlot::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    m_impl->placeLabels();
}

void LinePlot::setContent(const PlotContent& content) {
    m_content = content;
    Impl& impl = *m_impl;
    impl.ensureAxes(content);
    const bool large = impl.presentation;
    for (QAbstractAxis* axis : {impl.xAxis, impl.yAxis, impl.y2Axis}) {
        if (!axis) continue;
        QFont labels = axis->labelsFont();
        labels.setPointSizeF(large ? 14 : 8.5);
        axis->setLabelsFont(labels);
        QFont title = axis->titleFont();
        title.setPointSizeF(large ? 12.5 : 9);
        axis->setTitleFont(title);
    }
    impl.xAxis->setTitleText(content.x.title);
    impl.yAxis->setTitleText(content.y.title);
    if (impl.y2Axis) impl.y2Axis->setTitleText(content.y2->title);

    // Ranges from what will be drawn.
    Range xData, yData, y2Data;
    std::vector<QVector<QPointF>> drawn;
    for (const PlotSeries& series : content.series) {
        const bool secondary = series.onSecondaryAxis && content.y2;
        drawn.push_back(drawable(series.points, secondary ? content.y2->log : content.y.log));
        for (const QPointF& p : drawn.back()) {
            xData.include(p.x());
            (secondary ? y2Data : yData).include(p.y());
        }
    }
    for (const PlotBand& band : content.bands) {
        for (const QPointF& p : band.lower)
            xData.include(p.x()), yData.include(content.y.log && p.y() <= 0 ? NAN : p.y());
        for (const QPointF& p : band.upper) yData.include(p.y());
    }
    if (content.x.log) {
        Range positive;
        if (xData.set) positive.include(std::max(xData.min, 1.0)), positive.include(xData.max);
        xData = positive;
    }
    const auto xRange = axisRange(content.x, xData);
    const auto yRange = axisRange(content.y, yData);
    setAxisRange(impl.xAxis, xRange);
    setAxisRange(impl.yAxis, yRange);
    if (impl.y2Axis) setAxisRange(impl.y2Axis, axisRange(*content.y2, y2Data));

    // Data series: reuse the pool.
    while (impl.lines.size() > content.series.size()) {
        impl.chart->removeSeries(impl.lines.back());
        delete impl.lines.back();
        impl.lines.pop_back();
    }
    while (impl.lines.size() < content.series.size()) {
        auto* line = new QLineSeries;
        impl.chart->addSeries(line);
        impl.attach(line, false);
        connect(line, &QLineSeries::hovered, this, [this, line](const QPointF& point, bool state) {
            if (!state) return;
            const QList<QPointF> points = line->points();
            if (points.isEmpty()) return;
            const auto nearest =
                std::min_element(points.begin(), points.end(), [&](const QPointF& a, const QPointF& b) {
                    return std::abs(a.x() - point.x()) < std::abs(b.x() - point.x());
                });
            QToolTip::showText(QCursor::pos(), QStringLiteral("%1\n%2 = %3\n%4 = %5")
                                                   .arg(line->name(), m_content.x.title)
                                                   .arg(nearest->x(), 0, 'g', 8)
                                                   .arg(m_content.y.title)
                                                   .arg(nearest->y(), 0, 'g', 6));
        });
        impl.lines.push_back(line);
    }
    for (size_t i = 0; i < content.series.size(); ++i) {
        const PlotSeries& spec = content.series[i];
        QLineSeries* line = impl.lines[i];
        const bool secondary = spec.onSecondaryAxis && impl.y2Axis;
        const auto attachedY = line->attachedAxes();
        const bool onY2 = attachedY.contains(impl.y2Axis) && impl.y2Axis;
        if (secondary != onY2) {
            for (QAbstractAxis* axis : attachedY) line->detachAxis(axis);
            impl.attach(line, secondary);
        }
        line->setName(spec.name);
        QPen pen(spec.colour);
        pen.setWidthF(spec.width * impl.widthScale());
        pen.setStyle(spec.style);
        pen.setCapStyle(Qt::RoundCap);
        line->setPen(pen);
        line->setPointsVisible(spec.pointsVisible);
        line->replace(QList<QPointF>(drawn[i].begin(), drawn[i].end()));
    }
    impl.legend->setText(legendHtml(content));
    impl.legend->setVisible(!impl.legend->text().isEmpty());

    // Bands and markers are few: rebuilt each time.
    impl.clearExtras();
    for (const PlotBand& band : content.bands) {
        auto* upper = new QLineSeries;
        auto* lower = new QLineSeries;
        upper->append(QList<QPointF>(band.upper.begin(), band.upper.end()));
        lower->append(QList<QPointF>(band.lower.begin(), band.lower.end()));
        auto* area = new QAreaSeries(upper, lower);
        upper->setParent(area);
        lower->setParent(area);
        area->setName(band.name);
        QColor fill = band.colour;
        fill.setAlpha(50);
        area->setBrush(fill);
        QPen edge(band.colour);
        edge.setWidthF(1.0);
        edge.setStyle(Qt::DotLine);
        area->setPen(edge);
        impl.chart->addSeries(area);
        impl.attach(area, false);
        impl.extras.push_back(area);
    }
    // Markers: pooled vertical lines and rotated labels.
    QFont markerFont = font();
    markerFont.setPointSizeF(large ? 12 : 7.5);
    impl.markers.clear();
    for (const PlotMarker& marker : content.markers)
        if (marker.x >= xRange.first && marker.x <= xRange.second) impl.markers.push_back(marker);
    while (impl.markerLines.size() > impl.markers.size()) {
        impl.chart->removeSeries(impl.markerLines.back());
        delete impl.markerLines.back();
        impl.markerLines.pop_back();
        delete impl.markerLabels.back();
        impl.markerLabels.pop_back();
    }
    while (impl.markerLines.size() < impl.markers.size()) {
        auto* line = new QLineSeries;
        impl.chart->addSeries(line);
        impl.attach(line, false);
        impl.markerLines.push_back(line);
        auto* label = new QGraphicsSimpleTextItem(impl.chart);
        label->setRotation(90);
        impl.markerLabels.push_back(label);
    }
    impl.yAxisMax = yRange.second;
    for (size_t i = 0; i < impl.markers.size(); ++i) {
        const PlotMarker& marker = impl.markers[i];
        QLineSeries* line = impl.markerLines[i];
        line->replace(QList<QPointF>{{marker.x, yRange.first}, {marker.x, yRange.second}});
        QPen pen(marker.colour);
        pen.setStyle(Qt::DashLine);
        pen.setWidthF(1.2 * impl.widthScale());
        line->setPen(pen);
        line->setName(marker.label);
        QGraphicsSimpleTextItem* label = impl.markerLabels[i];
        label->setText(marker.label);
        label->setFont(markerFont);
        label->setBrush(marker.colour.darker(130));
    }
    const bool empty = std::all_of(drawn.begin(), drawn.end(), [](const auto& p) { return p.isEmpty(); });
    impl.emptyLabel->setText(empty ? content.emptyText : QString());
    impl.placeLabels();
}

}  // namespace normlab::ui
