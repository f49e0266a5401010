// Event markers for the time axes: every live change and divergence of the visible runs, and the loss
// spikes and a dynamic loss scale's skipped steps (each thinned to the newest few so labels stay
// readable), in the run's colour.
#pragma once
#include <vector>

#include "ui/history/telemetry_store.h"
#include "ui/plots/plot_content.h"

namespace normlab::ui {

std::vector<PlotMarker> eventMarkers(const TelemetryStore& store, int maxSpikesPerRun = 8);
// Marker text for one event ("lr=1e-4", "spike", "skipped", "diverged (block 3)").
QString markerLabel(const normlab::Event& event);

}  // namespace normlab::ui
