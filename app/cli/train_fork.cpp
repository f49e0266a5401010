// Forks: the parent's checkpoint at the asked step is loaded like --resume's, and --set values are split
// into overrides (keys that are not live) and changes at the fork's first step (live keys).
#include "app/cli/train_fork.h"

#include <algorithm>

#include "engine/core/errors.h"
#include "engine/io/checkpoint.h"
#include "engine/io/run_checkpoints.h"
#include "engine/train/trainer.h"

namespace normlab::cli {

std::string fork_checkpoint(const ForkRequest& request) {
    return checkpoint_at_step(request.parent, request.at);
}

namespace {
// A fork is its parent at step N on the same batches with one change: a key that is not live may only
// change what is kept and logged (how long it trains, checkpoints, telemetry) or, for the model's keys,
// be refused by the load when it does not fit. train.seed, the batch size, the optimizer or the data
// would change its batches or its updates from step N+1 with no change on record.
void require_fork_keeps_trajectory(const std::string& key, int64_t at) {
    static const std::vector<std::string> kept = {"train.steps", "train.checkpoint_every",
                                                  "train.checkpoint_keep"};
    if (key.rfind("model.", 0) == 0 || key.rfind("telemetry.", 0) == 0) return;
    if (std::find(kept.begin(), kept.end(), key) != kept.end()) return;
    throw InputError("--set " + key + " would change the fork's batches or updates from step " +
                     std::to_string(at + 1) +
                     " with no live change on record, so it would not be a fork of "
                     "its parent: a fork's --set takes live keys (normlab-cli train --help lists them), " +
                     "train.steps, train.checkpoint_every/_keep and telemetry keys; for another " + key +
                     " train a new run");
}
}  // namespace

std::unique_ptr<Trainer> make_fork_trainer(const ForkRequest& request, const std::string& checkpoint,
                                           const ConfigSources& sources, std::vector<LiveChange>& changes) {
    if (sources.config_path || sources.preset)
        throw InputError("--fork takes its config from the parent's checkpoint; drop --config / --preset");
    // A value out of its range is the value's fault, whatever the parent: said as --set says it (for a
    // live key too, not as the --change it becomes), before a load failure is blamed on the model's
    // shape (model.bn_momentum=0 once was).
    Config parent = checkpoint_config(checkpoint);
    std::vector<std::string> overrides;
    for (const std::string& assignment : sources.sets) {
        apply_override(parent, assignment);
        const std::string key = assignment.substr(0, assignment.find('='));
        if (!is_live_key(key)) {
            require_fork_keeps_trajectory(key, request.at);
            overrides.push_back(assignment);
            continue;
        }
        LiveChange change = parse_live_change(assignment);
        change.at_step = request.at + 1;
        changes.push_back(change);
    }
    std::string named;  // the model's --set values (a load failure is theirs; --steps is not one)
    for (const std::string& assignment : overrides) named += (named.empty() ? "" : " ") + assignment;
    if (sources.steps) overrides.push_back("train.steps=" + std::to_string(*sources.steps));
    validate(parent);
    std::unique_ptr<Trainer> trainer;
    try {
        trainer = load_checkpoint(checkpoint, overrides);
    } catch (const InputError& error) {
        if (named.empty()) throw;
        throw InputError(std::string(error.what()) + "; a fork keeps its parent's model, and --set " + named +
                         " does not fit it: drop the --set values that change the model's shape");
    }
    if (trainer->steps_done() != request.at)
        throw InputError("checkpoint '" + checkpoint + "' holds step " +
                         std::to_string(trainer->steps_done()) + ", not " + std::to_string(request.at) +
                         "; the folder's files disagree, fork at " + std::to_string(trainer->steps_done()) +
                         " instead");
    if (trainer->steps_done() >= trainer->config().train.steps)
        throw InputError("the fork starts at step " + std::to_string(request.at) + " and train.steps is " +
                         std::to_string(trainer->config().train.steps) +
                         ": nothing to train; pass --steps M " + "with M > " + std::to_string(request.at));
    return trainer;
}

}  // namespace normlab::cli
