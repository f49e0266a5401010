// JSON forms of telemetry records, events and run summaries: the metrics.jsonl / events.jsonl /
// summary.json contract of design.md, shared by the CLI and the GUI.
#pragma once
#include <nlohmann/json.hpp>

#include "engine/train/telemetry.h"

namespace normlab {

class Trainer;

nlohmann::json to_json(const StepRecord& record);
nlohmann::json to_json(const Event& event);
// summary.json: status, steps, final_loss, diverged_at, first_bad_layer, steps_per_s (+ context).
// steps_per_s counts the steps taken in this session (a resumed run started at `first_step`).
nlohmann::json summary_json(const Trainer& trainer, double wall_seconds, int64_t first_step = 0);

}  // namespace normlab
