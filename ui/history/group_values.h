// A window entry's runs as the engine's comparison sees run folders (engine/analysis/run_metric.h):
// a seed group's members, or the run itself, each with its seed, status and final loss or final
// validation loss from the records the window holds, so the window and `normlab-cli compare` agree.
#pragma once
#include <QString>
#include <vector>

#include "engine/analysis/run_metric.h"
#include "ui/history/telemetry_store.h"

namespace normlab::ui {

// `entry`'s runs (its members for a group) with the final validation loss (`validation`) or the final
// loss: used when completed with a finite value, diverged, or unfinished (running, stopped, no such
// value logged), as read_run_metric decides for a folder.
std::vector<normlab::RunValue> groupValues(const TelemetryStore& store, const RunHistory& entry,
                                           bool validation);

// The comparison of B and A on that metric in `normlab-cli compare`'s words: each entry's n, mean, sd
// and 95% CI, and B - A paired by seed or Welch's; empty when neither holds a value yet.
QString comparisonText(const TelemetryStore& store, const RunHistory& a, const RunHistory& b,
                       bool validation);

}  // namespace normlab::ui
