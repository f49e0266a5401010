// A line chart widget drawing a PlotContent with QtCharts: log or linear axes, an optional second
// value axis, bands, labelled event markers, a legend, and a tooltip with exact values on hover.
#pragma once
#include <QWidget>
#include <memory>
#include <optional>
#include <utility>

#include "ui/plots/chart_style.h"
#include "ui/plots/plot_content.h"

class QMouseEvent;
class QWheelEvent;

namespace normlab::ui {

class LinePlot : public QWidget {
    Q_OBJECT
  public:
    explicit LinePlot(const QString& title, QWidget* parent = nullptr);
    ~LinePlot() override;

    // Shows `content`; false (and nothing redone) when it equals what is shown.
    bool setContent(const PlotContent& content);
    const PlotContent& content() const { return m_content; }
    QString title() const { return m_title; }
    // The title is drawn in exports; on screen the dock's title bar already names the chart.
    void setTitleShown(bool shown);
    // Font scale and background (presentation mode, figures).
    void setStyle(const ChartStyle& style);
    // Pixel width of the plot area: the column count for decimation.
    int plotColumns() const;
    // Where a data point is drawn, in this widget's coordinates (on the right axis if `secondary`).
    QPointF positionOf(const QPointF& value, bool secondary = false) const;
    // The (step, value) on the left value axis under a position in this widget's coordinates.
    QPointF valueAt(const QPoint& position) const;
    // A pinned readout: a vertical line at step `x` with every series' value there (a click on the
    // plot pins it, a click on the same column again unpins it). It follows new data while pinned.
    void pinReadout(double x);
    void unpinReadout();
    std::optional<double> pinnedStep() const;
    QString readoutText() const;
    // Where the pinned readout's box is drawn, in this widget's coordinates (empty: none shown).
    QRect readoutGeometry() const;
    // Where an empty chart's text is drawn, in this widget's coordinates (empty: none shown).
    QRect emptyTextGeometry() const;
    // The step axis zoomed to [first, second] (none: everything). Dragging across the plot, the wheel
    // (Shift: pan) and a double click (reset) set it too. A span reaching the newest step follows it
    // (slides to end at the newest step as a run grows); one into the past stays put.
    void setZoom(std::optional<std::pair<double, double>> span);
    std::optional<std::pair<double, double>> zoom() const;
    void setFollowLatest(bool follow);
    bool followLatest() const;

  signals:
    void zoomChanged();

  protected:
    void resizeEvent(QResizeEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;

  private:
    void redraw();  // the same content again (after a zoom)
    // A box in the chart's scene, in this widget's coordinates (empty stays empty).
    QRect widgetRectOf(const QRectF& sceneBox) const;
    // The viewport's mouse (eventFilter): a left drag shows the rubber band, the wheel zooms or pans, a
    // release zooms to the dragged span or pins / unpins the readout. True when the event is used up.
    bool dragTo(const QMouseEvent& mouse);
    bool wheelZoom(const QWheelEvent& wheel);
    bool release(const QMouseEvent& mouse);
    struct Impl;
    std::unique_ptr<Impl> m_impl;
    PlotContent m_content;
    QString m_title;
};

}  // namespace normlab::ui
