// Forks: the parent's checkpoint at the asked step is loaded like --resume's, and --set values are split
// into overrides (keys that are not live) and changes at the fork's first step (live keys).
#include "app/cli/train_fork.h"

#include "engine/core/errors.h"
#include "engine/io/checkpoint.h"
#include "engine/io/run_checkpoints.h"
#include "engine/train/trainer.h"

namespace normlab::cli {

std::string fork_checkpoint(const ForkRequest& request) {
    return checkpoint_at_step(request.parent, request.at);
}

std::unique_ptr<Trainer> make_fork_trainer(const ForkRequest& request, const std::string& checkpoint,
                                           const ConfigSources& sources, std::vector<Command>& changes) {
    if (sources.config_path || sources.preset)
        throw InputError("--fork takes its config from the parent's checkpoint; drop --config / --preset");
    // A value out of its range is the value's fault, whatever the parent: said as --set says it (for a
    // live key too, not as the --change it becomes), before a load failure is blamed on the model's
    // shape (model.bn_momentum=0 once was).
    Config parent = checkpoint_config(checkpoint);
    std::vector<std::string> overrides;
    for (const std::string& assignment : sources.sets) {
        apply_override(parent, assignment);
        if (!is_live_key(assignment.substr(0, assignment.find('=')))) {
            overrides.push_back(assignment);
            continue;
        }
        Command change = parse_command(assignment);
        change.at_step = request.at + 1;
        changes.push_back(change);
    }
    if (sources.steps) overrides.push_back("train.steps=" + std::to_string(*sources.steps));
    validate(parent);
    std::unique_ptr<Trainer> trainer;
    try {
        trainer = load_checkpoint(checkpoint, overrides);
    } catch (const InputError& error) {
        if (overrides.empty()) throw;
        std::string named;
        for (const std::string& assignment : overrides) named += (named.empty() ? "" : " ") + assignment;
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
