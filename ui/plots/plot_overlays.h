// What a line chart draws over and beside its data lines, each kept until it changes: shaded bands
// (Lemma 2's in theory mode), labelled vertical event markers, the user's notes with their arrows, and
// the text of an empty chart. LinePlot owns one and tells it the axes to draw against.
#pragma once
#include <QFont>
#include <QRectF>
#include <QString>
#include <vector>

#include "ui/plots/axis_range.h"
#include "ui/plots/chart_style.h"
#include "ui/plots/plot_content.h"

class QAbstractAxis;
class QAbstractSeries;
class QChart;
class QGraphicsLineItem;
class QGraphicsSimpleTextItem;
class QLineSeries;

namespace normlab::ui {

class PlotOverlays {
  public:
    explicit PlotOverlays(QChart* chart);

    // Removes the bands and markers (their series belong to axes about to be replaced).
    void clear();

    // Bands drawn against (x, y); redrawn only when `bands` differ from those shown unless `force`.
    void setBands(const std::vector<PlotBand>& bands, QAbstractAxis* x, QAbstractAxis* y, bool force);
    // The markers inside the step range `x`, from the bottom to the top of `y`; redrawn when `force` or
    // when they change. Their line width follows `lineScale`.
    void setMarkers(const std::vector<PlotMarker>& all, const AxisRange& x, const AxisRange& y,
                    QAbstractAxis* xAxis, QAbstractAxis* yAxis, const QFont& font, double lineScale,
                    bool force);
    // Each marker's label reads down beside its line from the top of the value range; one closer to an
    // earlier label's line than a label's height starts below that label.
    void placeMarkerLabels(double top);

    // The notes, each above and right of its point on `anchor`'s axes, kept inside the plot.
    void placeNotes(const std::vector<PlotAnnotation>& annotations, QLineSeries* anchor,
                    const ChartStyle& style);

    // An empty chart's text (none when `text` is empty), wrapped at the plot's width and centred on it.
    void setEmptyText(const QString& text);
    void placeEmptyText();
    // Where it is drawn in scene coordinates (empty: none shown).
    QRectF emptyTextBox() const;

  private:
    QChart* m_chart;
    std::vector<QAbstractSeries*> m_bands;
    std::vector<PlotBand> m_bandsShown;
    std::vector<PlotMarker> m_markers;  // those drawn, each with a line and a label
    std::vector<QLineSeries*> m_markerLines;
    std::vector<QGraphicsSimpleTextItem*> m_markerLabels;
    struct Note {
        QGraphicsSimpleTextItem* text = nullptr;
        QGraphicsLineItem* arrow = nullptr;
    };
    std::vector<Note> m_notes;
    QGraphicsSimpleTextItem* m_emptyLabel;
    QString m_emptyText;  // whole, before wrapping
};

}  // namespace normlab::ui
