// The chart dashboard: every ChartPanel in a dock the user can move, float, close and maximise.
// New telemetry schedules one repaint on a single-shot timer of at least 33 ms, stretched when drawing
// is costly, so the charts redraw at most ~30 times a second however fast the engine steps.
#pragma once
#include <QMainWindow>
#include <QTimer>
#include <map>
#include <vector>

#include "ui/history/telemetry_store.h"
#include "ui/panels/chart_panel.h"

class QDockWidget;

namespace normlab::ui {

class Dashboard : public QMainWindow {
    Q_OBJECT
  public:
    explicit Dashboard(TelemetryStore& store, QWidget* parent = nullptr);

    const std::vector<ChartPanel*>& panels() const { return m_panels; }
    ChartPanel* panel(const QString& id) const;
    QList<QAction*> panelToggleActions() const;

    QByteArray saveLayout() const;
    bool restoreLayout(const QByteArray& layout);
    void resetLayout();
    void setPresentation(bool large);
    // Redraws every visible panel now (tests, screenshots, exports).
    void refreshNow();
    int refreshCount() const { return m_refreshCount; }
    // Time spent redrawing, in total and per panel id (GUI-thread cost of the live charts).
    double refreshSeconds() const { return m_refreshSeconds; }
    const std::map<QString, double>& panelSeconds() const { return m_panelSeconds; }
    static constexpr int kRefreshIntervalMs = 33;    // at most ~30 redraws a second
    static constexpr int kSlowestRefreshMs = 1000;   // at least one a second
    static constexpr double kMaxRefreshShare = 0.1;  // of one core, for drawing
    int refreshIntervalMs() const { return m_refreshTimer.interval(); }

  public slots:
    void toggleMaximised(normlab::ui::ChartPanel* panel);

  signals:
    // After each coalesced redraw: other views (status bar, run list) follow at the same pace.
    void refreshed();

  private:
    void addPanel(ChartPanel* panel);
    void scheduleRefresh();

    TelemetryStore& m_store;
    std::vector<ChartPanel*> m_panels;
    std::vector<QDockWidget*> m_docks;
    QTimer m_refreshTimer;
    QByteArray m_layoutBeforeMaximise;
    int m_refreshCount = 0;
    double m_refreshSeconds = 0.0;
    std::map<QString, double> m_panelSeconds;
};

}  // namespace normlab::ui
