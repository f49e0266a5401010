// JSON forms of telemetry records, events and run summaries: the metrics.jsonl / events.jsonl /
// summary.json contract, written by the CLI and the GUI and read back by run-folder readers.
#pragma once
#include <nlohmann/json.hpp>

#include "engine/train/telemetry.h"

namespace normlab {

class Trainer;

nlohmann::json to_json(const StepRecord& record);
nlohmann::json to_json(const Event& event);
// The per-block fields flat, as tables name them ("resid", "grad.w_qkv", "dependency.attn"), in the
// contract's order, with the cross-attention ones when `cross`; and one block's values in that order.
std::vector<std::string> block_field_names(bool cross);
std::vector<double> block_field_values(const LayerTelemetry& layer, bool cross);
// The inverse of to_json(Event), for reading run folders; throws InputError naming what is wrong.
// (Metrics lines are read by MetricsLineParser, which is many times faster on large folders.)
Event event_from_json(const nlohmann::json& line);
// summary.json: status, steps, final_loss, diverged_at, first_bad_layer, steps_per_s (+ context).
// steps_per_s counts the steps taken in this session (a resumed run started at `first_step`).
nlohmann::json summary_json(const Trainer& trainer, double wall_seconds, int64_t first_step = 0);

}  // namespace normlab
