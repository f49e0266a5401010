// The stability map drawn with QPainter: one grid of cells per facet (small multiples side by side),
// each cell coloured by its clamped final loss on viridis (dark = low loss), diverged cells crossed,
// cells still to run grey and running ones outlined, a shared colour bar, and a tooltip with the
// points' values and results. Clicking a cell asks to open its runs.
#pragma once
#include <QWidget>
#include <optional>

#include "ui/plots/chart_style.h"
#include "ui/sweep/sweep_map_data.h"

namespace normlab::ui {

class SweepMapView : public QWidget {
    Q_OBJECT
  public:
    explicit SweepMapView(QWidget* parent = nullptr);
    bool setContent(SweepMapContent content);  // false (and no repaint) when unchanged
    const SweepMapContent& content() const { return m_content; }
    void setStyle(const ChartStyle& style);
    void setTitleShown(bool shown);
    QSize sizeHint() const override { return {900, 420}; }

    struct CellIndex {
        size_t facet, y, x;
    };
    // The cell under `at` (widget coordinates), if any.
    std::optional<CellIndex> cellAt(const QPoint& at) const;
    // The rectangle a cell is drawn in (for tests and tooltips).
    QRectF cellRect(const CellIndex& cell) const;
    // A colour-bar tick's text: the value, or on a relative scale its distance above the best cell
    // (`top`: the last tick, which also stands for every cell beyond it).
    QString colourBarLabel(double value, bool top) const;

  signals:
    void cellActivated(const QStringList& runFolders);

  protected:
    void paintEvent(QPaintEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;

  private:
    struct Layout {
        QRectF area;                // all facets
        std::vector<QRectF> grids;  // one per facet
        QRectF colourBar;
    };
    Layout layout() const;
    QFont baseFont() const;
    void drawFacet(QPainter& painter, const MapFacet& facet, const QRectF& grid, bool yLabels) const;
    void drawCell(QPainter& painter, const MapCell& cell, const QRectF& rect) const;
    void drawColourBar(QPainter& painter, const QRectF& bar) const;
    // Under the map, what the ring and the dots mean (when cells have intervals).
    void drawMarkKey(QPainter& painter) const;

    SweepMapContent m_content;
    ChartStyle m_style;
    bool m_titleShown = false;
};

}  // namespace normlab::ui
