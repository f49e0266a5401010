// SweepMapView: layout (title, facets in a row, colour bar on the right), then each facet's cells,
// tick labels and titles; the same drawing serves the screen and exported figures.
#include "ui/sweep/sweep_map_view.h"

#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>

#include "ui/plots/colour_map.h"

namespace normlab::ui {

namespace {
constexpr double kMargin = 8.0;
}

SweepMapView::SweepMapView(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setMinimumSize(320, 200);
}

bool SweepMapView::setContent(SweepMapContent content) {
    if (content == m_content) return false;
    m_content = std::move(content);
    update();
    return true;
}

void SweepMapView::setStyle(const ChartStyle& style) {
    m_style = style;
    update();
}

void SweepMapView::setTitleShown(bool shown) {
    m_titleShown = shown;
    update();
}

QFont SweepMapView::baseFont() const {
    QFont base = font();
    base.setPointSizeF(m_style.points(ChartStyle::kBasePointSize));
    return base;
}

SweepMapView::Layout SweepMapView::layout() const {
    const QFontMetricsF metrics(baseFont());
    double yLabelWidth = metrics.horizontalAdvance(QStringLiteral("0000"));
    for (const QString& label : m_content.yLabels)
        yLabelWidth = std::max(yLabelWidth, metrics.horizontalAdvance(label));
    const double line = metrics.height();
    const double top = kMargin + (m_titleShown ? 1.6 * line * 1.3 : 0.0) + 1.4 * line;  // title, facet titles
    const double bottom = height() - kMargin - 2.6 * line;                              // x labels, x title
    const double left = kMargin + 1.4 * line + yLabelWidth + 6.0;                       // y title, y labels
    const double barWidth = 14.0 * m_style.lineScale();
    // room for the widest colour-bar label ("0.000", or "best 2.53" / "\u2265 +10%" on a relative scale)
    double labelWidth = metrics.horizontalAdvance(QStringLiteral("0.000"));
    for (int i = 0; i <= 4; ++i)
        labelWidth =
            std::max(labelWidth, metrics.horizontalAdvance(colourBarLabel(
                                     m_content.low + i / 4.0 * (m_content.high - m_content.low), i == 4)));
    const double right = width() - kMargin - barWidth - 8.0 - labelWidth - 4.0;
    Layout out;
    out.area =
        QRectF(QPointF(left, top), QPointF(std::max(left + 10.0, right), std::max(top + 10.0, bottom)));
    out.colourBar = QRectF(right + 8.0, top, barWidth, out.area.height());
    const size_t facets = std::max<size_t>(1, m_content.facets.size());
    const double gap = facets > 1 ? 2.0 * line : 0.0;
    const double facetWidth =
        (out.area.width() - gap * static_cast<double>(facets - 1)) / static_cast<double>(facets);
    for (size_t f = 0; f < facets; ++f)
        out.grids.emplace_back(out.area.left() + static_cast<double>(f) * (facetWidth + gap), out.area.top(),
                               facetWidth, out.area.height());
    return out;
}

QRectF SweepMapView::cellRect(const CellIndex& cell) const {
    const Layout shape = layout();
    const QRectF& grid = shape.grids.at(cell.facet);
    const double columns = static_cast<double>(std::max<qsizetype>(1, m_content.xLabels.size()));
    const double rows = static_cast<double>(std::max<qsizetype>(1, m_content.yLabels.size()));
    const double w = grid.width() / columns, h = grid.height() / rows;
    // Row 0 (the first value of the y axis) at the bottom, like a chart's axis.
    return QRectF(grid.left() + static_cast<double>(cell.x) * w,
                  grid.bottom() - static_cast<double>(cell.y + 1) * h, w, h);
}

std::optional<SweepMapView::CellIndex> SweepMapView::cellAt(const QPoint& at) const {
    for (size_t f = 0; f < m_content.facets.size(); ++f)
        for (size_t y = 0; y < m_content.facets[f].cells.size(); ++y)
            for (size_t x = 0; x < m_content.facets[f].cells[y].size(); ++x)
                if (cellRect({f, y, x}).contains(at)) return CellIndex{f, y, x};
    return std::nullopt;
}

void SweepMapView::drawCell(QPainter& painter, const MapCell& cell, const QRectF& rect) const {
    const QRectF inner = rect.adjusted(1, 1, -1, -1);
    if (cell.value) {
        const double span = m_content.high - m_content.low;
        painter.fillRect(inner, viridis(span > 0 ? (*cell.value - m_content.low) / span : 0.0));
    } else {
        painter.fillRect(inner, QColor(232, 232, 232));
    }
    if (cell.diverged > 0) {  // a cross: the run blew up (its value is the initial loss)
        painter.setPen(QPen(QColor(20, 20, 20), 1.6 * m_style.lineScale()));
        const QRectF mark = inner.adjusted(inner.width() * 0.3, inner.height() * 0.3, -inner.width() * 0.3,
                                           -inner.height() * 0.3);
        painter.drawLine(mark.topLeft(), mark.bottomRight());
        painter.drawLine(mark.bottomLeft(), mark.topRight());
    }
    if (cell.running > 0) {
        painter.setPen(QPen(QColor(30, 30, 30), 1.5 * m_style.lineScale(), Qt::DashLine));
        painter.drawRect(inner.adjusted(1, 1, -1, -1));
    }
    if (cell.failed > 0) {
        painter.setPen(QPen(QColor(200, 30, 30), 2.0 * m_style.lineScale()));
        painter.drawRect(inner.adjusted(1, 1, -1, -1));
    }
    if (cell.best || cell.nearBest) {  // a ring: the best cell; a dot: not told apart from it at 95%
        const double r = std::min(std::min(inner.width(), inner.height()) * 0.09, 5.0 * m_style.lineScale());
        const QPointF at(inner.right() - 2.2 * r, inner.top() + 2.2 * r);
        painter.setPen(QPen(Qt::white, 1.2 * m_style.lineScale()));
        painter.setBrush(cell.best ? Qt::NoBrush : QBrush(Qt::white));
        painter.drawEllipse(at, r, r);
        painter.setBrush(Qt::NoBrush);
    }
    if (cell.value && cell.diverged == 0 && inner.height() > 2.2 * QFontMetricsF(painter.font()).height()) {
        const double t = (*cell.value - m_content.low) / std::max(1e-12, m_content.high - m_content.low);
        painter.setPen(t > 0.6 ? Qt::black : Qt::white);
        painter.drawText(inner, Qt::AlignCenter, QString::number(*cell.value, 'f', 2));
    }
}

void SweepMapView::drawFacet(QPainter& painter, const MapFacet& facet, const QRectF& grid,
                             bool yLabels) const {
    const size_t index = static_cast<size_t>(&facet - m_content.facets.data());
    const QFontMetricsF metrics(painter.font());
    for (size_t y = 0; y < facet.cells.size(); ++y)
        for (size_t x = 0; x < facet.cells[y].size(); ++x)
            drawCell(painter, facet.cells[y][x], cellRect({index, y, x}));
    painter.setPen(QColor(60, 60, 60));
    painter.drawRect(grid);
    for (qsizetype x = 0; x < m_content.xLabels.size(); ++x) {
        const QRectF cell = cellRect({index, 0, static_cast<size_t>(x)});
        painter.drawText(QRectF(cell.left() - 20, grid.bottom() + 3, cell.width() + 40, metrics.height()),
                         Qt::AlignCenter, m_content.xLabels[x]);
    }
    if (yLabels)
        for (qsizetype y = 0; y < m_content.yLabels.size(); ++y) {
            const QRectF cell = cellRect({index, static_cast<size_t>(y), 0});
            painter.drawText(QRectF(0, cell.top(), grid.left() - 6, cell.height()),
                             Qt::AlignRight | Qt::AlignVCenter, m_content.yLabels[y]);
        }
    painter.drawText(
        QRectF(grid.left(), grid.bottom() + 3 + metrics.height(), grid.width(), metrics.height() * 1.4),
        Qt::AlignCenter, m_content.xTitle);
    if (!facet.title.isEmpty()) {
        QFont bold = painter.font();
        bold.setBold(true);
        painter.save();
        painter.setFont(bold);
        painter.drawText(
            QRectF(grid.left(), grid.top() - 1.4 * metrics.height(), grid.width(), metrics.height() * 1.3),
            Qt::AlignCenter, facet.title);
        painter.restore();
    }
}

QString SweepMapView::colourBarLabel(double value, bool top) const {
    if (m_content.relativeSpan <= 0) return QString::number(value, 'f', value < 10 ? 2 : 1);
    // Relative to the best cell: "best", then "+2.5%", ..., the top one ">= +10%" (cells beyond it too)
    const double percent = 100.0 * (value / m_content.low - 1.0);
    if (percent < 1e-9) return tr("best %1").arg(QString::number(m_content.low, 'f', 2));
    const QString text = QStringLiteral("+%1%").arg(QString::number(percent, 'g', 3));
    return top ? QStringLiteral("\u2265 ") + text : text;
}

void SweepMapView::drawColourBar(QPainter& painter, const QRectF& bar) const {
    const int steps = std::max(2, static_cast<int>(bar.height()));
    for (int i = 0; i < steps; ++i) {
        const double t = static_cast<double>(i) / (steps - 1);
        painter.fillRect(QRectF(bar.left(), bar.bottom() - (i + 1) * bar.height() / steps, bar.width(),
                                bar.height() / steps + 1),
                         viridis(t));
    }
    painter.setPen(QColor(60, 60, 60));
    painter.drawRect(bar);
    const QFontMetricsF metrics(painter.font());
    for (int i = 0; i <= 4; ++i) {
        const double t = i / 4.0;
        const double y = bar.bottom() - t * bar.height();
        const double value = m_content.low + t * (m_content.high - m_content.low);
        painter.drawText(QRectF(bar.right() + 4, y - metrics.height() / 2, 200, metrics.height()),
                         Qt::AlignLeft | Qt::AlignVCenter, colourBarLabel(value, i == 4));
    }
}

void SweepMapView::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing);
    if (m_style.opaque) painter.fillRect(rect(), Qt::white);
    const QFont base = baseFont();
    const QFontMetricsF metrics(base);
    if (m_titleShown) {
        QFont title = base;
        title.setPointSizeF(m_style.points(11));
        title.setBold(true);
        painter.setFont(title);
        painter.setPen(Qt::black);
        painter.drawText(QRectF(0, kMargin, width(), QFontMetricsF(title).height() * 1.3), Qt::AlignCenter,
                         m_content.title);
    }
    painter.setFont(base);
    painter.setPen(Qt::black);
    if (m_content.facets.empty()) {
        painter.drawText(rect(), Qt::AlignCenter, tr("No sweep points yet"));
        return;
    }
    const Layout shape = layout();
    for (size_t f = 0; f < m_content.facets.size(); ++f)
        drawFacet(painter, m_content.facets[f], shape.grids[f], f == 0);
    painter.save();
    painter.translate(kMargin + metrics.height() * 0.2, shape.area.center().y());
    painter.rotate(-90);
    painter.drawText(QRectF(-shape.area.height() / 2, 0, shape.area.height(), metrics.height() * 1.2),
                     Qt::AlignCenter, m_content.yTitle);
    painter.restore();
    drawColourBar(painter, shape.colourBar);
    drawMarkKey(painter);
}

void SweepMapView::drawMarkKey(QPainter& painter) const {
    bool intervals = false;  // the marks mean something only where cells have intervals (seeds)
    for (const MapFacet& facet : m_content.facets)
        for (const auto& row : facet.cells)
            for (const MapCell& cell : row) intervals = intervals || cell.ciLow.has_value();
    if (!intervals) return;
    const QFontMetricsF metrics(painter.font());
    painter.setPen(QColor(60, 60, 60));
    painter.drawText(
        QRectF(kMargin, height() - metrics.height() - 2, width() - 2 * kMargin, metrics.height()),
        Qt::AlignRight | Qt::AlignVCenter,
        tr("ring: the best cell; dot: its 95% CI over seeds overlaps the best cell's"));
}

namespace {
// The hover's last line: the cell's mean, seeds and interval, and its place against the best cell.
QString cellSummary(const MapCell& cell) {
    const QString mean = QString::number(*cell.value, 'f', 4);
    QString text = cell.seeds == 1 ? QObject::tr("cell mean %1 over 1 seed").arg(mean)
                                   : QObject::tr("cell mean %1 over %2 seeds").arg(mean).arg(cell.seeds);
    if (cell.ciLow)
        text += QObject::tr(", 95% CI %1 to %2").arg(*cell.ciLow, 0, 'f', 4).arg(*cell.ciHigh, 0, 'f', 4);
    if (cell.best) text += QObject::tr("; the best cell (ring)");
    if (cell.nearBest) text += QObject::tr("; its CI overlaps the best cell's (dot)");
    return text;
}
}  // namespace

void SweepMapView::mouseMoveEvent(QMouseEvent* event) {
    const std::optional<CellIndex> cell = cellAt(event->position().toPoint());
    if (!cell) {
        QToolTip::hideText();
        return;
    }
    const MapCell& hovered = m_content.facets[cell->facet].cells[cell->y][cell->x];
    QString text = hovered.tip.isEmpty() ? tr("no point here") : hovered.tip;
    if (hovered.value) text += QLatin1Char('\n') + cellSummary(hovered) + tr(" (click to open its runs)");
    QToolTip::showText(event->globalPosition().toPoint(), text, this);
}

void SweepMapView::mouseReleaseEvent(QMouseEvent* event) {
    if (event->button() != Qt::LeftButton) return;
    if (const std::optional<CellIndex> cell = cellAt(event->position().toPoint())) {
        const MapCell& clicked = m_content.facets[cell->facet].cells[cell->y][cell->x];
        if (!clicked.folders.isEmpty()) emit cellActivated(clicked.folders);
    }
}

}  // namespace normlab::ui
