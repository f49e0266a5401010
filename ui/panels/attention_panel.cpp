// The attention chart's series: each visible run's mean entropy and largest logit.
#include "ui/panels/attention_panel.h"

#include "ui/panels/event_markers.h"
#include "ui/panels/solid_and_dashed.h"

namespace normlab::ui {

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

}  // namespace normlab::ui
