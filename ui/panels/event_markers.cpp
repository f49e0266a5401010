// Turning run events into labelled vertical markers.
#include "ui/panels/event_markers.h"

namespace normlab::ui {

QString markerLabel(const normlab::Event& event) {
    if (event.kind == "change") {
        QString key = QString::fromStdString(event.key);
        key = key.mid(key.indexOf(QLatin1Char('.')) + 1);
        return event.value.empty()
                   ? key
                   : key + QLatin1Char('=') + QString::fromStdString(event.value).remove(QLatin1Char('"'));
    }
    if (event.kind == "diverged")
        return event.block >= 0 ? QStringLiteral("diverged (block %1)").arg(event.block)
                                : QStringLiteral("diverged");
    if (event.kind == "loss_spike") return QStringLiteral("spike");
    if (event.kind == "skipped_step") return QStringLiteral("skipped");
    return QString::fromStdString(event.kind);
}

std::vector<PlotMarker> eventMarkers(const TelemetryStore& store, int maxSpikesPerRun) {
    std::vector<PlotMarker> markers;
    for (const auto& [id, run] : store.runs()) {
        if (!run.visible) continue;
        int spikes = 0, skips = 0;
        for (auto it = run.events.rbegin(); it != run.events.rend(); ++it) {
            const bool spike = it->kind == "loss_spike", skip = it->kind == "skipped_step";
            if ((spike && ++spikes > maxSpikesPerRun) || (skip && ++skips > maxSpikesPerRun)) continue;
            if (it->kind != "change" && it->kind != "diverged" && !spike && !skip) continue;
            markers.push_back({static_cast<double>(it->step), markerLabel(*it),
                               it->kind == "diverged" ? QColor(200, 0, 40) : run.colour});
        }
    }
    return markers;
}

}  // namespace normlab::ui
