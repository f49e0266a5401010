// Periodic checkpoints (train.checkpoint_every): after every N-th step the run folder's checkpoint is
// replaced, atomically, by the run's state then, so a crash or a loss spike can be resumed from shortly
// before it; summary.json's checkpoint_step says which step the file holds. Used by the CLI's training
// loop and the window's worker alike.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "engine/io/write_fence.h"

namespace normlab {

class Trainer;

class PeriodicCheckpoint {
  public:
    // every <= 0: never saves (after_step is a no-op).
    // `fence` runs before each save (a sweep point's claim), as in write_file_atomically.
    PeriodicCheckpoint(std::string path, int every, WriteFence fence = {})
        : m_path(std::move(path)), m_every(every), m_fence(std::move(fence)) {}

    // After a step: saves the checkpoint when the step is a multiple of `every` and the run still
    // trains (a diverged step made no update worth keeping). Returns whether it saved.
    bool after_step(Trainer& trainer);
    // Records a checkpoint written by someone else (the end of a run with --save-checkpoint).
    void note_saved(int64_t step) { m_saved_step = step; }
    // Sets summary["checkpoint_step"] once a checkpoint exists.
    void annotate(nlohmann::json& summary) const;

  private:
    std::string m_path;
    int m_every;
    WriteFence m_fence;
    std::optional<int64_t> m_saved_step;
};

}  // namespace normlab
