// Thread-safe run control for a training loop on another thread: pause, resume, single step and stop
// are flags the loop checks between two steps (never inside one), so stop answers within one step.
#pragma once
#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>

#include "engine/train/trainer.h"

namespace normlab {

class RunControl {
  public:
    void pause();
    void resume();
    // While paused: allow exactly one more step, then stay paused.
    void step_once();
    void stop();
    // Async-signal-safe variant of stop() (no lock, no wake-up): for SIGINT handlers of loops that
    // are not paused.
    void stop_from_signal() { m_stop.store(true); }

    bool paused() const;
    bool stop_requested() const { return m_stop.load(); }

    // Engine thread, between steps: blocks while paused (until resume, a single step or stop).
    // Returns false when the loop should end.
    bool wait_until_may_step();

  private:
    mutable std::mutex m_mutex;
    std::condition_variable m_wake;
    std::atomic<bool> m_stop{false};
    bool m_paused = false;
    int m_single_steps = 0;
};

// Steps `trainer` until it finishes or `control` stops it, calling on_step after every step (on the
// calling thread). A stopped run is marked Stopped; a finished one Completed (or Diverged).
RunStatus run_training(Trainer& trainer, RunControl& control,
                       const std::function<void(const StepOutcome&)>& on_step);

}  // namespace normlab
