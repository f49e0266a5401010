// The loss scale of each training step (train.loss_scale; docs/precision.md): none, a fixed factor, or
// PyTorch's GradScaler rules (engine/config/loss_scale_spec.h's constants): a step whose scaled gradients
// are not finite is skipped and the scale halved; 2000 finite steps in a row double it.
#pragma once
#include <cstdint>

#include "engine/config/loss_scale_spec.h"

namespace normlab {

class LossScaler {
  public:
    // Follows train.loss_scale: a spec other than the current one starts again from its own scale (a
    // live change); the same spec keeps the state it has.
    void follow(const LossScaleSpec& spec);
    bool active() const { return m_spec.kind != LossScaleSpec::Kind::None; }
    bool dynamic() const { return m_spec.kind == LossScaleSpec::Kind::Dynamic; }
    // The factor this step's loss gradient is multiplied by (1 without loss scaling).
    double scale() const { return m_scale; }

    // After a step's backward, whether its scaled gradients were all finite; returns whether the step
    // may update the parameters (false: a dynamic scale skips it) and sets the next step's scale.
    bool after_backward(bool finite);
    int64_t skipped() const { return m_skipped; }              // steps skipped so far
    int finite_in_a_row() const { return m_finite_in_a_row; }  // toward the next growth
    // A checkpoint's state (the setting itself comes from its config): the scale, the finite steps in a
    // row and the steps skipped so far. Throws InputError for a state no loss scale can be in.
    void restore(double scale, int64_t finite_in_a_row, int64_t skipped);
    int64_t skipped_in_a_row() const { return m_skipped_in_a_row; }  // the latest run of them

  private:
    LossScaleSpec m_spec;
    double m_scale = 1.0;
    int m_finite_in_a_row = 0;
    int64_t m_skipped = 0;
    int64_t m_skipped_in_a_row = 0;
};

}  // namespace normlab
