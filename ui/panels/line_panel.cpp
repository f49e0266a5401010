// LinePanel: refresh and CSV through buildContent().
#include "ui/panels/line_panel.h"

#include <functional>

#include <cmath>

#include "ui/export/plot_csv.h"
#include "ui/plots/axis_range.h"
#include "ui/plots/colour_map.h"

#include <QInputDialog>
#include <QLineEdit>
#include <QMenu>

namespace normlab::ui {

LinePanel::LinePanel(const QString& id, const QString& title, const TelemetryStore& store, QWidget* parent)
    : ChartPanel(id, title, store, parent), m_plot(new LinePlot(title)) {
    setChartWidget(m_plot);
}

PlotContent LinePanel::contentWithNotes(int columns) const {
    PlotContent content = buildContent(columns);
    content.annotations = m_annotations;
    return content;
}

QString LinePanel::emptyText(const QString& waiting, const RunHistory* run) const {
    if (run) return run->loggedSteps > 0 ? tr("Not recorded by this run") : waiting;
    bool any = false;
    for (const auto& [id, visible] : store().runs()) {
        if (!visible.visible) continue;
        if (visible.loggedSteps == 0) return waiting;
        any = true;
    }
    return any ? tr("Not recorded by these runs") : waiting;
}

void LinePanel::refresh() {
    m_plot->setContent(contentWithNotes(m_plot->plotColumns()));
}

void LinePanel::setAnnotations(std::vector<PlotAnnotation> annotations) {
    m_annotations = std::move(annotations);
    refresh();
}

QString LinePanel::csv() const {
    PlotContent content = buildContent(0);
    const std::optional<std::pair<double, double>> zoom = m_plot->zoom();
    if (!zoom || !overSteps()) return csvFromPlot(shownTitle(), content, caption());
    const auto inZoom = [&zoom](const QPointF& point) {
        return point.x() >= zoom->first && point.x() <= zoom->second;
    };
    for (PlotSeries& series : content.series) series.points.removeIf(std::not_fn(inZoom));
    for (PlotBand& band : content.bands)
        band.lower.removeIf(std::not_fn(inZoom)), band.upper.removeIf(std::not_fn(inZoom));
    const QString span =
        tr("steps %1 to %2 (the chart's zoom)").arg(zoom->first, 0, 'f', 0).arg(zoom->second, 0, 'f', 0);
    return csvFromPlot(shownTitle(), content, caption() + QLatin1Char('\n') + span);
}

void LinePanel::applyStyle(const ChartStyle& style) {
    m_plot->setStyle(style);
}

std::unique_ptr<QWidget> LinePanel::makeFigureChart(const ChartStyle& style) const {
    auto plot = std::make_unique<LinePlot>(chartTitle());
    plot->setStyle(style);
    plot->setTitleShown(true);
    PlotContent content = contentWithNotes(kFigureColumns);
    // A chart of one run names it where it is never elided: first in the legend's key.
    if (const RunHistory* run = shownRun())
        content.styleKey = content.styleKey.isEmpty() ? tr("run: %1").arg(run->name)
                                                      : tr("run: %1; %2").arg(run->name, content.styleKey);
    plot->setContent(content);
    plot->setZoom(m_plot->zoom());
    return plot;
}

void LinePanel::addViewActions(QMenu& menu, const QPoint& at) {
    const QPointF value = m_plot->valueAt(m_plot->mapFrom(chartWidget(), at));
    menu.addAction(tr("Add a note here..."), this, [this, value] {
        bool ok = false;
        const QString text =
            QInputDialog::getText(this, tr("Note"), tr("Note at step %1:").arg(value.x(), 0, 'f', 0),
                                  QLineEdit::Normal, QString(), &ok);
        if (!ok || text.trimmed().isEmpty()) return;
        std::vector<PlotAnnotation> notes = m_annotations;
        notes.push_back({value.x(), value.y(), text.trimmed()});
        setAnnotations(std::move(notes));
    });
    if (const std::optional<double> pinned = m_plot->pinnedStep(); pinned && overSteps() && forkTargets())
        addForkAction(menu, static_cast<int64_t>(std::llround(*pinned)));
    QAction* clear = menu.addAction(tr("Remove the notes"), this, [this] { setAnnotations({}); });
    clear->setEnabled(!m_annotations.empty());
    QAction* reset =
        menu.addAction(tr("Reset zoom (double-click)"), this, [this] { m_plot->setZoom(std::nullopt); });
    reset->setEnabled(m_plot->zoom().has_value());
    QAction* follow =
        menu.addAction(tr("Follow latest step"), this, [this](bool on) { m_plot->setFollowLatest(on); });
    follow->setCheckable(true);
    follow->setChecked(m_plot->followLatest());
    follow->setEnabled(m_plot->zoom().has_value());
}

void LinePanel::addForkAction(QMenu& menu, int64_t pinned) {
    // The step the fork will really start at (a kept state at or before the pinned one), said before
    // the click; a run with none there gets a disabled entry that says why.
    const ForkTarget target = forkTargets()(pinned);
    if (!target.step) {
        menu.addAction(tr("Cannot fork %1 at step %2: %3").arg(target.run).arg(pinned).arg(target.problem))
            ->setEnabled(false);
        return;
    }
    const int64_t step = *target.step;
    if (target.now) {  // the pinned step asked for: the window forks at the step the run has reached then
        menu.addAction(tr("Fork %1 now (it is training, at step %2)").arg(target.run).arg(step), this,
                       [this, pinned] { emit forkAtStepRequested(pinned); });
        return;
    }
    const QString text = step == pinned
                             ? tr("Fork %1 at step %2").arg(target.run).arg(step)
                             : tr("Fork %1 at step %2 (its newest fork point at or before step %3)")
                                   .arg(target.run)
                                   .arg(step)
                                   .arg(pinned);
    menu.addAction(text, this, [this, step] { emit forkAtStepRequested(step); });
}

QVector<QPointF> LinePanel::pointsOf(const DecimatedSeries& series, int columns) const {
    if (columns <= 0) return series.samples();
    // Columns a round number of steps wide from step 0: the width changes only now and then as the run
    // grows, so between those changes the points of finished columns stay the same (the plot then
    // redraws only the newest part).
    const double last = std::max<double>(2.0, static_cast<double>(store().lastStep()));
    const double width = niceStep(last / columns);
    const int count = static_cast<int>(std::ceil(last / width - 1e-9));
    return series.envelope(0.0, count * width, std::max(count, 1));
}

void LinePanel::addBlockSeries(PlotContent& content, const std::vector<DecimatedSeries>& perBlock,
                               int columns, const QString& suffix, Qt::PenStyle style, bool secondary) const {
    const int blocks = static_cast<int>(perBlock.size());
    for (int b = 0; b < blocks; ++b) {
        const double depth = blocks > 1 ? static_cast<double>(b) / (blocks - 1) : 0.0;
        PlotSeries series{tr("block %1").arg(b) + suffix, viridis(depth * 0.9),
                          pointsOf(perBlock[b], columns), 1.3};
        series.style = style;
        series.onSecondaryAxis = secondary;
        series.inLegend = b == 0 || b == blocks - 1;
        content.series.push_back(series);
    }
}

AxisSpec LinePanel::stepAxis() const {
    AxisSpec axis;
    axis.title = tr("step");
    bool training = false;
    for (const auto& [id, run] : store().runs())
        training |= run.visible && run.status == normlab::RunStatus::Running;
    if (!training && store().lastStep() > 0) axis.max = static_cast<double>(store().lastStep());
    return axis;
}

}  // namespace normlab::ui
