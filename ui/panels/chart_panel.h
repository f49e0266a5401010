// Base of every dashboard chart: a titled widget that refreshes from the TelemetryStore on the
// dashboard's coalescing timer, exports itself (context menu: PNG/SVG/PDF/CSV) and can ask to be
// maximised. Subclasses supply the drawing widget and the CSV of their data.
#pragma once
#include <QComboBox>
#include <QHBoxLayout>
#include <QWidget>
#include <memory>

#include "ui/history/telemetry_store.h"
#include "ui/panels/fork_target.h"
#include "ui/plots/chart_style.h"

class QMenu;

namespace normlab::ui {

class RunSelector;

class ChartPanel : public QWidget {
    Q_OBJECT
  public:
    ChartPanel(const QString& id, const QString& title, const TelemetryStore& store,
               QWidget* parent = nullptr);

    QString id() const { return m_id; }
    QString title() const { return m_title; }
    // The title of what the chart shows now, drawn on its figures (the panel's title, unless a panel
    // shows something else at times: the norm-scale chart's BatchNorm gap)
    virtual QString chartTitle() const { return m_title; }
    // The title a figure or CSV of this chart carries: a chart of one run at a time names the run shown
    // ("Attention logits and q, k RMS per block: postln-no-warmup").
    virtual QString shownTitle() const;
    // The run a chart of one run at a time shows (nullptr for charts of every visible run).
    const RunHistory* shownRun() const;
    // Redraws from the store (GUI thread, at most ~30 Hz).
    virtual void refresh() = 0;
    // The chart's data as CSV: '#' comment lines (title, axes, caption), a header row, then rows.
    virtual QString csv() const = 0;
    // Presentation fonts (ChartStyle::kPresentationScale); with scalesWithSize the fonts grow with the
    // panel's size too (the stage, a maximised chart; ChartStyle::scaleForSize), never below that.
    void setPresentation(bool large);
    void setScalesWithSize(bool scales);
    bool scalesWithSize() const { return m_scalesWithSize; }
    // The style the on-screen chart is drawn in now.
    const ChartStyle& chartStyle() const { return m_style; }
    // A new chart widget of what this panel shows now, drawn for a figure: in `style`, with its title
    // (on screen the dock's title bar names the chart), without the panel's selectors.
    virtual std::unique_ptr<QWidget> makeFigureChart(const ChartStyle& style) const = 0;
    // The on-screen chart widget (without the panel's header controls).
    QWidget* chartWidget() const { return m_chart; }
    QString caption() const;
    // Where a fork at a step of this chart would start (the window's answer; unset: no fork entry).
    void setForkTargets(ForkTargetLookup lookup) { m_forkTargets = std::move(lookup); }

  signals:
    void maximiseRequested(normlab::ui::ChartPanel* panel);
    // A fork of the run selected in the Runs panel at `step` (a step chart's pinned readout).
    void forkAtStepRequested(qint64 step);

  protected:
    void setChartWidget(QWidget* chart);
    // Draws the on-screen chart in `style` (called when the presentation, the stage or the size change it).
    virtual void applyStyle(const ChartStyle& style) = 0;
    void resizeEvent(QResizeEvent* event) override;
    QHBoxLayout* header() const { return m_header; }
    // A "Run" chooser in the header, refreshing the chart when the choice changes.
    RunSelector* addRunSelector();
    // A labelled menu in the header (after any run chooser): the panel fills it and handles its choice.
    QComboBox* addHeaderMenu(const QString& label, const QString& objectName, const QString& toolTip);
    const TelemetryStore& store() const { return m_store; }
    void contextMenuEvent(QContextMenuEvent* event) override;
    // Entries a kind of chart adds to the context menu (zoom, notes), for a right click at `at` in the
    // chart widget's coordinates.
    virtual void addViewActions(QMenu& menu, const QPoint& at) { (void)menu, (void)at; }
    const ForkTargetLookup& forkTargets() const { return m_forkTargets; }

  private:
    void updateStyle();  // m_style from the presentation flag and the size; applied when it changed

    QString m_id, m_title;
    bool m_presentation = false, m_scalesWithSize = false;
    ChartStyle m_style;
    RunSelector* m_runSelector = nullptr;  // charts of one run: which run
    const TelemetryStore& m_store;
    QHBoxLayout* m_header = nullptr;
    QWidget* m_chart = nullptr;
    ForkTargetLookup m_forkTargets;
};

}  // namespace normlab::ui
