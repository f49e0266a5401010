// LossPanel content.
#include "ui/panels/loss_panel.h"

#include "ui/panels/event_markers.h"
#include "ui/panels/run_captions.h"
#include "ui/panels/seed_band.h"

#include <algorithm>

namespace normlab::ui {

LossPanel::LossPanel(const TelemetryStore& store, QWidget* parent)
    : LinePanel(QStringLiteral("loss"), tr("Loss and learning rate"), store, parent) {}

PlotContent LossPanel::buildContent(int columns) const {
    PlotContent content;
    content.x = stepAxis();
    content.y.title = tr("loss");
    content.y2 = AxisSpec{tr("lr"), false, 0.0, std::nullopt, QString()};
    const bool severalRuns =
        std::count_if(store().runs().begin(), store().runs().end(), [](const auto& entry) {
            return entry.second.visible && entry.second.groupId < 0;
        }) > 1;  // a group's seeds shown beside it are not runs of their own
    const bool batchStatistics = std::any_of(
        store().runs().begin(), store().runs().end(),
        [](const auto& entry) { return entry.second.visible && !entry.second.valLossBatchStats.empty(); });
    if (severalRuns) content.styleKey = tr("solid: train, dashed: validation, dotted: lr");
    if (batchStatistics)  // BatchNorm: validation on running statistics and on the batches' own
        content.styleKey =
            tr("solid: train, dashed: validation (running statistics), dash-dot: validation "
               "(the batches' own), dotted: lr");
    content.emptyText = tr("Start a run (F5) or a lesson");
    for (const auto& [id, run] : store().runs()) {
        if (!run.visible) continue;
        const bool seed = run.groupId >= 0;  // one seed of a group shown beside its mean: thin, faint
        PlotSeries train = runSeries(store(), run, tr("train"), true, pointsOf(run.loss, columns));
        if (!seed) train.width = 1.6;
        content.series.push_back(train);
        if (run.bands) addSeedBand(content, run, false);
        if (!run.valLoss.empty()) {
            PlotSeries validation =
                runSeries(store(), run, tr("validation"), false, pointsOf(run.valLoss, columns));
            if (!seed) {
                validation.colour = run.colour.darker(140);
                validation.width = 2.4;
                validation.pointsVisible = true;
            }
            validation.style = Qt::DashLine;
            content.series.push_back(validation);
            if (run.bands) addSeedBand(content, run, true);
        }
        if (!run.valLossBatchStats.empty()) {  // BatchNorm's train/eval gap: validation in training's mode
            PlotSeries batch = runSeries(store(), run, tr("validation, batch statistics"), false,
                                         pointsOf(run.valLossBatchStats, columns));
            batch.style = Qt::DashDotLine;
            if (!seed) {
                batch.colour = run.colour.darker(140);
                batch.width = 1.8;
                batch.pointsVisible = true;
            }
            content.series.push_back(batch);
        }
        PlotSeries lr = runSeries(store(), run, tr("lr"), false, pointsOf(run.lr, columns));
        lr.colour.setAlpha(150);
        lr.width = 1.2;
        lr.style = Qt::DotLine;
        lr.onSecondaryAxis = true;
        content.series.push_back(lr);
    }
    content.markers = eventMarkers(store());
    return content;
}

}  // namespace normlab::ui
