// QtCharts implementation of LinePlot. QtCharts redoes a series' geometry when its points change and
// every series' geometry plus the axis layout when a range changes, so an update touches only what
// changed: series are pooled and replaced only when their points differ, axis ranges are rounded and
// sticky (axis_range.h), bands and markers are rebuilt only when they change. Log axes skip values <= 0.
#include "ui/plots/line_plot.h"

#include "ui/plots/axis_range.h"
#include "ui/plots/colour_map.h"
#include "ui/plots/line_split.h"

#include <QAreaSeries>
#include <QChart>
#include <QChartView>
#include <QCoreApplication>
#include <QGraphicsLineItem>
#include <QGraphicsRectItem>
#include <QGraphicsSimpleTextItem>
#include <QLabel>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QMouseEvent>
#include <QScatterSeries>
#include <QToolTip>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

namespace normlab::ui {

namespace {
// A series' points split into those the axes can draw and the steps whose value is not finite (drawn as
// markers along the top, never fed to an axis). Log axes also skip values <= 0.
struct DrawablePoints {
    QVector<QPointF> points;
    QVector<double> nonFiniteSteps;
};

DrawablePoints drawable(const QVector<QPointF>& points, bool logX, bool logY) {
    DrawablePoints out;
    out.points.reserve(points.size());
    for (const QPointF& p : points) {
        if (!std::isfinite(p.x()) || (logX && p.x() <= 0.0)) continue;
        if (!std::isfinite(p.y()))
            out.nonFiniteSteps.append(p.x());
        else if (!logY || p.y() > 0.0)
            out.points.append(p);
    }
    return out;
}

// A name that never breaks across legend lines (Qt's rich text breaks after hyphens even in nowrap).
QString unbreakable(QString name) {
    return name.replace(QLatin1Char('-'), QChar(0x2011));  // non-breaking hyphen
}

// The legend as wrapping rich text: a short line in each series' colour and style, then its name.
QString legendHtml(const PlotContent& content, bool hasNonFinite) {
    QStringList items;
    // Box-drawing characters join up into a continuous line (solid) or keep their gaps (dashed, dotted).
    const auto glyph = [](Qt::PenStyle style) {
        switch (style) {
            case Qt::DashLine:
                return QStringLiteral("&#9548;&#9548;");
            case Qt::DotLine:
                return QStringLiteral("&#9480;&#9480;");
            case Qt::DashDotLine:
                return QStringLiteral("&#9472;&middot;&#9472;");
            default:
                return QStringLiteral("&#9472;&#9472;&#9472;");
        }
    };
    for (const PlotSeries& series : content.series) {
        if (!series.inLegend) continue;
        QColor colour = series.colour;
        colour.setAlpha(255);
        items << QStringLiteral("<span style='white-space:nowrap'><b style='color:%1'>%2</b>&nbsp;%3</span>")
                     .arg(colour.name(), glyph(series.style), unbreakable(series.name).toHtmlEscaped());
    }
    for (const PlotBand& band : content.bands)
        items << QStringLiteral(
                     "<span style='white-space:nowrap'><b style='color:%1'>&#9608;&#9608;</b>&nbsp;%2</span>")
                     .arg(band.colour.lighter(150).name(), band.name.toHtmlEscaped());
    if (!content.styleKey.isEmpty())
        items << QStringLiteral("<span style='white-space:nowrap; color:#555555'>%1</span>")
                     .arg(content.styleKey.toHtmlEscaped());
    if (hasNonFinite)
        items << QStringLiteral(
                     "<span style='white-space:nowrap'><b style='color:%1'>&#9650;</b>&nbsp;%2</span>")
                     .arg(nonFiniteColour().name(), QObject::tr("NaN or Inf (at the top)"));
    return items.join(QStringLiteral(" &nbsp;&nbsp; "));
}

QAbstractAxis* makeAxis(const AxisSpec& spec) {
    if (spec.log) {
        auto* axis = new QLogValueAxis;
        axis->setTruncateLabels(false);
        axis->setBase(10.0);
        axis->setLabelFormat("%.3g");
        return axis;
    }
    auto* axis = new QValueAxis;
    axis->setTruncateLabels(false);
    axis->setLabelFormat("%.4g");
    axis->setTickType(QValueAxis::TicksDynamic);
    return axis;
}

void setAxisRange(QAbstractAxis* axis, const AxisRange& range) {
    if (auto* log = qobject_cast<QLogValueAxis*>(axis)) {
        // At most ~7 labels: over many decades, label every 10^k (a base of 100, 1000, ...).
        const double decades = std::log10(range.max / range.min);
        const double base = std::pow(10.0, std::max(1.0, std::ceil(decades / 7.0)));
        log->setBase(base);
        // Minor ticks at 2..9 x 10^k only for a base of 10: QtCharts draws base - 2 of them between two
        // labels, which for a base of 10^40 would never finish.
        log->setMinorTickCount(base == 10.0 ? -1 : 0);
        // QtCharts labels the powers of the base from ceil(log(min)); log10 of a computed 1e-3 can come
        // out as -2.9999999999999996, which would drop the bottom label. Nudge the end just below.
        axis->setRange(range.min * (1.0 - 1e-9), range.max);
        return;
    }
    if (auto* value = qobject_cast<QValueAxis*>(axis)) {
        // Round ticks at multiples of the interval.
        value->setTickAnchor(0.0);
        value->setTickInterval(range.tick > 0.0 ? range.tick : niceStep((range.max - range.min) / 6.0));
    }
    axis->setRange(range.min, range.max);
}
}  // namespace

struct LinePlot::Impl {
    QChart* chart = nullptr;
    QChartView* view = nullptr;
    QAbstractAxis* xAxis = nullptr;
    QAbstractAxis* yAxis = nullptr;
    QAbstractAxis* y2Axis = nullptr;
    bool xLog = false, yLog = false, y2Log = false, hasY2 = false;
    std::optional<AxisRange> xShown, yShown, y2Shown;  // ranges on screen
    // A data series: two QLineSeries, a head that stays and a live tail (line_split.h).
    struct Line {
        QLineSeries* head = nullptr;
        QLineSeries* tail = nullptr;
        QVector<QPointF> points;  // all it shows
        int headCount = 0;
        QScatterSeries* nonFinite = nullptr;  // a marker at the top for each NaN or Inf value
        QVector<double> nonFiniteSteps;
    };
    std::vector<Line> lines;              // pooled
    std::vector<QAbstractSeries*> bands;  // rebuilt when they change (rare: theory mode)
    std::vector<PlotBand> bandsShown;
    std::vector<QGraphicsSimpleTextItem*> markerLabels;
    std::vector<PlotMarker> markers;  // those drawn, with their lines
    std::vector<QLineSeries*> markerLines;
    QGraphicsSimpleTextItem* emptyLabel = nullptr;
    QLabel* legend = nullptr;
    ChartStyle style;
    // The pinned readout (pinReadout): its step, line and text box.
    std::optional<double> pinned;
    QGraphicsLineItem* pinLine = nullptr;
    QGraphicsSimpleTextItem* pinText = nullptr;
    QGraphicsRectItem* pinBox = nullptr;

    // Every series' value at the point nearest to `x` ("name: value" lines).
    QString readoutAt(double x, const PlotContent& content) const {
        QStringList rows{QStringLiteral("%1 = %2").arg(content.x.title).arg(x, 0, 'g', 8)};
        for (size_t i = 0; i < lines.size() && i < content.series.size(); ++i) {
            const QVector<QPointF>& points = lines[i].points;
            if (points.isEmpty()) continue;
            const auto after = std::lower_bound(points.begin(), points.end(), x,
                                                [](const QPointF& p, double value) { return p.x() < value; });
            auto nearest = after == points.end() ? after - 1 : after;
            if (after != points.begin() && std::abs((after - 1)->x() - x) <= std::abs(nearest->x() - x))
                nearest = after - 1;
            rows << QStringLiteral("%1: %2").arg(content.series[i].name).arg(nearest->y(), 0, 'g', 6);
        }
        return rows.join(QLatin1Char('\n'));
    }

    // Places the pinned line and box for the current plot area and data.
    void placeReadout(const PlotContent& content) {
        const bool shown = pinned && xShown && *pinned >= xShown->min && *pinned <= xShown->max;
        for (QGraphicsItem* item :
             {static_cast<QGraphicsItem*>(pinLine), static_cast<QGraphicsItem*>(pinText),
              static_cast<QGraphicsItem*>(pinBox)})
            item->setVisible(shown);
        if (!shown || lines.empty()) return;
        const QRectF area = chart->plotArea();
        const double x = chart->mapToPosition({*pinned, yShown ? yShown->min : 0.0}, lines.front().tail).x();
        pinLine->setLine(x, area.top(), x, area.bottom());
        QFont font = pinText->font();
        font.setPointSizeF(style.points(8));
        pinText->setFont(font);
        pinText->setText(readoutAt(*pinned, content));
        const QRectF text = pinText->boundingRect();
        const double left = x + 6 + text.width() < area.right() ? x + 6 : x - 6 - text.width();
        pinText->setPos(left, area.top() + 4);
        pinBox->setRect(QRectF(left - 3, area.top() + 1, text.width() + 6, text.height() + 6));
    }

    double widthScale() const { return style.lineScale(); }

    // Makes axes of the kinds `content` needs; true when they were rebuilt (everything is redone).
    bool ensureAxes(const PlotContent& content) {
        const bool rebuild = !xAxis || xLog != content.x.log || yLog != content.y.log ||
                             hasY2 != content.y2.has_value() || (content.y2 && y2Log != content.y2->log);
        if (!rebuild) return false;
        while (!lines.empty()) removeLine();
        for (QLineSeries* line : markerLines) chart->removeSeries(line), delete line;
        markerLines.clear();
        for (QGraphicsSimpleTextItem* label : markerLabels) delete label;
        markerLabels.clear();
        markers.clear();
        clearBands();
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
        xShown.reset();
        yShown.reset();
        y2Shown.reset();
        for (QAbstractAxis* axis : {xAxis, yAxis, y2Axis}) {
            if (!axis) continue;
            QFont labels = axis->labelsFont();
            labels.setPointSizeF(style.points(ChartStyle::kBasePointSize));
            axis->setLabelsFont(labels);
            QFont title = axis->titleFont();
            title.setPointSizeF(style.points(9));
            axis->setTitleFont(title);
        }
        return true;
    }

    void addLine(LinePlot* plot) {
        Line line{new QLineSeries, new QLineSeries, {}, 0, new QScatterSeries, {}};
        line.nonFinite->setMarkerShape(QScatterSeries::MarkerShapeTriangle);
        line.nonFinite->setBorderColor(nonFiniteColour());
        chart->addSeries(line.nonFinite);
        attach(line.nonFinite, false);
        for (QLineSeries* part : {line.head, line.tail}) {
            chart->addSeries(part);
            attach(part, false);
            QObject::connect(part, &QLineSeries::hovered, plot,
                             [plot, part](const QPointF& point, bool state) {
                                 if (state) plot->m_impl->showValueTip(plot->m_content, part, point);
                             });
        }
        lines.push_back(line);
    }

    void removeLine() {
        for (QXYSeries* part :
             {static_cast<QXYSeries*>(lines.back().head), static_cast<QXYSeries*>(lines.back().tail),
              static_cast<QXYSeries*>(lines.back().nonFinite)})
            chart->removeSeries(part), delete part;
        lines.pop_back();
    }

    void setLine(Line& line, const PlotSeries& spec, QVector<QPointF> points) {
        const bool secondary = spec.onSecondaryAxis && y2Axis;
        QPen pen(spec.colour);
        pen.setWidthF(spec.width * widthScale());
        pen.setStyle(spec.style);
        pen.setCapStyle(Qt::RoundCap);
        for (QLineSeries* part : {line.head, line.tail}) {
            const auto attachedY = part->attachedAxes();
            const bool onY2 = y2Axis && attachedY.contains(y2Axis);
            if (secondary != onY2) {
                for (QAbstractAxis* axis : attachedY) part->detachAxis(axis);
                attach(part, secondary);
            }
            part->setName(spec.name);
            part->setPen(pen);
            part->setPointsVisible(spec.pointsVisible);
        }
        if (points == line.points) return;
        const LineSplit split = splitLine(line.points, line.headCount, points);
        if (split.headChanged) line.head->replace(points.mid(0, split.headCount));
        line.tail->replace(points.mid(std::max(split.headCount - 1, 0)));
        line.headCount = split.headCount;
        line.points = std::move(points);
    }

    // The NaN / Inf markers of `line`, in its colour, just under the top of the value range.
    void setNonFinite(Line& line, const PlotSeries& spec, QVector<double> steps) {
        const double size = 9.0 * style.lineScale();
        line.nonFinite->setMarkerSize(size);
        line.nonFinite->setColor(spec.colour);
        line.nonFinite->setName(spec.name + QObject::tr(" (NaN or Inf)"));
        const AxisRange& y = *yShown;
        const double top = yLog ? y.max * std::pow(y.min / y.max, 0.03) : y.max - 0.03 * (y.max - y.min);
        QList<QPointF> markers;
        markers.reserve(steps.size());
        for (double step : steps) markers.append({step, top});
        if (markers != line.nonFinite->points()) line.nonFinite->replace(markers);
        line.nonFiniteSteps = std::move(steps);
    }

    // True when the range changed.
    static bool applyRange(QAbstractAxis* axis, std::optional<AxisRange>& shown, const AxisRange& range) {
        if (shown == range) return false;
        setAxisRange(axis, range);
        shown = range;
        return true;
    }

    void clearBands() {
        for (QAbstractSeries* series : bands) chart->removeSeries(series), delete series;
        bands.clear();
        bandsShown.clear();
    }

    void attach(QAbstractSeries* series, bool secondary) {
        series->attachAxis(xAxis);
        series->attachAxis(secondary && y2Axis ? y2Axis : yAxis);
    }

    void setBands(const std::vector<PlotBand>& content) {
        clearBands();
        for (const PlotBand& band : content) {
            auto* upper = new QLineSeries;
            auto* lower = new QLineSeries;
            upper->append(band.upper);
            lower->append(band.lower);
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
            chart->addSeries(area);
            attach(area, false);
            bands.push_back(area);
        }
        bandsShown = content;
    }

    // Vertical dashed lines from the bottom to the top of the value range, with rotated labels.
    void setMarkers(const std::vector<PlotMarker>& shown, const AxisRange& y, const QFont& font) {
        markers = shown;
        while (markerLines.size() > markers.size()) {
            chart->removeSeries(markerLines.back());
            delete markerLines.back();
            markerLines.pop_back();
            delete markerLabels.back();
            markerLabels.pop_back();
        }
        while (markerLines.size() < markers.size()) {
            auto* line = new QLineSeries;
            chart->addSeries(line);
            attach(line, false);
            markerLines.push_back(line);
            auto* label = new QGraphicsSimpleTextItem(chart);
            label->setRotation(90);
            markerLabels.push_back(label);
        }
        for (size_t i = 0; i < markers.size(); ++i) {
            const PlotMarker& marker = markers[i];
            QLineSeries* line = markerLines[i];
            line->replace(QList<QPointF>{{marker.x, y.min}, {marker.x, y.max}});
            QPen pen(marker.colour);
            pen.setStyle(Qt::DashLine);
            pen.setWidthF(1.2 * widthScale());
            line->setPen(pen);
            line->setName(marker.label);
            QGraphicsSimpleTextItem* label = markerLabels[i];
            label->setText(marker.label);
            label->setFont(font);
            label->setBrush(marker.colour.darker(130));
        }
    }

    // The exact value of the point of `line` nearest to `point` (by x), as a tooltip.
    void showValueTip(const PlotContent& content, QLineSeries* line, const QPointF& point) const {
        const QList<QPointF> points = line->points();
        if (points.isEmpty()) return;
        const auto nearest =
            std::min_element(points.begin(), points.end(), [&](const QPointF& a, const QPointF& b) {
                return std::abs(a.x() - point.x()) < std::abs(b.x() - point.x());
            });
        const bool secondary = content.y2 && y2Axis && line->attachedAxes().contains(y2Axis);
        // Kept while the pointer rests within a few pixels of where it showed (not the default second).
        const QPoint at = QCursor::pos();
        QToolTip::showText(at,
                           QStringLiteral("%1\n%2 = %3\n%4 = %5")
                               .arg(line->name(), content.x.title)
                               .arg(nearest->x(), 0, 'g', 8)
                               .arg(secondary ? content.y2->title : content.y.title)
                               .arg(nearest->y(), 0, 'g', 6),
                           view, QRect(view->mapFromGlobal(at) - QPoint(12, 12), QSize(24, 24)), 60000);
    }

    // A value axis' title shrinks (to 60% at the least) rather than be elided when it is longer than
    // the plot is tall (presentation sizes, small figures).
    void fitAxisTitles() {
        const double available = chart->plotArea().height() - 4.0;
        if (available <= 0.0) return;
        for (QAbstractAxis* axis : {yAxis, y2Axis}) {
            if (!axis) continue;
            const double full = style.points(9);
            QFont font = axis->titleFont();
            double size = full;
            for (font.setPointSizeF(size);
                 QFontMetricsF(font).horizontalAdvance(axis->titleText()) > available && size > 0.6 * full;
                 font.setPointSizeF(size))
                size *= 0.92;
            if (std::abs(axis->titleFont().pointSizeF() - font.pointSizeF()) > 0.05) axis->setTitleFont(font);
        }
    }

    // Marker labels and the empty-plot text follow the plot area (after layout changes too).
    void placeLabels() {
        fitAxisTitles();
        const double top = yShown ? yShown->max : 1.0;
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

void LinePlot::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    m_impl->placeLabels();
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
    for (const PlotSeries& series : content.series) {
        const bool secondary = series.onSecondaryAxis && content.y2;
        drawn.push_back(drawable(series.points, content.x.log, secondary ? content.y2->log : content.y.log));
        for (const QPointF& p : drawn.back().points) {
            xData.include(p.x());
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
        if (xData.set) positive.include(std::max(xData.min, 1.0)), positive.include(xData.max);
        xData = positive;
    }
    const bool xChanged =
        Impl::applyRange(impl.xAxis, impl.xShown, stableAxisRange(content.x, xData, impl.xShown));
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
    // Let the scene work out what it must repaint now, so that a repaint of the window that follows
    // (the dashboard's, inside its timing) draws it.
    QCoreApplication::sendPostedEvents(impl.chart->scene(), QEvent::MetaCall);
    return true;
}

}  // namespace normlab::ui
