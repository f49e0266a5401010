// Painting of the block x step heatmap: cells scaled into the plot rectangle, ticks on both axes,
// and a vertical colour bar labelled in powers of ten.
#include "ui/plots/heatmap_view.h"

#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>
#include <cmath>

#include "ui/plots/axis_range.h"
#include "ui/plots/colour_bar_ticks.h"
#include "ui/plots/colour_map.h"

namespace normlab::ui {

HeatmapView::HeatmapView(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setMinimumSize(200, 150);
    setAutoFillBackground(true);
    QPalette background = palette();
    background.setColor(QPalette::Window, Qt::white);
    setPalette(background);
}

bool HeatmapView::setContent(HeatmapContent content) {
    if (content == m_content) return false;
    m_content = std::move(content);
    m_logRange = computeLogRange();
    m_cells = cellImage();
    update();
    return true;
}

void HeatmapView::setTitleShown(bool shown) {
    m_titleShown = shown;
    update();
}

void HeatmapView::setStyle(const ChartStyle& style) {
    m_style = style;
    setAutoFillBackground(style.opaque);
    update();
}

std::pair<double, double> HeatmapView::logRange() const {
    return m_logRange;
}

std::pair<double, double> HeatmapView::computeLogRange() const {
    double lo = INFINITY, hi = -INFINITY;
    for (const HeatColumn& column : m_content.columns)
        for (double value : column.values)
            if (std::isfinite(value) && value > 0)
                lo = std::min(lo, std::log10(value)), hi = std::max(hi, std::log10(value));
    if (!std::isfinite(lo)) return {-3.0, 0.0};
    if (hi - lo < 1e-6) hi = lo + 1.0;
    return {lo, hi};
}

QRect HeatmapView::plotRect() const {
    const double scale = m_style.fontScale;
    const int left = static_cast<int>(52 * scale), top = static_cast<int>((m_titleShown ? 30 : 10) * scale),
              right = static_cast<int>(92 * scale), bottom = static_cast<int>(44 * scale);
    return QRect(left, top, std::max(width() - left - right, 10), std::max(height() - top - bottom, 10));
}

void HeatmapView::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    if (m_style.opaque) painter.fillRect(rect(), Qt::white);
    QFont base = font();
    base.setPointSizeF(m_style.points(ChartStyle::kBasePointSize));
    QFont titleFont = base;
    titleFont.setPointSizeF(m_style.points(11));
    titleFont.setBold(true);
    painter.setFont(titleFont);
    painter.setPen(Qt::black);
    if (m_titleShown) drawTitle(painter, titleFont);
    painter.setFont(base);

    const QRect plot = plotRect();
    const int blocks =
        m_content.columns.empty() ? 0 : static_cast<int>(m_content.columns.front().values.size());
    if (blocks == 0) {
        painter.setPen(QColor(120, 120, 120));
        painter.drawText(plot, Qt::AlignCenter, m_content.emptyText);
        return;
    }
    // Columns are logged steps at a regular spacing: each gets an equal share of the width.
    painter.drawImage(QRectF(plot.left(), plot.top(), plot.width() + 1, plot.height() + 1), m_cells);
    painter.setPen(QColor(60, 60, 60));
    painter.drawRect(plot);

    const QFontMetrics metrics(base);
    drawBlockTicks(painter, plot, metrics, blocks);
    drawStepTicks(painter, plot, metrics);
    drawAxisTitles(painter, plot, metrics);
    drawColourBar(painter, plot, metrics);
}

void HeatmapView::drawBlockTicks(QPainter& painter, const QRect& plot, const QFontMetrics& metrics,
                                 int blocks) const {
    // As many as fit without overlapping, at most ~12.
    const double rowHeight = static_cast<double>(plot.height()) / blocks;
    const int fitting = std::max(1, static_cast<int>(plot.height() / (metrics.height() * 1.3)));
    const int blockEvery = std::max(1, (blocks + std::min(fitting, 12) - 1) / std::min(fitting, 12));
    for (int b = 0; b < blocks; b += blockEvery) {
        const double y = plot.bottom() + 1 - (b + 0.5) * rowHeight;
        painter.drawText(QRectF(plot.left() - 6 - metrics.horizontalAdvance(QStringLiteral("000")),
                                y - metrics.height() / 2.0, metrics.horizontalAdvance(QStringLiteral("000")),
                                metrics.height()),
                         Qt::AlignRight | Qt::AlignVCenter, QString::number(b));
    }
}

void HeatmapView::drawAxisTitles(QPainter& painter, const QRect& plot, const QFontMetrics& metrics) const {
    painter.drawText(
        QRect(plot.left(), plot.bottom() + 6 + metrics.height(), plot.width(), metrics.height() + 4),
        Qt::AlignHCenter, m_content.xTitle);
    painter.save();
    painter.translate(12, plot.center().y());
    painter.rotate(-90);
    painter.drawText(QRect(-plot.height() / 2, -10, plot.height(), metrics.height() + 4), Qt::AlignHCenter,
                     m_content.yTitle);
    painter.restore();
}

void HeatmapView::drawColourBar(QPainter& painter, const QRect& plot, const QFontMetrics& metrics) const {
    const auto [lo, hi] = m_logRange;
    const QRect bar(plot.right() + 14, plot.top(), static_cast<int>(14 * m_style.lineScale()), plot.height());
    static const QImage scale = [] {
        QImage image(1, 512, QImage::Format_RGB32);
        for (int y = 0; y < image.height(); ++y)
            image.setPixel(0, image.height() - 1 - y, viridis((y + 0.5) / image.height()).rgb());
        return image;
    }();
    painter.drawImage(QRectF(bar.left(), bar.top(), bar.width(), bar.height()), scale);
    painter.drawRect(bar);
    const double labelHeight = metrics.height() + 2;
    for (const ColourBarTick& tick : colourBarTicks(lo, hi, bar.height(), labelHeight)) {
        const double y = bar.bottom() - (tick.exponent - lo) / (hi - lo) * bar.height();
        painter.drawLine(QPointF(bar.right(), y), QPointF(bar.right() + 3, y));
        painter.drawText(QRectF(bar.right() + 5, y - labelHeight / 2,
                                metrics.horizontalAdvance(tick.text) + 4, labelHeight),
                         Qt::AlignLeft | Qt::AlignVCenter, tick.text);
    }
    painter.save();
    painter.translate(width() - 6, plot.center().y());
    painter.rotate(-90);
    painter.drawText(QRect(-plot.height() / 2, -metrics.height(), plot.height(), metrics.height() + 2),
                     Qt::AlignHCenter, m_content.colourTitle);
    painter.restore();
}

void HeatmapView::drawTitle(QPainter& painter, QFont font) const {
    // Shrunk to fit the width (down to 70%), then elided: a figure's narrow chart keeps its whole title.
    const QRect band(4, 2, width() - 8, plotRect().top() - 4);
    const double full = font.pointSizeF();
    while (QFontMetrics(font).horizontalAdvance(m_content.title) > band.width() &&
           font.pointSizeF() > 0.7 * full)
        font.setPointSizeF(font.pointSizeF() * 0.95);
    painter.setFont(font);
    const QString text = QFontMetrics(font).elidedText(m_content.title, Qt::ElideRight, band.width());
    painter.drawText(band, Qt::AlignCenter, text);
}

void HeatmapView::drawStepTicks(QPainter& painter, const QRect& plot, const QFontMetrics& metrics) const {
    // Columns are logged steps at a regular spacing, so steps map linearly onto the width.
    const double first = m_content.columns.front().x_first, last = m_content.columns.back().x_last;
    const auto xOf = [&](double step) {
        return last > first ? plot.left() + (step - first) / (last - first) * plot.width()
                            : plot.center().x();
    };
    const int fitting =
        std::max(2, static_cast<int>(plot.width() /
                                     (metrics.horizontalAdvance(QString::number(std::llround(last))) * 2.5)));
    const double every = niceStep((last - first) / std::min(fitting, 6));
    std::vector<double> ticks{first};
    for (double step = every * std::ceil(first / every); step <= last + 1e-9; step += every)
        if (step - first >= every * 0.5) ticks.push_back(step);
    // A label that would touch the one before it is left out (the first step and a round one close by).
    double drawnUpTo = -INFINITY;
    for (double step : ticks) {
        const double x = xOf(step);
        const QString text = QString::number(std::llround(step));
        const double half = metrics.horizontalAdvance(text) / 2.0;
        if (x - half < drawnUpTo + metrics.averageCharWidth()) continue;
        drawnUpTo = x + half;
        painter.drawLine(QPointF(x, plot.bottom()), QPointF(x, plot.bottom() + 4));
        painter.drawText(QRectF(x - 40, plot.bottom() + 5, 80, metrics.height()), Qt::AlignHCenter, text);
    }
}

QImage HeatmapView::cellImage() const {
    const int blocks =
        m_content.columns.empty() ? 0 : static_cast<int>(m_content.columns.front().values.size());
    if (blocks == 0) return {};
    const auto [lo, hi] = m_logRange;
    QImage cells(static_cast<int>(m_content.columns.size()), blocks, QImage::Format_RGB32);
    for (size_t c = 0; c < m_content.columns.size(); ++c) {
        const HeatColumn& column = m_content.columns[c];
        for (int b = 0; b < blocks; ++b) {
            const double value = b < static_cast<int>(column.values.size()) ? column.values[b] : 0.0;
            const QColor colour = !std::isfinite(value) ? nonFiniteColour()
                                  : value <= 0          ? viridis(0.0)
                                                        : viridis((std::log10(value) - lo) / (hi - lo));
            cells.setPixel(static_cast<int>(c), blocks - 1 - b, colour.rgb());
        }
    }
    return cells;
}

void HeatmapView::mouseMoveEvent(QMouseEvent* event) {
    const QRect plot = plotRect();
    const int blocks =
        m_content.columns.empty() ? 0 : static_cast<int>(m_content.columns.front().values.size());
    if (blocks == 0 || !plot.contains(event->position().toPoint())) return;
    const double fx = (event->position().x() - plot.left()) / plot.width();
    const auto c = std::clamp<size_t>(static_cast<size_t>(fx * m_content.columns.size()), 0,
                                      m_content.columns.size() - 1);
    const int b = std::clamp(
        static_cast<int>((plot.bottom() - event->position().y()) / (double(plot.height()) / blocks)), 0,
        blocks - 1);
    const HeatColumn& column = m_content.columns[c];
    const QString steps =
        column.x_first == column.x_last
            ? QString::number(column.x_first, 'f', 0)
            : QStringLiteral("%1-%2 (max)").arg(column.x_first, 0, 'f', 0).arg(column.x_last, 0, 'f', 0);
    QToolTip::showText(event->globalPosition().toPoint(),
                       QStringLiteral("step %1, block %2\n%3 = %4")
                           .arg(steps)
                           .arg(b)
                           .arg(m_content.colourTitle)
                           .arg(column.values[b], 0, 'g', 5),
                       this);
}

}  // namespace normlab::ui
