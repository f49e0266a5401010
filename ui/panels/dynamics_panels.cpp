// Content of the update-ratio and attention charts.
#include "ui/panels/dynamics_panels.h"

#include <QLabel>

#include "ui/panels/event_markers.h"
#include "ui/panels/run_captions.h"
#include "ui/plots/colour_map.h"

namespace normlab::ui {

UpdateRatioPanel::UpdateRatioPanel(const TelemetryStore& store, QWidget* parent)
    : LinePanel(QStringLiteral("update_ratio"), tr("Update / parameter ratio per block"), store, parent) {
    m_runs = new RunSelector(store);
    header()->addWidget(new QLabel(tr("Run")));
    header()->addWidget(m_runs);
    header()->addStretch();
    connect(m_runs, &QComboBox::currentIndexChanged, this, &UpdateRatioPanel::refresh);
}

PlotContent UpdateRatioPanel::buildContent(int columns) const {
    PlotContent content;
    content.x = stepAxis();
    content.y.title = tr("||update||/||W||");
    content.y.log = true;
    content.emptyText = tr("Appears after the first step");
    const RunHistory* run = m_runs->selectedRun();
    if (!run) return content;
    const int blocks = static_cast<int>(run->updateRatio.size());
    for (int b = 0; b < blocks; ++b) {
        // Colour runs from dark (block 0) to light (last block); legend only at the ends.
        const double depth = blocks > 1 ? static_cast<double>(b) / (blocks - 1) : 0.0;
        PlotSeries series{tr("block %1").arg(b), viridis(depth * 0.9), pointsOf(run->updateRatio[b], columns),
                          1.3};
        series.inLegend = b == 0 || b == blocks - 1;
        content.series.push_back(series);
    }
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
    content.emptyText = tr("Appears after the first step");
    for (const auto& [id, run] : store().runs()) {
        if (!run.visible) continue;
        PlotSeries entropy =
            runSeries(store(), run, tr("entropy"), true, pointsOf(run.attnEntropyMean, columns));
        entropy.width = 1.8;
        content.series.push_back(entropy);
        PlotSeries logit =
            runSeries(store(), run, tr("max logit"), false, pointsOf(run.attnMaxLogit, columns));
        logit.colour = run.colour.lighter(130);
        logit.width = 1.4;
        logit.style = Qt::DashLine;
        logit.onSecondaryAxis = true;
        content.series.push_back(logit);
    }
    content.markers = eventMarkers(store());
    return content;
}

}  // namespace normlab::ui
