// Trainer::step and its helpers: live changes between steps, the training step with clipping,
// per-block telemetry from sums of squares over named views, divergence and loss-spike events.
#include "engine/train/trainer.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "engine/core/errors.h"
#include "engine/core/memory_check.h"
#include "engine/core/rng.h"
#include "engine/train/schedule.h"

namespace normlab {

std::string to_string(RunStatus status) {
    for (const auto& [each, name] : kRunStatusNames)
        if (each == status) return std::string(name);
    return "running";
}

Trainer::Trainer(const Config& config)
    : m_config(config), m_spikes(config.telemetry.spike_window, config.telemetry.spike_z) {
    validate(m_config);
    m_task = make_task(m_config.data, m_config.model.seq_len, m_config.train.seed);
    // Everything large (parameters, optimizer state, activations, the batch) is checked at once,
    // before the first of them is allocated.
    const int batch = m_config.train.batch_size;
    const int seq = m_config.model.seq_len;
    const int vocab = model_vocab(m_config.model, *m_task);
    check_memory(estimate_training_bytes(m_config.model, vocab, batch, seq, m_config.train.precision),
                 "training this model (parameters, optimizer state and activations for batch " +
                     std::to_string(batch) + " x seq " + std::to_string(seq) + ")");
    m_backend = make_backend(m_config.device, m_config.threads, &m_device_reason);
    m_model = std::make_unique<Model>(m_config.model, vocab, *m_backend);
    m_model->initialize(m_config.train.seed);
    m_model->set_precision(m_config.train.precision);  // every pass on this model: eval, probes, dumps too
    m_loss_scaler.follow(parse_loss_scale(m_config.train.loss_scale));
    m_optimizer = std::make_unique<Optimizer>(*m_model);
    const auto& entries = m_model->layout().entries;
    for (const auto& entry : entries) m_entry_slices.push_back({entry.offset, entry.count});
    m_grad_squares.resize(entries.size());
    m_update_squares.resize(entries.size());
    m_param_squares.resize(entries.size());
    m_second_moment_sums.resize(entries.size());
    m_below_eps_counts.resize(entries.size());
    m_outcome.record.layers.reserve(static_cast<size_t>(m_config.model.layers));
    m_outcome.record.encoder_layers.reserve(static_cast<size_t>(m_config.model.encoder_layers));
    const size_t tokens = static_cast<size_t>(batch) * static_cast<size_t>(seq);
    m_eval_batch.inputs.reserve(tokens);  // so that the first validation step allocates nothing either
    m_eval_batch.targets.reserve(tokens);
    if (m_config.model.residual == Residual::Admin && m_config.model.admin_init == AdminInit::Profiled) {
        m_task->make_batch(Split::Train, 0, m_config.train.batch_size, m_config.model.seq_len, m_batch);
        m_model->profile_admin(m_batch);
    }
}

Trainer::~Trainer() = default;

double Trainer::current_lr() const {
    return learning_rate(m_config.train, m_config.model.d_model, m_steps_done + 1 - m_schedule_origin);
}

double Trainer::steps_per_second() const {
    if (m_step_seconds.empty()) return 0.0;
    double total = 0.0;
    for (size_t i = 0; i < m_step_seconds.size(); ++i) total += m_step_seconds[i];
    return total > 0.0 ? static_cast<double>(m_step_seconds.size()) / total : 0.0;
}

void Trainer::restore_progress(int64_t steps_done, int64_t schedule_origin) {
    m_steps_done = steps_done;
    m_schedule_origin = schedule_origin;
}

Event Trainer::apply(const LiveChange& change) {
    Event event;
    event.step = m_steps_done + 1;
    event.kind = "change";
    event.key = change.key;
    require_live_key(change.key);
    if (change.key == "reinit_deepnorm_beta") {
        const auto touched =
            m_model->reinitialize_deepnorm_beta(mix_seed(m_config.train.seed, m_steps_done + 1));
        m_optimizer->reset_entries(touched);
        event.message = "re-initialised attention V, output and FFN weights with DeepNorm beta";
        return event;
    }
    Config next = m_config;
    apply_override(next, change.key + "=" + change.value);
    validate(next);
    const bool new_backend = change.key == "device" || change.key == "threads";
    if (new_backend) switch_to_device_of(next);  // throws before anything changed
    if (change.key == "train.warmup_steps" && m_config.train.warmup_steps == 0 &&
        next.train.warmup_steps > 0) {
        m_schedule_origin = m_steps_done;  // warmup switched on: ramp up from this step
    }
    if (change.key == "train.precision") switch_precision(next.train.precision);  // throws before a change
    if (change.key == "train.loss_scale") m_loss_scaler.follow(parse_loss_scale(next.train.loss_scale));
    if (change.key.rfind("model.", 0) == 0) {
        const auto activated = m_model->set_wiring(effective_model_config(next.model));
        m_optimizer->reset_entries(activated);
    }
    m_config = next;
    event.value = change.value;
    event.message = change.key + " = " + change.value;
    if (new_backend) event.message += ": now on " + m_backend->name() + " (" + m_device_reason + ")";
    return event;
}

int first_bad_gradient_position(const Model& model, const std::vector<double>& grad_squares) {
    const ParamLayout& layout = model.layout();
    const int above_last_block = static_cast<int>(layout.blocks.size());
    int position = -1;
    for (size_t i = 0; i < layout.entries.size() && i < grad_squares.size(); ++i) {
        const int entry = static_cast<int>(i);
        if (!model.active(entry) || std::isfinite(grad_squares[i])) continue;
        const int block = layout.entries[i].block;
        // the embeddings and the encoder come after every decoder block in backward order
        const bool below_decoder =
            entry == layout.wte || entry == layout.wpe || layout.entries[i].encoder_block >= 0;
        position = std::max(position, block >= 0 ? block : (below_decoder ? -1 : above_last_block));
    }
    return position;
}

void Trainer::entry_sum_squares(const float* base, std::vector<double>& out) {
    m_backend->sum_squares(base, m_entry_slices, out.data());
}

namespace {
// Empties an outcome for the next step but keeps the capacity of its vectors.
void clear_keeping_capacity(StepOutcome& outcome) {
    std::vector<LayerTelemetry> layers = std::move(outcome.record.layers);
    std::vector<LayerTelemetry> encoder_layers = std::move(outcome.record.encoder_layers);
    std::vector<Event> events = std::move(outcome.events);
    std::vector<double> head_max_logit = std::move(outcome.record.attn_head_max_logit);
    layers.clear();
    encoder_layers.clear();
    events.clear();
    head_max_logit.clear();
    outcome = StepOutcome{};
    outcome.record.layers = std::move(layers);
    outcome.record.encoder_layers = std::move(encoder_layers);
    outcome.events = std::move(events);
    outcome.record.attn_head_max_logit = std::move(head_max_logit);
}
}  // namespace

void Trainer::apply_due_commands(int64_t t, StepOutcome& outcome) {
    for (const LiveChange& change : m_live_changes.take_due(t)) {
        try {
            outcome.events.push_back(apply(change));
        } catch (const InputError& error) {  // ResourceError included: e.g. device=cuda without a GPU
            outcome.events.push_back({t, "rejected_change", error.what(), change.key, change.value, -1});
        }
    }
}

double Trainer::gradient_squares_total() {
    entry_sum_squares(m_model->grads(), m_grad_squares);
    double grad_total = 0.0;
    for (size_t i = 0; i < m_grad_squares.size(); ++i) {
        if (m_model->active(static_cast<int>(i))) grad_total += m_grad_squares[i];
    }
    return grad_total;
}

void Trainer::update_parameters(int64_t t, bool logged, const StepRecord& record) {
    const double clip = m_config.train.clip_grad_norm;
    const double grad_scale = clip > 0.0 && record.grad_norm > clip ? clip / record.grad_norm : 1.0;
    // The optimizer's own step counts its updates: a step the loss scale skipped made none (Adam's bias
    // corrections and RAdam's rectification follow it, as torch.optim's do behind a GradScaler).
    const int64_t update = t - m_loss_scaler.skipped();
    if (logged) {  // the parameters' and updates' squares come from the update's own pass
        m_optimizer->update(m_config.train, update, record.lr, grad_scale, m_param_squares.data(),
                            m_update_squares.data());
    } else {
        m_optimizer->update(m_config.train, update, record.lr, grad_scale);
    }
}

StepTelemetry Trainer::step_telemetry(const ForwardStats& forward) const {
    const ParamLayout& layout = m_model->layout();
    // an absent wpe (model.position rope, none) adds nothing; a tied head is the embedding matrix
    auto squares_of = [&](int entry) { return entry < 0 ? 0.0 : m_grad_squares[static_cast<size_t>(entry)]; };
    return StepTelemetry{
        m_config.train.z_loss > 0.0 ? forward.z_loss : kNotRecorded,  // no z-loss term: nothing to log
        forward.log_z_mean,
        forward.log_z_max_abs,
        forward.logit_mean,
        forward.logit_max,
        std::sqrt(squares_of(layout.wte) + squares_of(layout.wpe)),
        std::sqrt(squares_of(layout.head)),
        forward.decoder.final_norm_scale_mean,
        forward.decoder.final_norm_scale_cv,
        forward.encoder.final_norm_scale_mean,
        forward.encoder.final_norm_scale_cv,
        m_loss_scaler.active() ? m_step_loss_scale : kNotRecorded,
        m_loss_scaler.active() ? static_cast<double>(m_loss_scaler.skipped()) : kNotRecorded};
}

void Trainer::observe_loss_spike(int64_t t, double loss, StepOutcome& outcome) {
    const double z = m_spikes.observe(loss);
    if (!(z > 0.0)) return;  // none (a NaN z included)
    std::ostringstream message;
    message << "loss spike at step " << t << ": loss " << loss << " (z = " << z << ")";
    outcome.events.push_back({t, "loss_spike", message.str(), "", "", -1});
}

void Trainer::validate_if_due(int64_t t, StepRecord& record) {
    const int val_every = m_config.telemetry.val_every;
    if (val_every <= 0 || (t % val_every != 0 && t != m_config.train.steps)) return;
    double accuracy = 0.0;
    record.val_loss = evaluate(Split::Validation, m_config.telemetry.val_batches, &accuracy);
    if (m_task->has_accuracy()) record.val_accuracy = accuracy;
    if (m_config.model.norm_type == NormType::BatchNorm)  // PowerNorm's training forward is its running one
        record.val_loss_batch_stats =
            evaluate(Split::Validation, m_config.telemetry.val_batches, nullptr, FeatureStatistics::Batch);
    m_last_val_loss = record.val_loss;
}

const StepOutcome& Trainer::step() {
    StepOutcome& outcome = m_outcome;
    clear_keeping_capacity(outcome);
    if (finished()) return outcome;
    const auto started = std::chrono::steady_clock::now();
    const int64_t t = m_steps_done + 1;
    apply_due_commands(t, outcome);

    const bool logged = (t % m_config.telemetry.every) == 0 || t == 1;
    m_task->make_batch(Split::Train, static_cast<uint64_t>(t - 1), m_config.train.batch_size,
                       m_config.model.seq_len, m_batch);
    m_model->set_training_step(t);  // the model's own warmups (norm gains, residual branches)
    m_step_loss_scale = m_loss_scaler.scale();
    m_model->set_loss_scale(static_cast<float>(m_step_loss_scale));
    m_model->set_feature_statistics(FeatureStatistics::BatchUpdating);  // BatchNorm's running statistics move
    const ForwardStats& forward = m_model->forward_backward(
        m_batch,
        {.backward = true, .attention_stats = logged, .z_loss = static_cast<float>(m_config.train.z_loss)});
    m_model->set_loss_scale(1.0f);                              // validation, probes and dumps run unscaled
    m_model->set_feature_statistics(FeatureStatistics::Batch);  // and move no running statistics
    double grad_total = gradient_squares_total();
    const bool skipped = overflowed(forward, grad_total);
    unscale_gradients(grad_total);

    StepRecord& record = outcome.record;
    record.step = t;
    record.loss = forward.loss;
    record.lr = current_lr();
    record.grad_norm = std::sqrt(grad_total);
    if (m_task->has_accuracy() && forward.scored > 0) {
        record.accuracy = static_cast<double>(forward.correct) / static_cast<double>(forward.scored);
    }
    if (skipped) {
        if (skip_step(t, forward, outcome)) return outcome;  // a long run of skips ended it
    } else {
        if (const std::optional<std::string> reason = divergence(forward, grad_total)) {
            end_diverged(t, forward, *reason, outcome);
            return outcome;
        }
        m_loss_scaler.after_backward(true);
        update_parameters(t, logged, record);
    }
    m_steps_done = t;
    note_loss(forward.loss);
    if (logged) {
        fill_layer_telemetry(forward, record);
        record.telemetry = step_telemetry(forward);
        if (skipped) clear_update_telemetry(record);
    }
    outcome.logged = logged;
    observe_loss_spike(t, forward.loss, outcome);
    // Validation passes overwrite the model's ForwardStats: `forward` is not read after this.
    validate_if_due(t, record);
    if (m_steps_done >= m_config.train.steps) m_status = RunStatus::Completed;

    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    m_step_seconds.push(seconds);
    record.steps_per_s = steps_per_second();
    return outcome;
}

void Trainer::note_loss(double loss) {
    m_last_loss = loss;
    if (std::isfinite(loss)) m_last_finite_loss = loss;
}

std::optional<std::string> Trainer::divergence(const ForwardStats& forward, double grad_total) {
    if (!std::isfinite(forward.loss)) return "non-finite loss";
    if (forward.first_nonfinite_block >= 0 || !std::isfinite(grad_total)) return "non-finite gradient";
    if (m_reference_loss == 0.0)
        m_reference_loss = std::max(std::log(static_cast<double>(m_task->vocab_size())), forward.loss);
    const double bound = m_config.train.diverge_loss * m_reference_loss;
    if (bound <= 0.0 || forward.loss <= bound) return std::nullopt;
    std::ostringstream reason;
    reason << "loss " << forward.loss << " above " << bound << " (train.diverge_loss "
           << m_config.train.diverge_loss << " x " << m_reference_loss
           << ", the larger of ln(vocabulary) and the first step's loss)";
    return reason.str();
}

void Trainer::end_diverged(int64_t t, const ForwardStats& forward, const std::string& reason,
                           StepOutcome& outcome) {
    m_status = RunStatus::Diverged;
    m_diverged_at = t;
    m_first_bad_layer = forward.first_nonfinite_block >= 0
                            ? forward.first_nonfinite_block
                            : first_bad_gradient_position(*m_model, m_grad_squares);
    m_steps_done = t;
    note_loss(forward.loss);
    std::ostringstream message;
    message << "training diverged at step " << t << ": " << reason;
    if (m_first_bad_layer >= 0) {
        message << ", first in "
                << (m_first_bad_layer >= m_config.model.layers
                        ? std::string("the final norm / output head")
                        : "block " + std::to_string(m_first_bad_layer));
    }
    outcome.events.push_back({t, "diverged", message.str(), "", "", m_first_bad_layer});
    // The step that matters most gets its per-block values (non-finite ones are written as null), so
    // the first bad block shows on the charts; no update was made, so no update ratio.
    fill_layer_telemetry(forward, outcome.record);
    clear_update_telemetry(outcome.record);
    outcome.logged = true;
}

double Trainer::evaluate(Split split, int batches, double* accuracy, FeatureStatistics statistics) {
    const FeatureStatistics kept = m_model->feature_statistics();
    m_model->set_feature_statistics(statistics);
    double loss_sum = 0.0;
    int64_t scored = 0;
    int64_t correct = 0;
    for (int i = 0; i < batches; ++i) {
        m_task->make_batch(split, static_cast<uint64_t>(i), m_config.train.batch_size, m_config.model.seq_len,
                           m_eval_batch);
        const ForwardStats& stats = m_model->forward_backward(m_eval_batch, {.backward = false});
        loss_sum += stats.loss * static_cast<double>(stats.scored);
        scored += stats.scored;
        correct += stats.correct;
    }
    m_model->set_feature_statistics(kept);
    if (accuracy) *accuracy = scored > 0 ? static_cast<double>(correct) / static_cast<double>(scored) : 0.0;
    return scored > 0 ? loss_sum / static_cast<double>(scored) : 0.0;
}

}  // namespace normlab
