// The model's own warmups, applied per training step: norm-gain warmup (every norm's gain acts as s g, s
// ramping to 1) and ProRes residual warmup (block l's branch scaled by min(1, t / (T l)));
// docs/model.md#norm-gain-and-residual-warmup.
#include <algorithm>

#include "engine/model/model.h"

namespace normlab {

float Model::norm_gain_scale() const {
    const int steps = m_config.norm_gain_warmup_steps;
    if (steps <= 0) return 1.0f;
    const double progress = std::min(1.0, static_cast<double>(m_training_step - 1) / steps);
    const double start = m_config.norm_gain_warmup_start;
    return static_cast<float>(start + (1.0 - start) * std::max(0.0, progress));
}

float Model::residual_warmup_scale(int block) const {
    const int steps = m_config.residual_warmup_steps;
    if (steps <= 0) return 1.0f;
    const double ramp = static_cast<double>(steps) * (block + 1);
    return static_cast<float>(std::clamp(static_cast<double>(m_training_step) / ramp, 0.0, 1.0));
}

void Model::scale_norm_gains() {
    const GainWarmup& warmup = m_gain_warmup;
    for (size_t i = 0; i < warmup.offsets.size(); ++i) {
        if (warmup.offsets[i] == GainWarmup::kNoShadow) continue;
        const ParamEntry& entry = m_layout.entries[i];
        float* shadow = warmup.shadow + warmup.offsets[i];
        m_backend->copy(shadow, m_params + entry.offset, entry.count);
        m_backend->scale(shadow, warmup.scale, entry.count);
    }
}

void Model::scale_norm_gain_grads() {
    const GainWarmup& warmup = m_gain_warmup;
    for (size_t i = 0; i < warmup.offsets.size(); ++i) {
        if (warmup.offsets[i] == GainWarmup::kNoShadow) continue;
        const ParamEntry& entry = m_layout.entries[i];
        m_backend->scale(m_grads + entry.offset, warmup.scale, entry.count);
    }
}

}  // namespace normlab
