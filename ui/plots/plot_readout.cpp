// PlotReadout: the readout's text from the points drawn, and its line and box placed in the chart.
#include "ui/plots/plot_readout.h"

#include <QCoreApplication>
#include <QFontMetricsF>
#include <QGraphicsLineItem>
#include <QGraphicsRectItem>
#include <QGraphicsSimpleTextItem>
#include <QPen>
#include <QStringList>
#include <algorithm>
#include <array>
#include <cmath>

namespace normlab::ui {

PlotReadout::PlotReadout(QGraphicsItem* chart)
    : m_line(new QGraphicsLineItem(chart)),
      m_box(new QGraphicsRectItem(chart)),
      m_text(new QGraphicsSimpleTextItem(chart)) {
    m_line->setPen(QPen(QColor(60, 60, 60), 1.0, Qt::DashLine));
    m_box->setBrush(QColor(255, 255, 255, 235));
    m_box->setPen(QPen(QColor(120, 120, 120)));
    for (QGraphicsItem* item : items()) item->setZValue(1000 + (item == m_text));
    hide();
}

std::array<QGraphicsItem*, 3> PlotReadout::items() const {
    return {m_line, m_box, m_text};
}

void PlotReadout::show(bool shown) {
    for (QGraphicsItem* item : items()) item->setVisible(shown);
}

QString PlotReadout::text(double x, const QString& xTitle, const std::vector<Series>& series) {
    QStringList rows{QStringLiteral("%1 = %2").arg(xTitle).arg(x, 0, 'g', 8)};
    for (const Series& each : series) {
        const QVector<QPointF>& points = *each.points;
        if (points.isEmpty()) continue;
        // Its value at the step, else its last before it, which then names its own step (the nearest
        // point once showed a later step's value, or a run that had ended, as if it were this step's).
        const double tolerance = 1e-9 * std::max(1.0, std::abs(x));
        const auto after = std::upper_bound(points.begin(), points.end(), x + tolerance,
                                            [](double value, const QPointF& p) { return value < p.x(); });
        if (after == points.begin()) continue;  // nothing yet at this step
        const QPointF& value = *(after - 1);
        QString row = QStringLiteral("%1: %2").arg(each.name).arg(value.y(), 0, 'g', 6);
        if (std::abs(value.x() - x) > tolerance)
            row += QStringLiteral(" (%1 %2)").arg(xTitle).arg(value.x(), 0, 'g', 8);
        rows << row;
    }
    return rows.join(QLatin1Char('\n'));
}

void PlotReadout::hide() {
    show(false);
}

void PlotReadout::place(double lineX, const QRectF& area, const QRectF& whole, const QString& text,
                        double points) {
    show(true);
    m_line->setLine(lineX, area.top(), lineX, area.bottom());
    QFont font = m_text->font();
    font.setPointSizeF(points);
    m_text->setFont(font);
    // Drawn within the chart: beside the line, on its right if it fits there, else its left, moved in
    // from the chart's edges (it once hung off the left edge, cutting the run names off); rows wider
    // than the whole chart are shortened in their middle.
    const QFontMetricsF metrics(font);
    QStringList rows = text.split(QLatin1Char('\n'));
    for (QString& row : rows) row = metrics.elidedText(row, Qt::ElideMiddle, whole.width() - 12);
    // No taller than the plot: the rows that fit, then how many more (the readout's text has them all).
    const int fitting = std::max(2, static_cast<int>((area.height() - 8) / metrics.lineSpacing()));
    if (rows.size() > fitting) {
        const qsizetype hidden = rows.size() - (fitting - 1);
        rows = rows.mid(0, fitting - 1);
        rows << QCoreApplication::translate("LinePlot", "... %1 more (the chart's CSV has them)").arg(hidden);
    }
    m_text->setText(rows.join(QLatin1Char('\n')));
    const QRectF box = m_text->boundingRect();
    double left = lineX + 6 + box.width() < area.right() ? lineX + 6 : lineX - 6 - box.width();
    const double lowest = box.width() <= area.width() ? area.left() + 3 : whole.left() + 4;
    left = std::clamp(left, lowest, std::max(lowest, whole.right() - 4 - box.width()));
    m_text->setPos(left, area.top() + 4);
    m_box->setRect(QRectF(left - 3, area.top() + 1, box.width() + 6, box.height() + 6));
}

QRectF PlotReadout::sceneBox() const {
    return m_box->isVisible() ? m_box->sceneBoundingRect() : QRectF();
}

}  // namespace normlab::ui
