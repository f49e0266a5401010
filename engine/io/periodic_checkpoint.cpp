// PeriodicCheckpoint: save_checkpoint (an atomic replace) on every N-th step of a run that still trains,
// then, with checkpoint_keep != 1, a kept copy under the step's name and the oldest beyond K removed.
#include "engine/io/periodic_checkpoint.h"

#include <nlohmann/json.hpp>

#include "engine/config/config.h"
#include "engine/io/checkpoint.h"
#include "engine/io/run_checkpoints.h"
#include "engine/train/trainer.h"

namespace normlab {

PeriodicCheckpoint::PeriodicCheckpoint(std::string folder, int every, int keep, WriteFence fence)
    : m_folder(std::move(folder)), m_every(every), m_keep(keep), m_fence(std::move(fence)) {}

PeriodicCheckpoint PeriodicCheckpoint::for_run(const std::string& folder, const Config& config,
                                               WriteFence fence) {
    return PeriodicCheckpoint(folder, config.train.checkpoint_every, config.train.checkpoint_keep,
                              std::move(fence));
}

bool PeriodicCheckpoint::after_step(Trainer& trainer) {
    const int64_t step = trainer.steps_done();
    if (m_every <= 0 || step % m_every != 0 || trainer.status() == RunStatus::Diverged) return false;
    save(trainer);
    return true;
}

void PeriodicCheckpoint::save(Trainer& trainer) {
    const std::string latest = m_folder + "/model.safetensors";
    save_checkpoint(trainer, latest, m_fence);
    m_saved_step = trainer.steps_done();
    if (m_keep == 1) return;
    check_fence(m_fence);
    keep_checkpoint(latest, m_folder, *m_saved_step);
    prune_kept_checkpoints(m_folder, m_keep);
}

void PeriodicCheckpoint::annotate(nlohmann::json& summary) const {
    if (m_saved_step) summary["checkpoint_step"] = *m_saved_step;
}

}  // namespace normlab
