// The attention-logit chart's series: per block of the selected run, the largest logit and q, k RMS.
#include "ui/panels/attention_logit_panel.h"

#include "ui/panels/event_markers.h"

namespace normlab::ui {

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

}  // namespace normlab::ui
