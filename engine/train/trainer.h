// The trainer: one synchronous call per optimizer step (no threads of its own). It applies due live
// changes, trains, measures telemetry, detects divergence and spikes, and reports it all by value.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/backend/backend.h"
#include "engine/config/config.h"
#include "engine/core/trailing_window.h"
#include "engine/data/task.h"
#include "engine/model/model.h"
#include "engine/train/live_changes.h"
#include "engine/train/loss_scaler.h"
#include "engine/train/loss_spikes.h"
#include "engine/train/optimizer.h"
#include "engine/train/telemetry.h"

namespace normlab {

// What one step reports. The record's scalars (step, loss, lr, grad_norm, and val_loss / val_accuracy
// on validation steps) are valid on every step and belong in metrics.jsonl every step; only the
// per-layer telemetry is measured every telemetry.every steps (and on step 1).
struct StepOutcome {
    StepRecord record;
    bool logged = false;  // the record carries per-layer telemetry (telemetry.every)
    std::vector<Event> events;
};

// Where a divergence seen only in the gradients (finite loss) showed first, in backward order: the
// final norm and the head are position model.layers (the index after the last block), then the
// blocks from the top down; -1 when only the embeddings' (or an encoder's) gradients are bad or none is.
// `grad_squares` holds each layout entry's sum of squared gradients; inactive entries are skipped.
int first_bad_gradient_position(const Model& model, const std::vector<double>& grad_squares);

class Trainer {
  public:
    // Validates the config, builds the task, checks the memory the whole run needs (ResourceError
    // before anything large is allocated), then builds backend, model and optimizer and initialises
    // them from the seed. Throws InputError / ResourceError with a message to act on.
    explicit Trainer(const Config& config);
    ~Trainer();

    const Config& config() const { return m_config; }
    Model& model() { return *m_model; }
    Optimizer& optimizer() { return *m_optimizer; }
    const Task& task() const { return *m_task; }
    Backend& backend() { return *m_backend; }
    const Backend& backend() const { return *m_backend; }
    const std::string& device_reason() const { return m_device_reason; }

    int64_t steps_done() const { return m_steps_done; }
    RunStatus status() const { return m_status; }
    bool finished() const { return m_status != RunStatus::Running || m_steps_done >= m_config.train.steps; }
    int64_t diverged_at() const { return m_diverged_at; }
    // The block where a divergence showed first: from the forward pass, the first block whose
    // residual sum is not finite; from the gradients alone (finite loss), the first non-finite one in
    // backward order. The final norm and the head are position `model.layers` (the index after the
    // last block); -1 when unknown or only the embeddings' gradients are bad.
    int first_bad_layer() const { return m_first_bad_layer; }
    // The loss of the last step taken (0 before any step; see final_loss()).
    double last_loss() const { return m_last_loss.value_or(0.0); }
    // The last finite loss of a step this trainer took (a run that diverged to NaN keeps the loss
    // before it), or nothing when it took none with a finite loss.
    std::optional<double> final_loss() const { return m_last_finite_loss; }
    std::optional<double> last_val_loss() const { return m_last_val_loss; }
    double steps_per_second() const;

    // One training step (after applying the live changes due). A diverged step ends the run with
    // status Diverged and an event; it is a result, never an exception. The outcome lives in the
    // trainer and is overwritten by the next step: steady-state steps allocate nothing (see
    // tests/engine/allocations/); copy it to keep it.
    const StepOutcome& step();

    // Thread-safe: queue a live change for the engine thread. A change that apply() rejects becomes an
    // event of kind "rejected_change" with the reason, in the outcome of the step it was due before.
    void post(LiveChange change) { m_live_changes.post(std::move(change)); }
    // Applies a live change now (engine thread); returns its event. Throws InputError for a key that
    // is not in live_keys() (the message lists them) or a bad value, ResourceError for a device that
    // cannot be had; the run is then unchanged. `device` and `threads` build a backend with
    // make_backend and switch to it (switch_backend); the event's message names the new backend.
    Event apply(const LiveChange& change);

    // Moves the whole run onto `next` between two steps: parameters, gradients, optimizer moments and
    // the last update (learnable scalars such as ReZero's a_l and DyT's alpha live among the
    // parameters) and the last pass's activations are copied through the host; the step count,
    // schedule, data position, spike window and config are untouched, so training continues exactly
    // where it was. All or nothing: if `next` cannot hold the buffers (ResourceError) the run stays on
    // the old backend. `reason` becomes device_reason(). The config's device / threads keys are not
    // changed (apply() does that for live changes).
    void switch_backend(std::unique_ptr<Backend> next, std::string reason);

    // Mean loss (and accuracy for synthetic tasks) over `batches` fixed batches of a split.
    // BatchNorm and PowerNorm normalise with `statistics`: the running ones (as at inference) unless asked.
    double evaluate(Split split, int batches, double* accuracy = nullptr,
                    FeatureStatistics statistics = FeatureStatistics::Running);

    void mark_stopped() {
        if (m_status == RunStatus::Running) m_status = RunStatus::Stopped;
    }
    void mark_completed() {
        if (m_status == RunStatus::Running) m_status = RunStatus::Completed;
    }

    // Checkpoint state beyond the tensors.
    int64_t schedule_origin() const { return m_schedule_origin; }
    // train.loss_scale's state (a checkpoint keeps it; load_checkpoint restores it).
    LossScaler& loss_scaler() { return m_loss_scaler; }
    const LossScaler& loss_scaler() const { return m_loss_scaler; }
    // The trailing losses loss-spike detection judges the next step against (checkpoints keep them).
    const LossSpikeDetector& loss_spikes() const { return m_spikes; }
    void restore_loss_spikes(const std::vector<double>& recent) { m_spikes.restore(recent); }
    void restore_progress(int64_t steps_done, int64_t schedule_origin);

    double current_lr() const;

  private:
    // Builds the backend `next` asks for (device, threads) and switches to it.
    void switch_to_device_of(const Config& next);
    // Per-block telemetry of a logged step (trainer_telemetry.cpp): the forward pass's values, the
    // gradient norms from m_grad_squares and the optimizer's view of each block.
    void fill_layer_telemetry(const ForwardStats& forward, StepRecord& record);
    GradientNorms gradient_norms(const BlockIndex& index, bool cross) const;
    void fill_optimizer_state(int block, bool encoder, LayerTelemetry& layer) const;
    // step()'s parts: the live changes due before step t (rejected ones become events); the gradient's
    // total sum of squares over the active entries (filling m_grad_squares); the optimizer step with
    // clipping (with the squares telemetry needs on logged steps); the run-level telemetry; a loss spike
    // event; and validation when due (it overwrites the model's ForwardStats).
    void apply_due_commands(int64_t t, StepOutcome& outcome);
    double gradient_squares_total();
    void update_parameters(int64_t t, bool logged, const StepRecord& record);
    StepTelemetry step_telemetry(const ForwardStats& forward) const;
    void observe_loss_spike(int64_t t, double loss, StepOutcome& outcome);
    void validate_if_due(int64_t t, StepRecord& record);
    // Remembers a step's loss (and, when finite, as the run's final loss).
    void note_loss(double loss);
    // Why this step's pass ends the run (a non-finite value, or a loss above the train.diverge_loss
    // bound), or nothing.
    std::optional<std::string> divergence(const ForwardStats& forward, double grad_total);
    // Ends the run as diverged at step t for `reason`, with the event naming the first bad block.
    void end_diverged(int64_t t, const ForwardStats& forward, const std::string& reason,
                      StepOutcome& outcome);
    // Each layout entry's sum of squares of a role buffer (parameters, gradients, updates) into `out`.
    void entry_sum_squares(const float* base, std::vector<double>& out);
    // Mixed precision (trainer_precision.cpp): a live train.precision (the memory its scratch needs is
    // checked first: ResourceError); whether a dynamic loss scale skips this step (a finite forward pass
    // whose scaled gradients overflowed); the skip recorded as an event and the scale backed off, true
    // when a long run of them ended the run as diverged; the gradients and their squares divided by
    // the step's loss scale; a step's per-block update fields zeroed (no update was made).
    void switch_precision(NumberFormat precision);
    bool overflowed(const ForwardStats& forward, double grad_total) const;
    bool skip_step(int64_t t, const ForwardStats& forward, StepOutcome& outcome);
    void unscale_gradients(double& grad_total);
    static void clear_update_telemetry(StepRecord& record);

    Config m_config;
    std::string m_device_reason;
    std::unique_ptr<Task> m_task;
    std::unique_ptr<Backend> m_backend;
    std::unique_ptr<Model> m_model;
    std::unique_ptr<Optimizer> m_optimizer;
    LiveChangeQueue m_live_changes;
    LossSpikeDetector m_spikes;
    LossScaler m_loss_scaler;
    double m_step_loss_scale = 1.0;  // the scale the current step's backward ran with
    Batch m_batch;
    Batch m_eval_batch;

    // Per-step buffers, sized at construction and reused, so that a step allocates nothing.
    StepOutcome m_outcome;
    std::vector<Slice> m_entry_slices;                                      // one per layout entry
    std::vector<double> m_grad_squares, m_update_squares, m_param_squares;  // per layout entry
    std::vector<double> m_second_moment_sums;                               // per layout entry
    std::vector<double> m_below_eps_counts;  // per layout entry: second-moment coordinates under eps^2

    int64_t m_steps_done = 0;
    int64_t m_schedule_origin = 0;  // warmup switched on live counts from here
    RunStatus m_status = RunStatus::Running;
    int64_t m_diverged_at = -1;
    int m_first_bad_layer = -1;
    std::optional<double> m_last_loss, m_last_finite_loss;
    double m_reference_loss = 0.0;  // max(ln vocabulary, the first step's loss): diverge_loss's unit
    std::optional<double> m_last_val_loss;
    TrailingWindow<double> m_step_seconds{20};
};

}  // namespace normlab
