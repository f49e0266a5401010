// Stopping a training loop that runs on another thread or under a signal handler (the CLI's Ctrl-C):
// a flag the loop checks between two steps (never inside one), so stop answers within one step. The
// window pauses and single-steps its runs from Qt's event loop instead (app/gui/training_worker.h).
#pragma once
#include <atomic>
#include <functional>

#include "engine/train/trainer.h"

namespace normlab {

class RunControl {
  public:
    // Any thread, and async-signal-safe (a lock-free atomic store).
    void stop() { m_stop.store(true); }
    bool stop_requested() const { return m_stop.load(); }

  private:
    std::atomic<bool> m_stop{false};
    static_assert(std::atomic<bool>::is_always_lock_free);
};

// Steps `trainer` until it finishes or `control` stops it, calling on_step after every step (on the
// calling thread). A stopped run is marked Stopped; a finished one Completed (or Diverged).
RunStatus run_training(Trainer& trainer, const RunControl& control,
                       const std::function<void(const StepOutcome&)>& on_step);

}  // namespace normlab
