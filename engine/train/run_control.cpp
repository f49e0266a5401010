// RunControl's flags and the plain training loop shared by the CLI and the GUI's worker.
// The loop checks the flags only between two steps, never inside one.
#include "engine/train/run_control.h"

namespace normlab {

void RunControl::pause() {
    std::lock_guard lock(m_mutex);
    m_paused = true;
}

void RunControl::resume() {
    {
        std::lock_guard lock(m_mutex);
        m_paused = false;
        m_single_steps = 0;
    }
    m_wake.notify_all();
}

void RunControl::step_once() {
    {
        std::lock_guard lock(m_mutex);
        m_paused = true;
        ++m_single_steps;
    }
    m_wake.notify_all();
}

void RunControl::stop() {
    {
        std::lock_guard lock(m_mutex);
        m_stop.store(true);
    }
    m_wake.notify_all();
}

bool RunControl::paused() const {
    std::lock_guard lock(m_mutex);
    return m_paused;
}

bool RunControl::wait_until_may_step() {
    std::unique_lock lock(m_mutex);
    m_wake.wait(lock, [this] { return m_stop.load() || !m_paused || m_single_steps > 0; });
    if (m_stop.load()) return false;
    if (m_paused) --m_single_steps;
    return true;
}

RunStatus run_training(Trainer& trainer, RunControl& control,
                       const std::function<void(const StepOutcome&)>& on_step) {
    while (!trainer.finished()) {
        if (!control.wait_until_may_step()) {
            trainer.mark_stopped();
            return trainer.status();
        }
        const StepOutcome& outcome = trainer.step();
        if (on_step) on_step(outcome);
    }
    trainer.mark_completed();
    return trainer.status();
}

}  // namespace normlab
