// The plain training loop of the CLI: the stop flag is read only between two steps.
#include "engine/train/run_control.h"

namespace normlab {

RunStatus run_training(Trainer& trainer, const RunControl& control,
                       const std::function<void(const StepOutcome&)>& on_step) {
    while (!trainer.finished()) {
        if (control.stop_requested()) {
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
