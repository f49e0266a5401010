// The pinned readout of a line chart (LinePlot::pinReadout): a dashed line at a step and a box of every
// series' value there, kept inside the chart. It owns the step it is pinned at and its three scene
// items; the plot hands it the points it draws and where the step lies on screen.
#pragma once
#include <QPointF>
#include <QRectF>
#include <QString>
#include <QVector>
#include <array>
#include <optional>
#include <vector>

class QGraphicsItem;
class QGraphicsLineItem;
class QGraphicsRectItem;
class QGraphicsSimpleTextItem;

namespace normlab::ui {

class PlotReadout {
  public:
    // Its items are children of `chart`, hidden until placed.
    explicit PlotReadout(QGraphicsItem* chart);
    void pin(std::optional<double> step) { m_step = step; }
    const std::optional<double>& step() const { return m_step; }

    // One series as the readout reads it: its name and its points in step order.
    struct Series {
        QString name;
        const QVector<QPointF>* points = nullptr;
    };
    // "step = x", then each series' value at x, else its last before x named with its own step
    // ("validation: 2.759 (step 150)"); a series with nothing yet at x has no row.
    static QString text(double x, const QString& xTitle, const std::vector<Series>& series);

    // Hides it, or draws the line at scene x `lineX` over the plot `area` and the box of `text` beside
    // it, within `whole` (the chart): rows wider than the chart shortened in their middle, rows beyond
    // the plot's height summed up in a last row. `points`: the font size.
    void hide();
    void place(double lineX, const QRectF& area, const QRectF& whole, const QString& text, double points);
    // Where the box is drawn, in scene coordinates (empty while hidden).
    QRectF sceneBox() const;

  private:
    std::array<QGraphicsItem*, 3> items() const;  // line, box, text
    void show(bool shown);
    std::optional<double> m_step;
    QGraphicsLineItem* m_line;
    QGraphicsRectItem* m_box;
    QGraphicsSimpleTextItem* m_text;
};

}  // namespace normlab::ui
