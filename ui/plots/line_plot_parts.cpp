// LinePlot's plain functions (line_plot_parts.h).
#include "ui/plots/line_plot_parts.h"

#include <QLogValueAxis>
#include <QRegularExpression>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

#include "ui/plots/colour_map.h"

namespace normlab::ui {

namespace {
// A name that never breaks across legend lines (Qt's rich text breaks after hyphens even in nowrap).
QString unbreakable(QString name) {
    return name.replace(QLatin1Char('-'), QChar(0x2011));  // non-breaking hyphen
}

// A legend entry: its glyph joined to the first piece of the name, each piece unbroken, with a line
// break allowed only before " / " and " (" (a fork's or a step's suffix), so that a long name such as
// "postln-no-warmup / fork@120 (step 150)" wraps in a narrow chart instead of running out of it.
QString legendEntry(const QString& glyphHtml, const QString& name) {
    static const QRegularExpression suffix(QStringLiteral("(?= / | \\()"));
    const QStringList pieces = name.split(suffix);
    const auto unbroken = [](const QString& html) {
        return QStringLiteral("<span style='white-space:nowrap'>%1</span>").arg(html);
    };
    QString entry =
        unbroken(glyphHtml + QStringLiteral("&nbsp;") + unbreakable(pieces.front()).toHtmlEscaped());
    for (qsizetype i = 1; i < pieces.size(); ++i)
        entry += QLatin1Char(' ') + unbroken(unbreakable(pieces[i].mid(1)).toHtmlEscaped());
    return entry;
}
}  // namespace

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

// The legend as wrapping rich text: a short line in each series' colour and style, then its name;
// the content's note under it.
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
        items << legendEntry(
            QStringLiteral("<b style='color:%1'>%2</b>").arg(colour.name(), glyph(series.style)),
            series.name);
    }
    QStringList bandTexts;  // several seed groups' bands say what they are once, in grey
    for (const PlotBand& band : content.bands) {
        const QString text = band.legend.isEmpty() ? band.name : band.legend;
        if (bandTexts.contains(text)) continue;
        bandTexts << text;
        const QColor colour = band.legend.isEmpty() ? band.colour.lighter(150) : QColor(0xb0, 0xb0, 0xb0);
        items << QStringLiteral(
                     "<span style='white-space:nowrap'><b style='color:%1'>&#9608;&#9608;</b>&nbsp;%2</span>")
                     .arg(colour.name(), text.toHtmlEscaped());
    }
    if (!content.styleKey.isEmpty())
        items << QStringLiteral("<span style='white-space:nowrap; color:#555555'>%1</span>")
                     .arg(content.styleKey.toHtmlEscaped());
    if (hasNonFinite)
        items << QStringLiteral(
                     "<span style='white-space:nowrap'><b style='color:%1'>&#9650;</b>&nbsp;%2</span>")
                     .arg(nonFiniteColour().name(), QObject::tr("NaN or Inf (at the top)"));
    QString html = items.join(QStringLiteral(" &nbsp;&nbsp; "));
    if (!content.note.isEmpty())
        html += QStringLiteral("<div style='color:#333333'>%1</div>")
                    .arg(content.note.toHtmlEscaped().replace(QLatin1Char('\n'), QStringLiteral("<br>")));
    return html;
}

namespace {
// True when QtCharts' log domain would treat a move of one axis end from `shown` to `next` as no change
// although it is one (both differ by at most its absolute tolerance of 1e-12).
bool logDomainWouldIgnore(double shown, double next) {
    return shown != next && std::abs(shown - next) <= 1e-12;
}
}  // namespace

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
        // At most ~7 labels: over many decades, label every 10^k (a base of 100, 1000, ...); LinePlot
        // widens it further where the labels would not fit the plot's height (logBaseFitting).
        const double base = logBaseFitting(range, 0.0, 0.0);
        log->setBase(base);
        // Minor ticks at 2..9 x 10^k only for a base of 10: QtCharts draws base - 2 of them between two
        // labels, which for a base of 10^40 would never finish.
        log->setMinorTickCount(base == 10.0 ? -1 : 0);
        // QtCharts labels the powers of the base from ceil(log(min)); log10 of a computed 1e-3 can come
        // out as -2.9999999999999996, which would drop the bottom label. Nudge the end just below.
        const double min = range.min * (1.0 - 1e-9);
        // QtCharts' log domains take a new range only when an end moved by more than 1e-12 in absolute
        // terms (qFuzzyIsNull of the difference): from 1e-20..1 to 1e-14..1 the labels moved while the
        // lines kept the old mapping, drawn decades off. A detour through 1..10 makes both ends move.
        if (logDomainWouldIgnore(log->min(), min) || logDomainWouldIgnore(log->max(), range.max))
            axis->setRange(1.0, 10.0);
        axis->setRange(min, range.max);
        return;
    }
    if (auto* value = qobject_cast<QValueAxis*>(axis)) {
        // Round ticks at multiples of the interval.
        value->setTickAnchor(0.0);
        value->setTickInterval(range.tick > 0.0 ? range.tick : niceStep((range.max - range.min) / 6.0));
    }
    axis->setRange(range.min, range.max);
}

DrawnContent drawnContent(const PlotContent& content,
                          const std::optional<std::pair<double, double>>& window) {
    DrawnContent drawn;
    drawn.series.reserve(content.series.size());
    for (const PlotSeries& series : content.series) {
        const bool secondary = series.onSecondaryAxis && content.y2;
        drawn.series.push_back(
            drawable(series.points, content.x.log, secondary ? content.y2->log : content.y.log));
        for (const QPointF& p : drawn.series.back().points) {
            drawn.x.include(p.x());
            if (!window || (p.x() >= window->first && p.x() <= window->second))
                (secondary ? drawn.y2 : drawn.y).include(p.y());
        }
        for (double step : drawn.series.back().nonFiniteSteps) drawn.x.include(step);
        drawn.anyNonFinite = drawn.anyNonFinite || !drawn.series.back().nonFiniteSteps.isEmpty();
    }
    // A band's values count for the value axis only inside the zoomed span, as lines' do.
    const auto inWindow = [&window](const QPointF& p) {
        return !window || (p.x() >= window->first && p.x() <= window->second);
    };
    for (const PlotBand& band : content.bands) {
        for (const QPointF& p : band.lower) {
            drawn.x.include(p.x());
            if (inWindow(p)) drawn.y.include(content.y.log && p.y() <= 0 ? NAN : p.y());
        }
        for (const QPointF& p : band.upper)
            if (inWindow(p)) drawn.y.include(p.y());
    }
    if (content.x.log) {
        DataRange positive;
        // Drawable points are positive already; a range that reaches 0 (a step at 0) starts at 1.
        if (drawn.x.set)
            positive.include(drawn.x.min > 0.0 ? drawn.x.min : 1.0), positive.include(drawn.x.max);
        drawn.x = positive;
    }
    return drawn;
}

std::pair<double, double> stepExtent(const PlotContent& content) {
    std::pair<double, double> extent{INFINITY, -INFINITY};
    for (const PlotSeries& series : content.series) {
        if (series.points.isEmpty()) continue;
        extent.first = std::min(extent.first, series.points.front().x());
        extent.second = std::max(extent.second, series.points.back().x());
    }
    return extent;
}

double latestStep(const PlotContent& content) {
    return stepExtent(content).second;
}

}  // namespace normlab::ui
