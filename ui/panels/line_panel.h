// A ChartPanel drawn by a LinePlot: subclasses build a PlotContent at a given resolution (pixel
// columns for drawing, 0 for every stored sample when exporting CSV).
#pragma once
#include "ui/panels/chart_panel.h"
#include "ui/plots/line_plot.h"

namespace normlab::ui {

class LinePanel : public ChartPanel {
    Q_OBJECT
  public:
    LinePanel(const QString& id, const QString& title, const TelemetryStore& store,
              QWidget* parent = nullptr);

    void refresh() override;
    QString csv() const override;
    // The figure and the CSV show the zoomed span when the chart is zoomed over steps.
    std::unique_ptr<QWidget> makeFigureChart(const ChartStyle& style) const override;
    // True for charts over training steps (zoomed by --steps); false for charts over blocks.
    virtual bool overSteps() const { return true; }
    LinePlot& plot() const { return *m_plot; }
    // The notes pinned to this chart (drawn on screen and in its figures; saved with experiments).
    const std::vector<PlotAnnotation>& annotations() const { return m_annotations; }
    void setAnnotations(std::vector<PlotAnnotation> annotations);
    // columns <= 0: every stored sample (data export); else at most `columns` per series.
    virtual PlotContent buildContent(int columns) const = 0;

  protected:
    void applyStyle(const ChartStyle& style) override;
    void addViewActions(QMenu& menu, const QPoint& at) override;
    // "Fork <run> at step N": the step the fork would really start at for a pin at `pinned`.
    void addForkAction(QMenu& menu, int64_t pinned);
    // Pixel columns of a figure's chart: enough for a page-wide chart at print resolution.
    static constexpr int kFigureColumns = 2000;
    // A series' points: the per-column envelope over [first, last] step, or every stored sample.
    QVector<QPointF> pointsOf(const DecimatedSeries& series, int columns) const;
    // One series per block, coloured from dark (block 0) to light (the last block); the legend names only
    // the ends, "block N" + `suffix` (for charts of several quantities per block).
    void addBlockSeries(PlotContent& content, const std::vector<DecimatedSeries>& perBlock, int columns,
                        const QString& suffix = QString(), Qt::PenStyle style = Qt::SolidLine,
                        bool secondary = false) const;
    // What an empty chart says: `waiting` until the run (`run`, or every visible run when null) has logged
    // a step with per-block telemetry; after that, that the run did not record what the chart draws (a
    // PyTorch script's run through the bridge, a role the model does not have).
    QString emptyText(const QString& waiting, const RunHistory* run = nullptr) const;
    // The step axis of the time charts: it keeps room to grow while a run trains; once none trains,
    // it ends at the last step (so a finished chart, and its export, has no empty margin).
    AxisSpec stepAxis() const;

  private:
    // buildContent with this chart's notes.
    PlotContent contentWithNotes(int columns) const;

    LinePlot* m_plot = nullptr;
    std::vector<PlotAnnotation> m_annotations;
};

}  // namespace normlab::ui
