// The chart dashboard: every ChartPanel in a dock the user can move, float, close and maximise.
// New telemetry schedules one redraw on a single-shot timer of at least 33 ms, stretched so that the
// whole GUI thread stays near kMaxGuiShare of a core (RefreshPacer); hidden docks are not redrawn.
#pragma once
#include <QMainWindow>
#include <QTimer>
#include <map>
#include <vector>

#include "engine/core/step_range.h"
#include "ui/export/chart_export.h"
#include "ui/history/telemetry_store.h"
#include "ui/panels/chart_panel.h"
#include "ui/panels/refresh_pacer.h"

class QDockWidget;
class QWindow;

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
    // The stage (dashboard_stage.cpp): one or two charts side by side filling the dashboard, every
    // other chart hidden, fonts growing with the charts' size. An empty list leaves it (the layout
    // from before comes back). The error (unknown or repeated ids, not 1 or 2), or empty.
    QString setStage(const QStringList& ids);
    // What is wrong with `ids` as the stage's charts, or empty.
    QString stageProblem(const QStringList& ids) const;
    const QStringList& stage() const { return m_stage; }
    // Puts the next (+1) or previous (-1) chart not on the stage in the stage's last place.
    void cycleStage(int direction);
    // Loss and gradient per block: the charts a lecturer shows first.
    static QStringList defaultStage();
    // The dashboard as a figure: the open panels' charts in the default arrangement's rows (charts only:
    // no selectors, no dock buttons), with `caption` under them.
    Figure figure(const QString& caption) const;
    // Whether the panel `id` is in the default arrangement's rows (and so in the figure), not a tab behind.
    static bool inDefaultRows(const QString& id);
    // Zooms every chart over training steps to `steps` (an open end stops at the newest step); the block
    // charts show the profile at its last step, with its first faint.
    void zoomSteps(const normlab::StepRange& steps);
    // Where a fork at a chart's step would start (every chart's context menu asks it).
    void setForkTargets(const ForkTargetLookup& lookup);
    // Redraws every visible panel now (tests, screenshots, exports).
    void refreshNow();
    int refreshCount() const { return m_refreshCount; }
    // Time spent redrawing (updates and the painting they cause), in total and per panel id.
    double refreshSeconds() const { return m_refreshSeconds; }
    const std::map<QString, double>& panelSeconds() const { return m_panelSeconds; }
    static constexpr int kRefreshIntervalMs = 33;   // at most ~30 redraws a second
    static constexpr int kSlowestRefreshMs = 1000;  // at least one a second
    static constexpr double kMaxGuiShare = 0.04;    // of one core, for the whole GUI thread
    int refreshIntervalMs() const { return m_refreshTimer.interval(); }

  public slots:
    void toggleMaximised(normlab::ui::ChartPanel* panel);

  signals:
    // After each coalesced redraw: other views (status bar, run list) follow at the same pace.
    void refreshed();
    // A chart asked to fork the selected run at `step` (ChartPanel::forkAtStepRequested).
    void forkAtStepRequested(qint64 step);

  private:
    void addPanel(ChartPanel* panel);
    QDockWidget* dock(const QString& id) const;  // the dock of the panel with this id (it must exist)
    void placeStage();                           // only the stage's docks, side by side
    // Dock titles: a tabbed panel's short tab title, every other panel's title.
    void titleDocks();
    void scheduleRefresh();
    void refreshScheduled();
    // The window is minimised or covered (no redraws until it shows again).
    bool hiddenFromUser() const;

  protected:
    void showEvent(QShowEvent* event) override;
    // The top-level window's exposure: what arrived while it was shown but not yet (or no longer) on
    // screen is drawn when it is exposed (a window manager exposes it after the show event).
    bool eventFilter(QObject* watched, QEvent* event) override;

    TelemetryStore& m_store;
    std::vector<ChartPanel*> m_panels;
    std::vector<QDockWidget*> m_docks;
    QTimer m_refreshTimer;
    RefreshPacer m_pacer{kMaxGuiShare, kRefreshIntervalMs, kSlowestRefreshMs};
    bool m_staleWhileHidden = false;
    QWindow* m_watchedWindow = nullptr;  // the top-level window whose exposure eventFilter follows
    QByteArray m_layoutBeforeMaximise;
    QStringList m_stage;             // the charts on the stage (empty: not on the stage)
    QByteArray m_layoutBeforeStage;  // the arrangement the stage replaced
    int m_refreshCount = 0;
    double m_refreshSeconds = 0.0;
    std::map<QString, double> m_panelSeconds;
};

}  // namespace normlab::ui
