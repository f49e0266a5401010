// What one logged training step reports (the metrics.jsonl contract, docs/formats.md#metricsjsonl), and
// the events (live changes, loss spikes, divergence; docs/formats.md#eventsjsonl) the trainer emits, as
// plain values that can cross threads.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/core/not_recorded.h"

namespace normlab {

struct GradientNorms {
    double w_qkv = 0.0, w_o = 0.0, w_1 = 0.0, w_2 = 0.0;
    // the norms' gains (weights); a norm the model lacks (norm_type none, Peri-LN's output norms under
    // other placements) is not recorded, as are the cross-attention's below without an encoder
    double norm1 = 0.0, norm2 = 0.0, norm1_out = 0.0, norm2_out = 0.0;
    double w_cross_q = 0.0, w_cross_kv = 0.0, w_cross_o = 0.0, norm_cross = 0.0, norm_cross_out = 0.0;
};

struct LayerTelemetry {
    double resid = 0.0;       // E||s||^2/d of the block's output residual sum (before any norm after it)
    double resid_attn = 0.0;  // the same for the attention sub-layer's residual sum
    GradientNorms grad;
    double update_ratio = 0.0;   // ||update|| / ||parameters|| over the block's active tensors
    double update_rms = 0.0;     // RMS of the block's last update, over its active parameters
    double adam_grad_rms = 0.0;  // sqrt of the mean of Adam's second moment over them (SGD: unrecorded)
    // The share of the block's coordinates whose sqrt(v) is below Adam's eps (unrecorded under SGD)
    double adam_eps_fraction = kNotRecorded;
    double attn_entropy = 0.0;
    double attn_max_logit = 0.0;
    // The attention and FFN sub-layers' norms: mean and coefficient of variation over tokens of the
    // per-token scale 1/std (how much each norm actually normalises; unrecorded without a norm or with
    // DyT, which has no per-token scale)
    double norm1_scale_mean = 0.0, norm1_scale_cv = 0.0, norm2_scale_mean = 0.0, norm2_scale_cv = 0.0;
    // The same for Peri-LN's output norms of the two sub-layers (unrecorded under other placements)
    double norm1_out_scale_mean = 0.0, norm1_out_scale_cv = 0.0;
    double norm2_out_scale_mean = 0.0, norm2_out_scale_cv = 0.0;
    // BatchNorm: the gap between the attention's and the FFN's norm's batch statistics and their running
    // ones, sqrt(mean over features of ((mu_B - mu_R)^2 + (sigma_B - sigma_R)^2) / sigma_R^2), the
    // 2-Wasserstein distance of the two normals in running standard deviations (unrecorded otherwise)
    double norm1_stat_gap = kNotRecorded, norm2_stat_gap = kNotRecorded;
    double q_rms = 0.0;  // RMS of the queries and of the keys entering attention (before any QK-norm)
    double k_rms = 0.0;
    // Emulated precision (train.precision other than fp32; docs/precision.md): the shares of the block's
    // matmul activations and gradients that overflowed or underflowed when rounded to the format, and
    // the headroom log2(format max / largest |x|) of its residual stream; unrecorded in fp32
    double act_overflow = kNotRecorded, act_underflow = kNotRecorded;
    double grad_overflow = kNotRecorded, grad_underflow = kNotRecorded;
    double stream_headroom = kNotRecorded;
    // Admin's dependency of each sub-layer on its branch: Var[F(x)] / Var[x + F(x)].
    double dependency_attn = 0.0;
    double dependency_ffn = 0.0;
    // Each sub-layer's contribution share ||a F(x)|| / ||x||: its branch as added against the stream it
    // is added to (the PreNorm dilution: Pre-LN's deep blocks add a shrinking share)
    double contribution_attn = kNotRecorded;
    double contribution_ffn = kNotRecorded;
    double contribution_cross = kNotRecorded;
    // A decoder block of an encoder-decoder model also reports its cross-attention sub-layer.
    bool has_cross = false;
    double resid_cross = 0.0;
    double cross_attn_entropy = 0.0;
    double cross_attn_max_logit = 0.0;
    double dependency_cross = 0.0;
    // its norm's per-token scale, as norm1_scale_* (and Peri-LN's output norm's, as norm1_out_scale_*)
    double norm_cross_scale_mean = 0.0, norm_cross_scale_cv = 0.0;
    double norm_cross_stat_gap = kNotRecorded;  // its norm's, as norm1_stat_gap
    double norm_cross_out_scale_mean = 0.0, norm_cross_out_scale_cv = 0.0;
};

// The run-level values of a logged step (docs/formats.md#metricsjsonl): the output logits over its
// scored positions, and the gradient norms outside the blocks.
struct StepTelemetry {
    double z_loss = 0.0;  // the z-loss term's mean, train.z_loss x (log Z)^2 (unrecorded when off)
    double log_z_mean = 0.0;
    double log_z_max_abs = 0.0;
    double logit_mean = 0.0;
    double logit_max = 0.0;
    double grad_embedding = 0.0;  // ||grad|| of the token and position embeddings together
    double grad_head = 0.0;       // ||grad|| of the output head
    // The decoder's final norm: mean and coefficient of variation over tokens of its per-token scale
    // 1/std (unrecorded without a final norm, or with DyT)
    double final_norm_scale_mean = 0.0;
    double final_norm_scale_cv = 0.0;
    double encoder_final_norm_scale_mean = 0.0;  // the same for the encoder's (unrecorded without one)
    double encoder_final_norm_scale_cv = 0.0;
    // train.loss_scale: the scale this step's loss gradient was multiplied by, and the steps skipped so
    // far because their scaled gradients overflowed (dynamic); unrecorded without loss scaling
    double loss_scale = kNotRecorded;
    double skipped_steps = kNotRecorded;
};

struct StepRecord {
    int64_t step = 0;  // optimizer steps completed, counting this one
    double loss = 0.0;
    double lr = 0.0;
    double grad_norm = 0.0;          // global, before clipping
    std::optional<double> accuracy;  // synthetic tasks: on the answer part
    std::optional<double> val_loss;
    std::optional<double> val_accuracy;
    // BatchNorm: the same validation batches on their own statistics (training's), beside val_loss on the
    // running ones: its train/eval gap (PowerNorm trains on its running statistics: no gap to record)
    std::optional<double> val_loss_batch_stats;
    std::vector<LayerTelemetry> layers;          // empty on steps without full telemetry
    std::vector<LayerTelemetry> encoder_layers;  // the same for the encoder's blocks (if any)
    std::optional<StepTelemetry> telemetry;      // on steps with full telemetry
    // With per-block telemetry from attention statistics: each decoder block's heads' largest logits,
    // [block][head] (empty otherwise; layers[b].attn_max_logit is the largest of block b's).
    std::vector<double> attn_head_max_logit;
    double steps_per_s = 0.0;
};

struct Event {
    int64_t step = 0;
    std::string kind;     // "change", "loss_spike", "diverged", "paused", ...
    std::string message;  // human-readable
    std::string key;      // for changes: the config key
    std::string value;    // for changes: the new value (JSON text)
    int block = -1;       // for divergence: the first block with a non-finite value
};

enum class RunStatus { Running, Completed, Diverged, Stopped };
// Each status's name as summary.json and the views write it (to_string and the run-folder reader's
// status_from_summary both read this table).
inline constexpr std::array<std::pair<RunStatus, std::string_view>, 4> kRunStatusNames{{
    {RunStatus::Running, "running"},
    {RunStatus::Completed, "completed"},
    {RunStatus::Diverged, "diverged"},
    {RunStatus::Stopped, "stopped"},
}};
std::string to_string(RunStatus status);

}  // namespace normlab
