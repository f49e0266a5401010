// LossScaler's state machine, following torch.amp.GradScaler's update rule (_amp_update_scale_): back
// off and reset the growth count on a non-finite step; grow after the interval when the grown scale is
// still a finite float32.
#include "engine/train/loss_scaler.h"

#include <cmath>
#include <limits>
#include <string>

#include "engine/core/errors.h"

namespace normlab {

void LossScaler::follow(const LossScaleSpec& spec) {
    if (spec.kind == m_spec.kind && spec.value == m_spec.value) return;
    m_spec = spec;
    m_scale = spec.kind == LossScaleSpec::Kind::None ? 1.0 : spec.value;
    m_finite_in_a_row = 0;
    m_skipped_in_a_row = 0;
}

void LossScaler::restore(double scale, int64_t finite_in_a_row, int64_t skipped) {
    if (!(scale > 0.0) || !std::isfinite(scale) || finite_in_a_row >= kDynamicGrowthInterval)
        throw InputError("a checkpoint's loss scale state (scale " + std::to_string(scale) + ", " +
                         std::to_string(finite_in_a_row) +
                         " finite steps in a row) is not one a loss scale can be in; the file is corrupt");
    m_scale = active() ? scale : 1.0;
    m_finite_in_a_row = static_cast<int>(finite_in_a_row);
    m_skipped = skipped;
    m_skipped_in_a_row = 0;
}

bool LossScaler::after_backward(bool finite) {
    if (!dynamic()) return true;  // a fixed scale, or none: what the gradients are is the step's result
    if (!finite) {
        m_scale *= kDynamicBackoffFactor;
        m_finite_in_a_row = 0;
        ++m_skipped;
        ++m_skipped_in_a_row;
        return false;
    }
    m_skipped_in_a_row = 0;
    if (++m_finite_in_a_row == kDynamicGrowthInterval) {
        const double grown = m_scale * kDynamicGrowthFactor;
        if (grown <= std::numeric_limits<float>::max()) m_scale = grown;
        m_finite_in_a_row = 0;
    }
    return true;
}

}  // namespace normlab
