// The training loop behind `normlab-cli train` and `normlab-cli sweep run-point`: steps a trainer to
// its end into a run folder (metrics and events per step, summary.json kept current), with Ctrl-C and
// SIGTERM stopping it cleanly and a failure recorded in the folder before it propagates.
#pragma once
#include <cstdint>
#include <functional>

#include <nlohmann/json.hpp>

#include "engine/io/periodic_checkpoint.h"
#include "engine/io/run_folder.h"
#include "engine/train/trainer.h"

namespace normlab::cli {

struct TrainLoopOptions {
    bool quiet = false;                  // no progress lines on stderr
    std::function<void()> on_heartbeat;  // called every few seconds while training (sweep claims)
    double heartbeat_seconds = 5.0;      // how often summary.json is rewritten while running
};

// Trains to the end (or a stop signal) and returns the final summary.json, already written. While it
// runs, summary.json says "running" with the steps done, the last loss and a heartbeat time, so a
// reader can tell a live run from a dead one; `checkpoints` saves the periodic checkpoint and names its
// step there. Rethrows what stopped it after recording "failed" (WriteFenceLost: without writing).
nlohmann::json train_into_folder(Trainer& trainer, RunFolder& folder, int64_t first_step,
                                 const TrainLoopOptions& options, PeriodicCheckpoint& checkpoints);

}  // namespace normlab::cli
