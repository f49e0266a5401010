// muP's coordinate check (normlab-cli probe --coord-check, DIR/coord_check.json) in a window of its own:
// one quantity at a time, its block mean against width on log-log axes with a line per step, the growth
// exponent of each step under the legend; exported as PNG / SVG / PDF or as the chart's CSV.
#pragma once
#include <QWidget>

#include "engine/analysis/coord_check.h"
#include "ui/export/chart_export.h"
#include "ui/plots/plot_content.h"

class QComboBox;
class QLabel;

namespace normlab::ui {

class LinePlot;

// The chart of quantity `q` (an index into normlab::kCoordQuantities).
PlotContent coordCheckContent(const normlab::CoordCheckResult& result, size_t q);

class CoordCheckWindow : public QWidget {
    Q_OBJECT
  public:
    // Throws normlab::InputError when `dir` holds no readable coord_check.json.
    explicit CoordCheckWindow(const QString& dir, QWidget* parent = nullptr);

    // Shows quantity `q` (the combo box's row).
    void showQuantity(int q);
    const LinePlot& plot() const { return *m_plot; }
    const normlab::CoordCheckResult& result() const { return m_result; }
    Figure figure() const;
    QString csv() const;
    QString caption() const;

  private:
    QString m_dir;
    normlab::CoordCheckResult m_result;
    QComboBox* m_quantity = nullptr;
    LinePlot* m_plot = nullptr;
};

}  // namespace normlab::ui
