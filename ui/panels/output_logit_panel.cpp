// The output-logit chart's series: each visible run's mean log Z and mean logit.
#include "ui/panels/output_logit_panel.h"

#include "ui/panels/event_markers.h"
#include "ui/panels/solid_and_dashed.h"

namespace normlab::ui {

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
