// An edge search folder (normlab-cli sweep edge) in a window of its own: its chart (edge_chart.h),
// re-read every two seconds while probes are still running (on this machine or any other writing into
// the folder), exported as PNG / SVG / PDF or as the chart's CSV.
#pragma once
#include <QWidget>

#include "engine/sweep/edge_report.h"
#include "ui/export/chart_export.h"

class QLabel;
class QTimer;

namespace normlab::ui {

class LinePlot;

class EdgeWindow : public QWidget {
    Q_OBJECT
  public:
    // Throws normlab::InputError when `dir` holds no readable edge.json.
    explicit EdgeWindow(const QString& dir, QWidget* parent = nullptr);

    const QString& folder() const { return m_dir; }
    // Reads the folder again and redraws (the timer does this while the search runs).
    void refreshNow();
    const normlab::EdgeReport& report() const { return m_report; }
    const LinePlot& plot() const { return *m_plot; }
    Figure figure() const;
    QString csv() const;
    QString caption() const;

  private:
    QString m_dir;
    normlab::EdgeSpec m_spec;
    normlab::EdgeReport m_report;
    LinePlot* m_plot = nullptr;
    QLabel* m_status = nullptr;
    QTimer* m_timer = nullptr;
};

}  // namespace normlab::ui
