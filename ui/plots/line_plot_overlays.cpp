// What LinePlot draws over its lines (line_plot_impl.h): pinned notes, the pinned readout (placed by
// PlotReadout, plot_readout.h) and the hover tooltip with exact values.
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
    std::vector<PlotReadout::Series> series;
    for (size_t i = 0; i < lines.size() && i < content.series.size(); ++i)
        series.push_back({content.series[i].name, &lines[i].points});
    return PlotReadout::text(x, content.x.title, series);
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
    const std::optional<double>& pinned = readout->step();
    if (!pinned || !xShown || *pinned < xShown->min || *pinned > xShown->max || lines.empty()) {
        readout->hide();
        return;
    }
    const double x = chart->mapToPosition({*pinned, yShown ? yShown->min : 0.0}, lines.front().tail).x();
    readout->place(x, chart->plotArea(), chart->mapRectToScene(chart->rect()), readoutAt(*pinned, content),
                   style.points(8));
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
