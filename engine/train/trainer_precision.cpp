// The trainer's side of mixed precision (docs/precision.md): the format and loss scale each pass runs
// with, a dynamic loss scale's skipped steps (recorded as events and in the metrics; a run of
// kMaxSkippedInARow of them in a row ends the run as diverged), and unscaling the gradients before
// clipping, telemetry and the update, as GradScaler.unscale_ does.
#include <cmath>
#include <sstream>

#include "engine/core/number_format.h"
#include "engine/train/trainer.h"

namespace normlab {

namespace {
// Halving 2^16 fifty times in a row reaches ~6e-11: a scale no gradient needs, so the run is stuck.
constexpr int64_t kMaxSkippedInARow = 50;
}  // namespace

void Trainer::prepare_precision() {
    m_model->set_precision(m_config.train.precision);
    m_loss_scaler.follow(parse_loss_scale(m_config.train.loss_scale));
    m_step_loss_scale = m_loss_scaler.scale();
    m_model->set_loss_scale(static_cast<float>(m_step_loss_scale));
}

bool Trainer::skip_overflowed_step(int64_t t, const ForwardStats& forward, double grad_total, bool logged,
                                   StepOutcome& outcome) {
    // Only the gradients overflowing is the scale's fault; a forward pass that overflowed is divergence.
    const bool forward_finite = std::isfinite(forward.loss) && forward.first_nonfinite_block < 0;
    if (!m_loss_scaler.dynamic() || !forward_finite || std::isfinite(grad_total)) return false;
    m_loss_scaler.after_backward(false);
    StepRecord& record = outcome.record;
    record.step = t;
    record.loss = forward.loss;
    record.lr = current_lr();
    record.grad_norm = grad_total;  // not finite: written as null
    if (logged) record.telemetry = step_telemetry(forward);
    outcome.logged = logged;
    std::ostringstream message;
    message << "step " << t << " skipped: its gradients at loss scale " << format_number(m_step_loss_scale)
            << " overflowed; the scale is now " << format_number(m_loss_scaler.scale());
    outcome.events.push_back({t, "skipped_step", message.str(), "", "", -1});
    if (m_loss_scaler.skipped_in_a_row() >= kMaxSkippedInARow) {
        end_diverged(t, forward,
                     "the dynamic loss scale skipped " + std::to_string(kMaxSkippedInARow) +
                         " steps in a row (scale now " + format_number(m_loss_scaler.scale()) + ")",
                     outcome);
        return true;
    }
    m_steps_done = t;
    note_loss(forward.loss);
    if (m_steps_done >= m_config.train.steps) m_status = RunStatus::Completed;
    return true;
}

void Trainer::unscale_gradients(double& grad_total) {
    m_loss_scaler.after_backward(true);
    if (m_step_loss_scale == 1.0) return;
    const double inverse = 1.0 / m_step_loss_scale;
    Model& model = *m_model;
    m_backend->scale(model.grads(), static_cast<float>(inverse), model.layout().total);
    for (double& squares : m_grad_squares) squares *= inverse * inverse;
    grad_total *= inverse * inverse;
}

}  // namespace normlab
