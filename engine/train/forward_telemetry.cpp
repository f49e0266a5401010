// Per-block telemetry from one forward pass (see forward_telemetry.h): the one place that maps
// ForwardStats' lists onto LayerTelemetry's fields.
#include "engine/train/forward_telemetry.h"

namespace normlab {

namespace {
// What the per-slot lists hold for a block's attention and FFN sub-layers (slots `attention` and
// `feed_forward`): their norms' scales and their dependency ratios.
void copy_sublayers(const ForwardStats& forward, int attention, int feed_forward, LayerTelemetry& layer) {
    if (!forward.norm_scale_mean.empty()) {  // measured on this pass
        layer.norm1_scale_mean = forward.norm_scale_mean[attention];
        layer.norm1_scale_cv = forward.norm_scale_cv[attention];
        layer.norm2_scale_mean = forward.norm_scale_mean[feed_forward];
        layer.norm2_scale_cv = forward.norm_scale_cv[feed_forward];
        layer.norm1_out_scale_mean = forward.norm_out_scale_mean[attention];
        layer.norm1_out_scale_cv = forward.norm_out_scale_cv[attention];
        layer.norm2_out_scale_mean = forward.norm_out_scale_mean[feed_forward];
        layer.norm2_out_scale_cv = forward.norm_out_scale_cv[feed_forward];
    }
    if (!forward.dependency.empty()) {
        layer.dependency_attn = forward.dependency[attention];
        layer.dependency_ffn = forward.dependency[feed_forward];
    }
}

void copy_encoder_block(const ForwardStats& forward, const SublayerSlots& slots, size_t e,
                        LayerTelemetry& layer) {
    const int block = static_cast<int>(e);
    layer.resid = forward.encoder_resid[e];
    layer.resid_attn = forward.encoder_resid_attn[e];
    if (!forward.encoder_attn_entropy.empty()) {
        layer.attn_entropy = forward.encoder_attn_entropy[e];
        layer.attn_max_logit = forward.encoder_attn_max_logit[e];
    }
    copy_sublayers(forward, slots.of_encoder(kAttentionSublayer, block),
                   slots.of_encoder(kFeedForwardSublayer, block), layer);
}

void copy_cross_attention(const ForwardStats& forward, const SublayerSlots& slots, size_t b,
                          LayerTelemetry& layer) {
    layer.has_cross = true;
    layer.resid_cross = forward.resid_cross[b];
    if (!forward.cross_attn_entropy.empty()) {
        layer.cross_attn_entropy = forward.cross_attn_entropy[b];
        layer.cross_attn_max_logit = forward.cross_attn_max_logit[b];
    }
    const size_t slot = static_cast<size_t>(slots.of(kCrossAttentionSublayer, static_cast<int>(b)));
    if (!forward.norm_scale_mean.empty()) {  // measured on this pass
        layer.norm_cross_scale_mean = forward.norm_scale_mean[slot];
        layer.norm_cross_scale_cv = forward.norm_scale_cv[slot];
        layer.norm_cross_out_scale_mean = forward.norm_out_scale_mean[slot];
        layer.norm_cross_out_scale_cv = forward.norm_out_scale_cv[slot];
    }
    if (!forward.dependency.empty()) layer.dependency_cross = forward.dependency[slot];
}
}  // namespace

void copy_forward_stats(const ForwardStats& forward, const SublayerSlots& slots, int block, bool encoder,
                        LayerTelemetry& layer) {
    const size_t b = static_cast<size_t>(block);
    if (encoder) {
        copy_encoder_block(forward, slots, b, layer);
        return;
    }
    layer.resid = forward.resid[b];
    layer.resid_attn = forward.resid_attn[b];
    if (!forward.attn_entropy.empty()) {
        layer.attn_entropy = forward.attn_entropy[b];
        layer.attn_max_logit = forward.attn_max_logit[b];
        layer.q_rms = forward.q_rms[b];
        layer.k_rms = forward.k_rms[b];
    }
    copy_sublayers(forward, slots.of(kAttentionSublayer, block), slots.of(kFeedForwardSublayer, block),
                   layer);
    if (!forward.resid_cross.empty()) copy_cross_attention(forward, slots, b, layer);
}

}  // namespace normlab
