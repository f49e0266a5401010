// The stability map of one sweep folder, in a window of its own: choose the axes (x, y, facets, the
// value other axes are held at) and the loss shown; the map fills in live while any machine writes
// points into the folder (re-read about once a second off the GUI thread); under it, final loss
// against learning rate per variant with each variant's lr sensitivity in the legend. A cell's click
// opens its runs in the main window; both charts export as PNG / SVG / PDF, and the grid as CSV.
#pragma once
#include <QWidget>
#include <atomic>
#include <memory>

#include "engine/sweep/sweep_collect.h"
#include "ui/export/chart_export.h"
#include "ui/plots/plot_content.h"
#include "ui/sweep/sweep_map_data.h"

class QComboBox;
class QLabel;
class QHBoxLayout;
class QTimer;

namespace normlab::ui {

class LinePlot;
class SweepMapView;

class SweepMapWindow : public QWidget {
    Q_OBJECT
  public:
    // Throws normlab::InputError when `sweepDir` holds no readable sweep.json.
    explicit SweepMapWindow(const QString& sweepDir, QWidget* parent = nullptr);
    ~SweepMapWindow() override;

    const QString& sweepDir() const { return m_dir; }
    SweepMapView& map() const { return *m_map; }
    // Reads the folder now, on this thread (scripted exports and tests).
    void refreshNow();
    // Both charts as one figure (the map, then the lr sensitivity when the sweep has a train.lr axis).
    Figure figure() const;
    QString csv() const;
    QString caption() const;
    bool hasSensitivity() const;
    // The colour scale: 0 (best cell to the initial loss) or one of kRelativeSpans above the best cell.
    void setRelativeSpan(double span);
    // Points finished (done or diverged) and in total, as last read.
    std::pair<int, int> progress() const;

  signals:
    void openRunsRequested(const QStringList& runFolders);
    // A read of the folder has been shown (the first one: the map is complete as far as the files go).
    void refreshed();

  private:
    void buildControls(QHBoxLayout* header);
    void readInBackground();
    void showPoints(std::vector<normlab::CollectedPoint> points);
    void redraw();
    MapChoice choice() const;
    PlotContent sensitivityContent() const;

    QString m_dir;
    normlab::SweepPlan m_plan;
    std::vector<normlab::CollectedPoint> m_points;
    SweepMapView* m_map = nullptr;
    LinePlot* m_sensitivity = nullptr;
    QComboBox *m_x = nullptr, *m_y = nullptr, *m_facet = nullptr, *m_value = nullptr, *m_scale = nullptr;
    std::vector<QComboBox*> m_fixed;  // per axis (hidden unless the axis is off the map)
    QLabel* m_status = nullptr;
    QTimer* m_timer = nullptr;
    std::shared_ptr<std::atomic<bool>> m_reading = std::make_shared<std::atomic<bool>>(false);
    std::shared_ptr<std::atomic<bool>> m_alive = std::make_shared<std::atomic<bool>>(true);
};

}  // namespace normlab::ui
