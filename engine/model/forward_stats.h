// What one forward pass measures (ForwardStats): one StackStats per stack (decoder, cross-attention,
// encoder), the per-sub-layer lists, and the field tables that reserve, clear and the GPU self-check
// walk, so a new statistic is one member, one table row and the code that fills it.
#pragma once
#include <cstdint>
#include <vector>

#include "engine/backend/parity.h"
#include "engine/config/config.h"
#include "engine/core/not_recorded.h"

namespace normlab {

// One stack's per-block statistics: the decoder's blocks, the cross-attention sub-layers of an
// encoder-decoder's decoder blocks, or the encoder's blocks (kBlockLists says which stack has which).
struct StackStats {
    std::vector<double> resid;       // E||s||^2/d of the FFN residual sum (the block's output)
    std::vector<double> resid_attn;  // the same for the attention's (cross: the cross-attention's) sum
    // with attention statistics: the mean entropy of attention rows (nats), the largest scaled logit,
    // and [block][head] each head's largest scaled logit
    std::vector<double> attn_entropy, attn_max_logit, attn_head_max_logit;
    std::vector<double> q_rms, k_rms;  // with attention statistics: RMS of the queries and of the keys
                                       // entering attention, before any QK-norm
    // with attention statistics and backward under emulated precision (matmul_precision.h): the shares
    // of the block's rounded activations and gradients that overflowed and underflowed, and its
    // residual stream's headroom log2(format max / largest |x| of its residual sums)
    std::vector<double> act_overflow, act_underflow, grad_overflow, grad_underflow, stream_headroom;
    // with attention statistics: the stack's final norm's per-token scale 1/std, its mean and coefficient
    // of variation over tokens (kNotRecorded without one, or DyT)
    double final_norm_scale_mean = kNotRecorded, final_norm_scale_cv = kNotRecorded;
};

// Per sub-layer, by slot (SublayerSlots), with attention statistics: the mean and CV over tokens of its
// norm's per-token scale 1/std (Norm_in, or Post-LN's norm after the sum; kNotRecorded without one, or
// DyT), the
// same for Peri-LN's Norm_out, Admin's Var[F(x)] / Var[x + F(x)] of the branch actually added, and the
// contribution share ||a F(x)|| / ||x|| of that branch against the sub-layer's input x.
struct SublayerStats {
    std::vector<double> norm_scale_mean, norm_scale_cv;
    std::vector<double> norm_out_scale_mean, norm_out_scale_cv;
    std::vector<double> dependency;
    std::vector<double> contribution;  // ||a f|| / ||x||: the branch as added against the sub-layer's input
    // BatchNorm on batch statistics: how far the pass's statistics of its Norm_in (Post-LN: its norm) lie
    // from the running ones (Model::measure_feature_norm_gaps; kNotRecorded otherwise)
    std::vector<double> norm_stat_gap;
};

// Per-step measurements the forward pass produces (host values). The model keeps one instance whose
// lists are reserved for its layer count (reserve), so a pass fills them without allocating.
struct ForwardStats {
    double loss = 0.0;  // mean cross-entropy over scored positions (without z-loss)
    int64_t scored = 0;
    int64_t correct = 0;
    // The output logits over scored positions: the z-loss term's mean (z_loss (log Z)^2), log Z's mean and
    // largest magnitude, and the logits' mean and largest value.
    double z_loss = 0.0;
    double log_z_mean = 0.0, log_z_max_abs = 0.0;
    double logit_mean = 0.0, logit_max = 0.0;
    int first_nonfinite_block = -1;  // first block whose residual sum is not finite; layers = the head
                                     // (a non-finite encoder shows as block 0)
    StackStats decoder;
    StackStats cross;    // with an encoder (else every list empty)
    StackStats encoder;  // with an encoder (else every list empty)
    SublayerStats sublayers;

    // Sizes every list for `model` (kEveryPass lists to their length, the others' capacity).
    void reserve(const ModelConfig& model);
    // Empties the lists only telemetry steps fill and marks the stacks' scalars unrecorded (before every
    // pass).
    void clear_telemetry();
};

namespace forward_fields {

// Which stacks have a field (a mask of them).
enum StackMask : unsigned { kDecoder = 1u, kCross = 2u, kEncoder = 4u, kBlockStacks = 5u, kAllStacks = 7u };
// When a list is filled: every pass overwrites it in place (sized once), or telemetry steps
// (attention_stats) append to it after the pass has emptied it, or only those telemetry steps that run
// backward under emulated precision (train.precision other than fp32).
enum class Filled { kEveryPass, kTelemetrySteps, kPrecisionSteps };

struct Stack {
    StackMask mask;
    StackStats ForwardStats::*member;
    const char* prefix;  // of its fields' names in the self-check's report
};
inline constexpr Stack kStacks[] = {{kDecoder, &ForwardStats::decoder, ""},
                                    {kCross, &ForwardStats::cross, "cross_"},
                                    {kEncoder, &ForwardStats::encoder, "encoder_"}};

// Per-block lists: one value per block of each stack in `stacks`, or one per head with `per_head`.
struct BlockList {
    const char* name;
    std::vector<double> StackStats::*member;
    unsigned stacks;
    Filled filled;
    bool per_head = false;
};
inline constexpr BlockList kBlockLists[] = {
    {"resid", &StackStats::resid, kBlockStacks, Filled::kEveryPass},
    {"resid_attn", &StackStats::resid_attn, kAllStacks, Filled::kEveryPass},
    {"attn_entropy", &StackStats::attn_entropy, kAllStacks, Filled::kTelemetrySteps},
    {"attn_max_logit", &StackStats::attn_max_logit, kAllStacks, Filled::kTelemetrySteps},
    {"attn_head_max_logit", &StackStats::attn_head_max_logit, kDecoder, Filled::kTelemetrySteps, true},
    {"q_rms", &StackStats::q_rms, kDecoder, Filled::kTelemetrySteps},
    {"k_rms", &StackStats::k_rms, kDecoder, Filled::kTelemetrySteps},
    {"act_overflow", &StackStats::act_overflow, kBlockStacks, Filled::kPrecisionSteps},
    {"act_underflow", &StackStats::act_underflow, kBlockStacks, Filled::kPrecisionSteps},
    {"grad_overflow", &StackStats::grad_overflow, kBlockStacks, Filled::kPrecisionSteps},
    {"grad_underflow", &StackStats::grad_underflow, kBlockStacks, Filled::kPrecisionSteps},
    {"stream_headroom", &StackStats::stream_headroom, kBlockStacks, Filled::kPrecisionSteps}};

// A stack's values measured on telemetry steps (kNotRecorded on the others).
struct StackScalar {
    const char* name;
    double StackStats::*member;
    unsigned stacks;
};
inline constexpr StackScalar kStackScalars[] = {
    {"final_norm_scale_mean", &StackStats::final_norm_scale_mean, kBlockStacks},
    {"final_norm_scale_cv", &StackStats::final_norm_scale_cv, kBlockStacks}};

// Per-sub-layer lists, filled on telemetry steps, with the GPU self-check's tolerance (ratios of
// variances get the looser one).
struct SublayerList {
    const char* name;
    std::vector<double> SublayerStats::*member;
    double tolerance;
};
inline constexpr SublayerList kSublayerLists[] = {
    {"norm_scale_mean", &SublayerStats::norm_scale_mean, kParityTolerance},
    {"norm_scale_cv", &SublayerStats::norm_scale_cv, kParityTolerance},
    {"norm_out_scale_mean", &SublayerStats::norm_out_scale_mean, kParityTolerance},
    {"norm_out_scale_cv", &SublayerStats::norm_out_scale_cv, kParityTolerance},
    {"dependency", &SublayerStats::dependency, kRatioParityTolerance},
    {"contribution", &SublayerStats::contribution, kRatioParityTolerance},
    {"norm_stat_gap", &SublayerStats::norm_stat_gap, kRatioParityTolerance}};

// The pass's values of the output logits, set by every pass.
struct PassScalar {
    const char* name;
    double ForwardStats::*member;
};
inline constexpr PassScalar kPassScalars[] = {{"z_loss", &ForwardStats::z_loss},
                                              {"log_z_mean", &ForwardStats::log_z_mean},
                                              {"log_z_max_abs", &ForwardStats::log_z_max_abs},
                                              {"logit_mean", &ForwardStats::logit_mean},
                                              {"logit_max", &ForwardStats::logit_max}};

// Blocks of a stack in `model`: the decoder's layers, the cross-attention's (layers, with an encoder),
// the encoder's.
int stack_blocks(const ModelConfig& model, StackMask stack);

}  // namespace forward_fields

}  // namespace normlab
