// The trainer's side of mixed precision (docs/precision.md): a live change of the format, a dynamic loss
// scale's skipped steps (recorded as events and in the metrics; a run of kMaxSkippedInARow of them in a
// row ends the run as diverged), and unscaling the gradients before clipping, telemetry and the update,
// as GradScaler.unscale_ does.
#include <cmath>
#include <sstream>

#include "engine/core/memory_check.h"
#include "engine/core/number_format.h"
#include "engine/train/trainer.h"

namespace normlab {

namespace {
// Halving 2^16 fifty times in a row reaches ~6e-11: a scale no gradient needs, so the run is stuck.
constexpr int64_t kMaxSkippedInARow = 50;
}  // namespace

void Trainer::switch_precision(NumberFormat precision) {
    if (m_model->precision() == NumberFormat::Fp32 && precision != NumberFormat::Fp32) {
        check_memory(emulated_precision_bytes(m_config.model, m_model->vocab(), m_config.train.batch_size,
                                              m_config.model.seq_len),
                     "emulated precision's scratch (the rounded parameters and a product's operands)");
    }
    m_model->set_precision(precision);
}

bool Trainer::overflowed(const ForwardStats& forward, double grad_total) const {
    // Only the gradients overflowing is the scale's fault; a forward pass that overflowed is divergence.
    const bool forward_finite = std::isfinite(forward.loss) && forward.first_nonfinite_block < 0;
    return m_loss_scaler.dynamic() && forward_finite && !std::isfinite(grad_total);
}

bool Trainer::skip_step(int64_t t, const ForwardStats& forward, StepOutcome& outcome) {
    m_loss_scaler.after_backward(false);
    std::ostringstream message;
    message << "step " << t << " skipped: its gradients at loss scale " << format_number(m_step_loss_scale)
            << " overflowed; the scale is now " << format_number(m_loss_scaler.scale());
    outcome.events.push_back({t, "skipped_step", message.str(), "", "", -1});
    if (m_loss_scaler.skipped_in_a_row() < kMaxSkippedInARow) return false;
    end_diverged(t, forward,
                 "the dynamic loss scale skipped " + std::to_string(kMaxSkippedInARow) +
                     " steps in a row (scale now " + format_number(m_loss_scaler.scale()) + ")",
                 outcome);
    return true;
}

void Trainer::unscale_gradients(double& grad_total) {
    if (m_step_loss_scale == 1.0) return;
    const double inverse = 1.0 / m_step_loss_scale;
    Model& model = *m_model;
    m_backend->scale(model.grads(), static_cast<float>(inverse), model.layout().total);
    for (double& squares : m_grad_squares) squares *= inverse * inverse;
    grad_total *= inverse * inverse;
}

void Trainer::clear_update_telemetry(StepRecord& record) {
    for (std::vector<LayerTelemetry>* layers : {&record.layers, &record.encoder_layers}) {
        for (LayerTelemetry& layer : *layers) {
            layer.update_ratio = 0.0;
            layer.update_rms = 0.0;
        }
    }
}

}  // namespace normlab
