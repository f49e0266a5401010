// Periodic checkpoints (train.checkpoint_every, train.checkpoint_keep): after every N-th step the run
// folder's checkpoint is replaced, atomically, by the run's state then, and with checkpoint_keep != 1
// also kept under its step's name (engine/io/run_checkpoints.h), so a crash or a loss spike can be resumed
// and a run forked from shortly before it; summary.json's checkpoint_step says which step the newest
// holds. Used by the CLI's training loop, sweep points and the window's worker alike.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "engine/core/write_fence.h"

namespace normlab {

class Trainer;
struct Config;

class PeriodicCheckpoint {
  public:
    // `folder`: the run folder (its model.safetensors is the newest checkpoint). every <= 0: never
    // saves on its own (after_step is a no-op); keep as train.checkpoint_keep. `fence` runs before
    // each write (a sweep point's claim), as in write_file_atomically.
    PeriodicCheckpoint(std::string folder, int every, int keep = 1, WriteFence fence = {});
    // The periodic checkpoints a run's config asks for, into the run folder `folder`.
    static PeriodicCheckpoint for_run(const std::string& folder, const Config& config, WriteFence fence = {});

    // After a step: saves the checkpoint when the step is a multiple of `every` and the run still
    // trains (a diverged step made no update worth keeping). Returns whether it saved.
    bool after_step(Trainer& trainer);
    // Saves the run's state now (the end of a run with --save-checkpoint), kept like the periodic ones.
    void save(Trainer& trainer);
    // Records a checkpoint already in the folder (a run resumed in place from it).
    void note_saved(int64_t step) { m_saved_step = step; }
    // Sets summary["checkpoint_step"] once a checkpoint exists.
    void annotate(nlohmann::json& summary) const;

  private:
    std::string m_folder;
    int m_every;
    int m_keep;
    WriteFence m_fence;
    std::optional<int64_t> m_saved_step;
};

}  // namespace normlab
