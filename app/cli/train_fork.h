// `normlab-cli train --fork RUN_DIR --at N`: a new run that starts from the parent run's checkpoint at
// step N (weights, optimizer moments, step, schedule, data position) and trains on the same batches,
// with the asked-for changes applied from step N+1 (docs/cli.md#forks).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "app/cli/cli_options.h"
#include "engine/train/live_changes.h"

namespace normlab {
class Trainer;
}

namespace normlab::cli {

struct ForkRequest {
    std::string parent;  // the parent run folder
    int64_t at = -1;     // the step to fork at: one the parent holds a checkpoint for
};

// The checkpoint of the parent at `request.at`; throws InputError naming the steps the parent has.
std::string fork_checkpoint(const ForkRequest& request);

// The fork's trainer: `checkpoint` (fork_checkpoint's answer), with the --set values of keys that are
// not live and --steps (default: the parent's train.steps) applied as for --resume; a --set of a live
// key is appended to `changes` as a change before step at + 1, as a live toggle would make it. Throws
// InputError when the file holds another step or nothing is left to train.
std::unique_ptr<Trainer> make_fork_trainer(const ForkRequest& request, const std::string& checkpoint,
                                           const ConfigSources& sources, std::vector<LiveChange>& changes);

}  // namespace normlab::cli
