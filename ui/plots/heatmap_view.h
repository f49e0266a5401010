// A block x step heatmap drawn with QPainter (QtCharts 6.4 has no heatmap): log colour scale with a
// colour bar, step axis, block axis, title, and a tooltip with the exact value under the cursor.
#pragma once
#include <QString>
#include <QWidget>
#include <vector>

#include "ui/history/heatmap_history.h"

namespace normlab::ui {

struct HeatmapContent {
    QString title, xTitle, yTitle, colourTitle;
    std::vector<HeatColumn> columns;  // x order; values per block
    QString emptyText;
};

class HeatmapView : public QWidget {
    Q_OBJECT
  public:
    explicit HeatmapView(QWidget* parent = nullptr);
    void setContent(HeatmapContent content);
    const HeatmapContent& content() const { return m_content; }
    void setPresentation(bool large);
    void setTitleShown(bool shown);
    // log10 range of the finite positive values, as used by the colour bar.
    std::pair<double, double> logRange() const;

  protected:
    void paintEvent(QPaintEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;

  private:
    QRect plotRect() const;

    HeatmapContent m_content;
    bool m_large = false;
    bool m_titleShown = false;
};

}  // namespace normlab::ui
