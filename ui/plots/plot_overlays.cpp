// PlotOverlays: bands as area series, markers as dashed line series with rotated labels, notes as text
// and arrow items, the empty text as one wrapped label; each rebuilt only when what it shows changes.
#include "ui/plots/plot_overlays.h"

#include <QAreaSeries>
#include <QChart>
#include <QFontMetricsF>
#include <QGraphicsLineItem>
#include <QGraphicsSimpleTextItem>
#include <QLineSeries>
#include <QPen>
#include <QStringList>
#include <algorithm>
#include <cmath>
#include <utility>

namespace normlab::ui {

namespace {
void attach(QAbstractSeries* series, QAbstractAxis* x, QAbstractAxis* y) {
    series->attachAxis(x);
    series->attachAxis(y);
}
}  // namespace

PlotOverlays::PlotOverlays(QChart* chart) : m_chart(chart), m_emptyLabel(new QGraphicsSimpleTextItem(chart)) {
    m_emptyLabel->setBrush(QColor(120, 120, 120));
}

void PlotOverlays::clear() {
    for (QLineSeries* line : m_markerLines) m_chart->removeSeries(line), delete line;
    m_markerLines.clear();
    for (QGraphicsSimpleTextItem* label : m_markerLabels) delete label;
    m_markerLabels.clear();
    m_markers.clear();
    for (QAbstractSeries* series : m_bands) m_chart->removeSeries(series), delete series;
    m_bands.clear();
    m_bandsShown.clear();
}

void PlotOverlays::setBands(const std::vector<PlotBand>& bands, QAbstractAxis* x, QAbstractAxis* y,
                            bool force) {
    if (!force && bands == m_bandsShown) return;
    for (QAbstractSeries* series : m_bands) m_chart->removeSeries(series), delete series;
    m_bands.clear();
    for (const PlotBand& band : bands) {
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
        m_chart->addSeries(area);
        attach(area, x, y);
        m_bands.push_back(area);
    }
    m_bandsShown = bands;
}

void PlotOverlays::setMarkers(const std::vector<PlotMarker>& all, const AxisRange& x, const AxisRange& y,
                              QAbstractAxis* xAxis, QAbstractAxis* yAxis, const QFont& font, double lineScale,
                              bool force) {
    std::vector<PlotMarker> shown;
    for (const PlotMarker& marker : all)
        if (marker.x >= x.min && marker.x <= x.max) shown.push_back(marker);
    if (!force && shown == m_markers) return;
    m_markers = std::move(shown);
    while (m_markerLines.size() > m_markers.size()) {
        m_chart->removeSeries(m_markerLines.back());
        delete m_markerLines.back();
        m_markerLines.pop_back();
        delete m_markerLabels.back();
        m_markerLabels.pop_back();
    }
    while (m_markerLines.size() < m_markers.size()) {
        auto* line = new QLineSeries;
        m_chart->addSeries(line);
        attach(line, xAxis, yAxis);
        m_markerLines.push_back(line);
        auto* label = new QGraphicsSimpleTextItem(m_chart);
        label->setRotation(90);
        m_markerLabels.push_back(label);
    }
    for (size_t i = 0; i < m_markers.size(); ++i) {
        const PlotMarker& marker = m_markers[i];
        QLineSeries* line = m_markerLines[i];
        line->replace(QList<QPointF>{{marker.x, y.min}, {marker.x, y.max}});
        QPen pen(marker.colour);
        pen.setStyle(Qt::DashLine);
        pen.setWidthF(1.2 * lineScale);
        line->setPen(pen);
        line->setName(marker.label);
        QGraphicsSimpleTextItem* label = m_markerLabels[i];
        label->setText(marker.label);
        label->setFont(font);
        label->setBrush(marker.colour.darker(130));
    }
}

void PlotOverlays::placeMarkerLabels(double top) {
    std::vector<std::pair<double, double>> placed;  // a label's x and where it ends, in scene pixels
    for (size_t i = 0; i < m_markerLabels.size(); ++i) {
        const QPointF at = m_chart->mapToPosition({m_markers[i].x, top}, m_markerLines[i]);
        const QRectF box = m_markerLabels[i]->boundingRect();  // unrotated: width is the label's length
        double y = at.y() + 2;
        for (const auto& [x, end] : placed)
            if (std::abs(x - at.x()) < box.height() + 2) y = std::max(y, end + 4);
        m_markerLabels[i]->setPos(at.x() + box.height() + 1, y);
        placed.emplace_back(at.x(), y + box.width());
    }
}

void PlotOverlays::placeNotes(const std::vector<PlotAnnotation>& annotations, QLineSeries* anchor,
                              const ChartStyle& style) {
    while (m_notes.size() > annotations.size()) {
        delete m_notes.back().text;
        delete m_notes.back().arrow;
        m_notes.pop_back();
    }
    while (m_notes.size() < annotations.size()) {
        Note note{new QGraphicsSimpleTextItem(m_chart), new QGraphicsLineItem(m_chart)};
        note.text->setZValue(900);
        note.arrow->setZValue(900);
        m_notes.push_back(note);
    }
    if (!anchor) return;
    QFont font = m_chart->titleFont();
    font.setBold(false);
    font.setPointSizeF(style.points(8.5));
    const QRectF area = m_chart->plotArea();
    for (size_t i = 0; i < m_notes.size(); ++i) {
        const PlotAnnotation& annotation = annotations[i];
        const Note& note = m_notes[i];
        const QPointF at = m_chart->mapToPosition({annotation.x, annotation.y}, anchor);
        const bool shown = area.contains(at);
        note.text->setVisible(shown);
        note.arrow->setVisible(shown);
        if (!shown) continue;
        note.text->setFont(font);
        note.text->setText(annotation.text);
        note.text->setBrush(QColor(40, 40, 40));
        // The text above and to the right of its point, kept inside the plot.
        const QRectF box = note.text->boundingRect();
        const double offset = 18.0 * style.lineScale();
        QPointF corner(at.x() + offset, at.y() - offset - box.height());
        corner.setX(std::min(corner.x(), area.right() - box.width()));
        corner.setY(std::max(corner.y(), area.top()));
        note.text->setPos(corner);
        note.arrow->setPen(QPen(QColor(40, 40, 40), 1.2 * style.lineScale()));
        note.arrow->setLine(QLineF(QPointF(corner.x(), corner.y() + box.height()), at));
    }
}

void PlotOverlays::setEmptyText(const QString& text) {
    m_emptyText = text;
    placeEmptyText();
}

void PlotOverlays::placeEmptyText() {
    // Wrapped at the plot's width and centred on it (a long one ran over both axes of a narrow chart).
    const QFontMetricsF metrics(m_emptyLabel->font());
    const double width = std::max(40.0, m_chart->plotArea().width() - 8);
    QStringList rows;
    QString row;
    for (const QString& word : m_emptyText.split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
        const QString longer = row.isEmpty() ? word : row + QLatin1Char(' ') + word;
        if (!row.isEmpty() && metrics.horizontalAdvance(longer) > width) {
            rows << row;
            row = word;
        } else {
            row = longer;
        }
    }
    if (!row.isEmpty()) rows << row;
    if (const QString wrapped = rows.join(QLatin1Char('\n')); m_emptyLabel->text() != wrapped)
        m_emptyLabel->setText(wrapped);
    m_emptyLabel->setPos(m_chart->plotArea().center() - m_emptyLabel->boundingRect().center());
}

QRectF PlotOverlays::emptyTextBox() const {
    return m_emptyLabel->text().isEmpty() ? QRectF() : m_emptyLabel->sceneBoundingRect();
}

}  // namespace normlab::ui
