// The metrics.jsonl contract's per-block fields, each with its JSON name and the LayerTelemetry member
// it holds: the one table that writing (records_json), reading (metrics_line_parser) and flat tables
// (block_field_names) walk, so a new telemetry field is added in one place.
#pragma once

#include <span>

#include "engine/train/telemetry.h"

namespace normlab::record_fields {

// A value its writer did not record (engine/core/not_recorded.h): the writers leave it out of the line and
// the exports write an empty cell, where a measured value that is not finite is written null / "nan".
using normlab::kNotRecorded;
using normlab::recorded;

// The per-block fields, each with its JSON name: one table for writing and reading. `cross` fields
// belong to the cross-attention sub-layer of an encoder-decoder's decoder block (written only there).
// A field a writer left out of its line reads as kNotRecorded (below).
struct LayerField {
    const char* name;
    double LayerTelemetry::*member;
    bool cross;
};
struct GradField {
    const char* name;
    double GradientNorms::*member;
    bool cross;
};
// One value per sub-layer (attention, FFN, cross-attention), written in a sub-object of the block.
struct SublayerField {
    const char* name;
    double LayerTelemetry::*member;
    bool cross;
};
inline constexpr LayerField kLayerFields[] = {
    {"resid", &LayerTelemetry::resid, false},
    {"resid_attn", &LayerTelemetry::resid_attn, false},
    {"update_ratio", &LayerTelemetry::update_ratio, false},
    {"update_rms", &LayerTelemetry::update_rms, false},
    {"adam_grad_rms", &LayerTelemetry::adam_grad_rms, false},
    {"adam_eps_fraction", &LayerTelemetry::adam_eps_fraction, false},
    {"attn_entropy", &LayerTelemetry::attn_entropy, false},
    {"attn_max_logit", &LayerTelemetry::attn_max_logit, false},
    {"q_rms", &LayerTelemetry::q_rms, false},
    {"k_rms", &LayerTelemetry::k_rms, false},
    {"act_overflow", &LayerTelemetry::act_overflow, false},
    {"act_underflow", &LayerTelemetry::act_underflow, false},
    {"grad_overflow", &LayerTelemetry::grad_overflow, false},
    {"grad_underflow", &LayerTelemetry::grad_underflow, false},
    {"stream_headroom", &LayerTelemetry::stream_headroom, false},
    {"norm1_scale_mean", &LayerTelemetry::norm1_scale_mean, false},
    {"norm1_scale_cv", &LayerTelemetry::norm1_scale_cv, false},
    {"norm2_scale_mean", &LayerTelemetry::norm2_scale_mean, false},
    {"norm2_scale_cv", &LayerTelemetry::norm2_scale_cv, false},
    {"norm1_out_scale_mean", &LayerTelemetry::norm1_out_scale_mean, false},
    {"norm1_out_scale_cv", &LayerTelemetry::norm1_out_scale_cv, false},
    {"norm2_out_scale_mean", &LayerTelemetry::norm2_out_scale_mean, false},
    {"norm2_out_scale_cv", &LayerTelemetry::norm2_out_scale_cv, false},
    {"norm1_stat_gap", &LayerTelemetry::norm1_stat_gap, false},
    {"norm2_stat_gap", &LayerTelemetry::norm2_stat_gap, false},
    {"resid_cross", &LayerTelemetry::resid_cross, true},
    {"cross_attn_entropy", &LayerTelemetry::cross_attn_entropy, true},
    {"cross_attn_max_logit", &LayerTelemetry::cross_attn_max_logit, true},
    {"norm_cross_scale_mean", &LayerTelemetry::norm_cross_scale_mean, true},
    {"norm_cross_scale_cv", &LayerTelemetry::norm_cross_scale_cv, true},
    {"norm_cross_out_scale_mean", &LayerTelemetry::norm_cross_out_scale_mean, true},
    {"norm_cross_out_scale_cv", &LayerTelemetry::norm_cross_out_scale_cv, true},
    {"norm_cross_stat_gap", &LayerTelemetry::norm_cross_stat_gap, true}};
inline constexpr GradField kGradFields[] = {{"w_qkv", &GradientNorms::w_qkv, false},
                                            {"w_o", &GradientNorms::w_o, false},
                                            {"w_1", &GradientNorms::w_1, false},
                                            {"w_2", &GradientNorms::w_2, false},
                                            {"norm1", &GradientNorms::norm1, false},
                                            {"norm2", &GradientNorms::norm2, false},
                                            {"norm1_out", &GradientNorms::norm1_out, false},
                                            {"norm2_out", &GradientNorms::norm2_out, false},
                                            {"w_cross_q", &GradientNorms::w_cross_q, true},
                                            {"w_cross_kv", &GradientNorms::w_cross_kv, true},
                                            {"w_cross_o", &GradientNorms::w_cross_o, true},
                                            {"norm_cross", &GradientNorms::norm_cross, true},
                                            {"norm_cross_out", &GradientNorms::norm_cross_out, true}};
// The run-level fields of a logged step (StepRecord::telemetry), each written at the top level of its
// line when the step has them.
struct StepField {
    const char* name;
    double StepTelemetry::*member;
};
inline constexpr StepField kStepFields[] = {
    {"z_loss", &StepTelemetry::z_loss},
    {"log_z_mean", &StepTelemetry::log_z_mean},
    {"log_z_max_abs", &StepTelemetry::log_z_max_abs},
    {"logit_mean", &StepTelemetry::logit_mean},
    {"logit_max", &StepTelemetry::logit_max},
    {"grad_embedding", &StepTelemetry::grad_embedding},
    {"grad_head", &StepTelemetry::grad_head},
    {"final_norm_scale_mean", &StepTelemetry::final_norm_scale_mean},
    {"final_norm_scale_cv", &StepTelemetry::final_norm_scale_cv},
    {"encoder_final_norm_scale_mean", &StepTelemetry::encoder_final_norm_scale_mean},
    {"encoder_final_norm_scale_cv", &StepTelemetry::encoder_final_norm_scale_cv},
    {"loss_scale", &StepTelemetry::loss_scale},
    {"skipped_steps", &StepTelemetry::skipped_steps}};
inline constexpr SublayerField kDependencyFields[] = {{"attn", &LayerTelemetry::dependency_attn, false},
                                                      {"ffn", &LayerTelemetry::dependency_ffn, false},
                                                      {"cross", &LayerTelemetry::dependency_cross, true}};
inline constexpr SublayerField kContributionFields[] = {{"attn", &LayerTelemetry::contribution_attn, false},
                                                        {"ffn", &LayerTelemetry::contribution_ffn, false},
                                                        {"cross", &LayerTelemetry::contribution_cross, true}};
// The per-sub-layer sub-objects of a block ("dependency": {"attn": ..}), in the order they are written.
struct SublayerGroup {
    const char* name;
    std::span<const SublayerField> fields;
};
inline constexpr SublayerGroup kSublayerGroups[] = {{"dependency", kDependencyFields},
                                                    {"contribution", kContributionFields}};

}  // namespace normlab::record_fields
