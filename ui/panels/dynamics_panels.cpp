// Content of the update-ratio, attention, attention-logit and output-logit charts.
#include "ui/panels/dynamics_panels.h"

#include "ui/panels/event_markers.h"
#include "ui/panels/run_captions.h"

namespace normlab::ui {

namespace {
struct NamedPoints {
    QString name;
    QVector<QPointF> points;
};

// Two quantities of one run: the first solid in the run's colour, the second dashed in a lighter one
// (on the right axis when `dashedOnSecondary`).
void addSolidAndDashed(PlotContent& content, const TelemetryStore& store, const RunHistory& run,
                       const NamedPoints& solid, const NamedPoints& dashed, bool dashedOnSecondary) {
    PlotSeries first = runSeries(store, run, solid.name, true, solid.points);
    first.width = 1.8;
    content.series.push_back(first);
    PlotSeries second = runSeries(store, run, dashed.name, false, dashed.points);
    second.colour = run.colour.lighter(130);
    second.width = 1.4;
    second.style = Qt::DashLine;
    second.onSecondaryAxis = dashedOnSecondary;
    content.series.push_back(second);
}
}  // namespace

UpdateRatioPanel::UpdateRatioPanel(const TelemetryStore& store, QWidget* parent)
    : LinePanel(QStringLiteral("update_ratio"), tr("Update / parameter ratio per block"), store, parent) {
    m_runs = addRunSelector();
}

PlotContent UpdateRatioPanel::buildContent(int columns) const {
    PlotContent content;
    content.x = stepAxis();
    content.y.title = tr("||update||/||W||");
    content.y.log = true;
    const RunHistory* run = m_runs->selectedRun();
    content.emptyText = emptyText(tr("Appears after the first step"), run);
    if (!run) return content;
    addBlockSeries(content, run->updateRatio, columns);
    content.markers = eventMarkers(store());
    return content;
}

AttentionLogitPanel::AttentionLogitPanel(const TelemetryStore& store, QWidget* parent)
    : LinePanel(QStringLiteral("attention_logits"), tr("Attention logits and q, k RMS per block"), store,
                parent) {
    m_runs = addRunSelector();
}

PlotContent AttentionLogitPanel::buildContent(int columns) const {
    PlotContent content;
    content.x = stepAxis();
    content.y = AxisSpec{tr("largest logit"), true, std::nullopt, std::nullopt, tr("solid")};
    content.y2 = AxisSpec{tr("RMS of q, k"), true, std::nullopt, std::nullopt, QString()};  // legend: q, k
    const RunHistory* run = m_runs->selectedRun();
    content.emptyText = emptyText(tr("Appears after the first step with attention statistics"), run);
    if (!run) return content;
    addBlockSeries(content, run->blockMaxLogit, columns);
    addBlockSeries(content, run->queryRms, columns, tr(" q RMS"), Qt::DashLine, true);
    addBlockSeries(content, run->keyRms, columns, tr(" k RMS"), Qt::DotLine, true);
    content.markers = eventMarkers(store());
    return content;
}

AttentionPanel::AttentionPanel(const TelemetryStore& store, QWidget* parent)
    : LinePanel(QStringLiteral("attention"), tr("Attention entropy and largest logit"), store, parent) {}

PlotContent AttentionPanel::buildContent(int columns) const {
    PlotContent content;
    content.x = stepAxis();
    content.y.title = tr("entropy (nats)");
    content.y2 = AxisSpec{tr("max logit"), false, std::nullopt, std::nullopt, tr("dashed")};
    content.emptyText = emptyText(tr("Appears after the first step"));
    for (const auto& [id, run] : store().runs()) {
        if (!run.visible) continue;
        addSolidAndDashed(content, store(), run, {tr("entropy"), pointsOf(run.attnEntropyMean, columns)},
                          {tr("max logit"), pointsOf(run.attnMaxLogit, columns)}, true);
    }
    content.markers = eventMarkers(store());
    return content;
}

OutputLogitPanel::OutputLogitPanel(const TelemetryStore& store, QWidget* parent)
    : LinePanel(QStringLiteral("output_logits"), tr("Output logits: log Z and mean logit"), store, parent) {}

PlotContent OutputLogitPanel::buildContent(int columns) const {
    PlotContent content;
    content.x = stepAxis();
    content.y.title = tr("nats");  // the legend names log Z (solid) and the mean logit (dashed)
    content.emptyText = emptyText(tr("Appears after the first logged step"));
    for (const auto& [id, run] : store().runs()) {
        if (!run.visible) continue;
        addSolidAndDashed(content, store(), run, {tr("mean log Z"), pointsOf(run.logZMean, columns)},
                          {tr("mean logit"), pointsOf(run.outputLogitMean, columns)}, false);
    }
    content.markers = eventMarkers(store());
    return content;
}

}  // namespace normlab::ui
