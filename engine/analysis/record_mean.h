// The mean of several runs' records of one step (a seed group's line in the window): every value of
// the metrics.jsonl contract, walked through engine/io/record_fields.h, averaged over the runs that
// have it. A value a run left out (an unsampled attention field, no validation that step) is not a 0.
#pragma once
#include <span>

#include "engine/train/telemetry.h"

namespace normlab {

// The mean of `records` (all of one step; at least one). Each value is the mean over the records whose
// value is finite (NaN when none is); optional values (accuracy, validation loss, the step's
// telemetry) over the records that have them, absent when none has. Per-block values are averaged
// where every record has the same number of blocks; where they differ there are none (runs of
// different depths have no per-block mean).
StepRecord mean_record(std::span<const StepRecord* const> records);

}  // namespace normlab
