// Short human descriptions of a configuration: a run's label ("Post-LN LayerNorm, 6 blocks ...")
// and the caption under exported charts naming every visible run's configuration.
#pragma once
#include <QString>
#include <map>

#include "engine/config/config.h"
#include "ui/history/telemetry_store.h"
#include "ui/plots/plot_content.h"

namespace normlab::ui {

QString placementLabel(normlab::NormPlacement placement);
// "Post-LN LayerNorm, DeepNorm, 48x64, Adam lr 0.001, warmup 0, seed 1" (a group's: "seeds 1-5")
QString configSummary(const normlab::Config& config, const QString& seeds = {});
// configSummary of a run; for another writer's run, its source and the model shape it gave.
QString runSummary(const RunHistory& run);
// Names a run's series for the legend. One visible run: "what", every series in the legend. Several:
// the primary series is the run's name (one legend entry per run, its colour), the others are
// "run what" and left out of the legend (their line style is explained in the axis titles). A seed
// group's member (shown beside its group's mean) is thin, faint and out of the legend.
PlotSeries runSeries(const TelemetryStore& store, const RunHistory& run, const QString& what, bool primary,
                     QVector<QPointF> points);
// For each visible run (by id), the config keys whose values differ between the visible runs, as
// "key=value ..."; empty when fewer than two runs are visible or nothing differs.
std::map<int, QString> differencesByRun(const TelemetryStore& store);
// The live changes a run went through, in order: "switched to Pre-LN at step 101, train.lr=0.001 from
// step 200"; empty when none (its starting config alone would misstate what it trained as).
QString liveChangesText(const RunHistory& run);
// "Differs: run key=value; ..." (when runs differ), then one line per visible run: "name: summary",
// followed by its live changes.
QString captionForRuns(const TelemetryStore& store);

}  // namespace normlab::ui
