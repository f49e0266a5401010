// A block x step heatmap drawn with QPainter (QtCharts 6.4 has no heatmap): log colour scale with a
// colour bar, step axis, block axis, title, and a tooltip with the exact value under the cursor.
// The cell image and the colour range are made once per new content, not on every paint.
#pragma once
#include <QImage>
#include <QString>
#include <QWidget>
#include <vector>

#include "ui/history/heatmap_history.h"
#include "ui/plots/chart_style.h"

namespace normlab::ui {

struct HeatmapContent {
    QString title, xTitle, yTitle, colourTitle;
    std::vector<HeatColumn> columns;  // x order; values per block
    QString emptyText;

    bool operator==(const HeatmapContent&) const = default;
};

class HeatmapView : public QWidget {
    Q_OBJECT
  public:
    explicit HeatmapView(QWidget* parent = nullptr);
    // False (and no repaint) when `content` equals what is shown.
    bool setContent(HeatmapContent content);
    const HeatmapContent& content() const { return m_content; }
    // Font scale and background (presentation mode, figures).
    void setStyle(const ChartStyle& style);
    void setTitleShown(bool shown);
    // log10 range of the finite positive values, as used by the colour bar.
    std::pair<double, double> logRange() const;

  protected:
    void paintEvent(QPaintEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;

  private:
    QRect plotRect() const;
    std::pair<double, double> computeLogRange() const;
    QImage cellImage() const;
    void drawTitle(QPainter& painter, QFont font) const;
    // The step axis: the first logged step, then round steps (multiples of 1, 2 or 5 x 10^k).
    void drawStepTicks(QPainter& painter, const QRect& plot, const QFontMetrics& metrics) const;
    // Block numbers up the left side, as many as fit (at most ~12).
    void drawBlockTicks(QPainter& painter, const QRect& plot, const QFontMetrics& metrics, int blocks) const;
    void drawAxisTitles(QPainter& painter, const QRect& plot, const QFontMetrics& metrics) const;
    // The viridis scale at the right with its end values and the decades between them, and its title.
    void drawColourBar(QPainter& painter, const QRect& plot, const QFontMetrics& metrics) const;

    HeatmapContent m_content;
    std::pair<double, double> m_logRange{-3.0, 0.0};
    QImage m_cells;  // one pixel per cell, block 0 at the bottom
    ChartStyle m_style;
    bool m_titleShown = false;
};

}  // namespace normlab::ui
