// What LinePlot draws over its lines (line_plot_impl.h): pinned notes, the pinned readout and the
// hover tooltip with exact values.
#include <QFontMetricsF>
#include <algorithm>

#include "ui/plots/line_plot_impl.h"

namespace normlab::ui {

void LinePlot::Impl::placeNotes(const std::vector<PlotAnnotation>& annotations) {
    while (notes.size() > annotations.size()) {
        delete notes.back().text;
        delete notes.back().arrow;
        notes.pop_back();
    }
    while (notes.size() < annotations.size()) {
        Note note{new QGraphicsSimpleTextItem(chart), new QGraphicsLineItem(chart)};
        note.text->setZValue(900);
        note.arrow->setZValue(900);
        notes.push_back(note);
    }
    if (lines.empty()) return;
    QFont font = chart->titleFont();
    font.setBold(false);
    font.setPointSizeF(style.points(8.5));
    for (size_t i = 0; i < notes.size(); ++i) {
        const PlotAnnotation& annotation = annotations[i];
        const QPointF at = chart->mapToPosition({annotation.x, annotation.y}, lines.front().tail);
        const bool shown = chart->plotArea().contains(at);
        notes[i].text->setVisible(shown);
        notes[i].arrow->setVisible(shown);
        if (!shown) continue;
        notes[i].text->setFont(font);
        notes[i].text->setText(annotation.text);
        notes[i].text->setBrush(QColor(40, 40, 40));
        // The text above and to the right of its point, kept inside the plot.
        const QRectF box = notes[i].text->boundingRect();
        const double offset = 18.0 * style.lineScale();
        QPointF corner(at.x() + offset, at.y() - offset - box.height());
        corner.setX(std::min(corner.x(), chart->plotArea().right() - box.width()));
        corner.setY(std::max(corner.y(), chart->plotArea().top()));
        notes[i].text->setPos(corner);
        notes[i].arrow->setPen(QPen(QColor(40, 40, 40), 1.2 * style.lineScale()));
        notes[i].arrow->setLine(QLineF(QPointF(corner.x(), corner.y() + box.height()), at));
    }
}

QString LinePlot::Impl::readoutAt(double x, const PlotContent& content) const {
    QStringList rows{QStringLiteral("%1 = %2").arg(content.x.title).arg(x, 0, 'g', 8)};
    for (size_t i = 0; i < lines.size() && i < content.series.size(); ++i) {
        const QVector<QPointF>& points = lines[i].points;
        if (points.isEmpty()) continue;
        // Its value at the step, else its last before it, which then names its own step (the nearest
        // point once showed a later step's value, or a run that had ended, as if it were this step's).
        const double tolerance = 1e-9 * std::max(1.0, std::abs(x));
        const auto after = std::upper_bound(points.begin(), points.end(), x + tolerance,
                                            [](double value, const QPointF& p) { return value < p.x(); });
        if (after == points.begin()) continue;  // nothing yet at this step
        const QPointF& value = *(after - 1);
        QString row = QStringLiteral("%1: %2").arg(content.series[i].name).arg(value.y(), 0, 'g', 6);
        if (std::abs(value.x() - x) > tolerance)
            row += QStringLiteral(" (%1 %2)").arg(content.x.title).arg(value.x(), 0, 'g', 8);
        rows << row;
    }
    return rows.join(QLatin1Char('\n'));
}

double LinePlot::Impl::nearestDrawnStep(double x) const {
    for (const Line& line : lines) {
        if (line.points.isEmpty()) continue;
        return std::min_element(line.points.begin(), line.points.end(),
                                [x](const QPointF& p, const QPointF& q) {
                                    return std::abs(p.x() - x) < std::abs(q.x() - x);
                                })
            ->x();
    }
    return x;
}

void LinePlot::Impl::placeReadout(const PlotContent& content) {
    const bool shown = pinned && xShown && *pinned >= xShown->min && *pinned <= xShown->max;
    for (QGraphicsItem* item : {static_cast<QGraphicsItem*>(pinLine), static_cast<QGraphicsItem*>(pinText),
                                static_cast<QGraphicsItem*>(pinBox)})
        item->setVisible(shown);
    if (!shown || lines.empty()) return;
    const QRectF area = chart->plotArea();
    const double x = chart->mapToPosition({*pinned, yShown ? yShown->min : 0.0}, lines.front().tail).x();
    pinLine->setLine(x, area.top(), x, area.bottom());
    QFont font = pinText->font();
    font.setPointSizeF(style.points(8));
    pinText->setFont(font);
    // Drawn within the chart: beside the line, on its right if it fits there, else its left, moved in
    // from the chart's edges (it once hung off the left edge, cutting the run names off); rows wider
    // than the whole chart are shortened in their middle.
    const QRectF whole = chart->mapRectToScene(chart->rect());
    const QFontMetricsF metrics(font);
    QStringList rows = readoutAt(*pinned, content).split(QLatin1Char('\n'));
    for (QString& row : rows) row = metrics.elidedText(row, Qt::ElideMiddle, whole.width() - 12);
    // No taller than the plot: the rows that fit, then how many more (the readout's text has them all).
    const int fitting = std::max(2, static_cast<int>((area.height() - 8) / metrics.lineSpacing()));
    if (rows.size() > fitting) {
        const qsizetype hidden = rows.size() - (fitting - 1);
        rows = rows.mid(0, fitting - 1);
        rows << QCoreApplication::translate("LinePlot", "... %1 more (the chart's CSV has them)").arg(hidden);
    }
    pinText->setText(rows.join(QLatin1Char('\n')));
    const QRectF text = pinText->boundingRect();
    double left = x + 6 + text.width() < area.right() ? x + 6 : x - 6 - text.width();
    const double lowest = text.width() <= area.width() ? area.left() + 3 : whole.left() + 4;
    left = std::clamp(left, lowest, std::max(lowest, whole.right() - 4 - text.width()));
    pinText->setPos(left, area.top() + 4);
    pinBox->setRect(QRectF(left - 3, area.top() + 1, text.width() + 6, text.height() + 6));
}

void LinePlot::Impl::showValueTip(const PlotContent& content, QLineSeries* line, const QPointF& point) const {
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

}  // namespace normlab::ui
