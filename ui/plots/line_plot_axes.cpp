// LinePlot's axes (line_plot_impl.h): made for the content's scales, ranged, and their ticks and titles
// fitted to the plot's size.
#include "ui/plots/line_plot_impl.h"

#include <QFontMetricsF>
#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace normlab::ui {

bool LinePlot::Impl::ensureAxes(const PlotContent& content) {
    const bool rebuild = !xAxis || xLog != content.x.log || yLog != content.y.log ||
                         hasY2 != content.y2.has_value() || (content.y2 && y2Log != content.y2->log);
    if (!rebuild) return false;
    lines->resize(0, axes());
    overlays->clear();
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

bool LinePlot::Impl::applyRange(QAbstractAxis* axis, std::optional<AxisRange>& shown,
                                const AxisRange& range) {
    if (shown == range) return false;
    setAxisRange(axis, range);
    shown = range;
    return true;
}

void LinePlot::Impl::fitTicks() {
    const QRectF area = chart->plotArea();
    if (!xAxis || area.height() <= 0.0 || area.width() <= 0.0) return;
    const auto fit = [](QAbstractAxis* axis, const std::optional<AxisRange>& shown, double pixels,
                        double label) {
        if (!axis || !shown) return;
        if (auto* log = qobject_cast<QLogValueAxis*>(axis)) {
            const double base = logBaseFitting(*shown, pixels, label);
            if (log->base() == base) return;
            log->setBase(base);
            log->setMinorTickCount(base == 10.0 ? -1 : 0);
        } else if (auto* value = qobject_cast<QValueAxis*>(axis)) {
            const double tick = tickIntervalFitting(*shown, pixels, label);
            if (value->tickInterval() != tick) value->setTickInterval(tick);
        }
    };
    const QFontMetricsF metrics(yAxis->labelsFont());
    fit(yAxis, yShown, area.height(), metrics.height());
    fit(y2Axis, y2Shown, area.height(), metrics.height());
    if (xShown)
        fit(xAxis, xShown, area.width(),
            metrics.horizontalAdvance(
                QString::number(std::max(std::abs(xShown->min), std::abs(xShown->max)), 'g', 4)) +
                metrics.averageCharWidth());
}

void LinePlot::Impl::fitAxisTitles() {
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

void LinePlot::Impl::placeLabels() {
    fitTicks();
    fitAxisTitles();
    overlays->placeMarkerLabels(yShown ? yShown->max : 1.0);
    overlays->placeEmptyText();
}

}  // namespace normlab::ui
