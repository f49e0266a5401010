// The update-ratio chart's series: one per block of the selected run.
#include "ui/panels/update_ratio_panel.h"

#include "ui/panels/event_markers.h"

namespace normlab::ui {

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

}  // namespace normlab::ui
