// PeriodicCheckpoint: save_checkpoint (an atomic replace) on every N-th step of a run that still trains.
#include "engine/io/periodic_checkpoint.h"

#include <nlohmann/json.hpp>

#include "engine/io/checkpoint.h"
#include "engine/train/trainer.h"

namespace normlab {

bool PeriodicCheckpoint::after_step(Trainer& trainer) {
    const int64_t step = trainer.steps_done();
    if (m_every <= 0 || step % m_every != 0 || trainer.status() == RunStatus::Diverged) return false;
    save_checkpoint(trainer, m_path, m_fence);
    m_saved_step = step;
    return true;
}

void PeriodicCheckpoint::annotate(nlohmann::json& summary) const {
    if (m_saved_step) summary["checkpoint_step"] = *m_saved_step;
}

}  // namespace normlab
