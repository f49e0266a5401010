// Per-block telemetry from one forward pass (see forward_telemetry.h): the one place that maps
// ForwardStats' lists onto LayerTelemetry's fields.
#include "engine/train/forward_telemetry.h"

namespace normlab {

namespace {
// What the per-slot lists hold for a block's attention and FFN sub-layers (slots `attention` and
// `feed_forward`): their norms' scales and their dependency ratios.
void copy_sublayers(const SublayerStats& sublayers, int attention, int feed_forward, LayerTelemetry& layer) {
    if (!sublayers.norm_scale_mean.empty()) {  // measured on this pass
        layer.norm1_scale_mean = sublayers.norm_scale_mean[attention];
        layer.norm1_scale_cv = sublayers.norm_scale_cv[attention];
        layer.norm2_scale_mean = sublayers.norm_scale_mean[feed_forward];
        layer.norm2_scale_cv = sublayers.norm_scale_cv[feed_forward];
        layer.norm1_out_scale_mean = sublayers.norm_out_scale_mean[attention];
        layer.norm1_out_scale_cv = sublayers.norm_out_scale_cv[attention];
        layer.norm2_out_scale_mean = sublayers.norm_out_scale_mean[feed_forward];
        layer.norm2_out_scale_cv = sublayers.norm_out_scale_cv[feed_forward];
    }
    if (!sublayers.norm_stat_gap.empty()) {  // measured on this pass
        layer.norm1_stat_gap = sublayers.norm_stat_gap[attention];
        layer.norm2_stat_gap = sublayers.norm_stat_gap[feed_forward];
    }
    if (!sublayers.dependency.empty()) {
        layer.dependency_attn = sublayers.dependency[attention];
        layer.dependency_ffn = sublayers.dependency[feed_forward];
        layer.contribution_attn = sublayers.contribution[attention];
        layer.contribution_ffn = sublayers.contribution[feed_forward];
    }
}

// A block's self-attention and FFN lists, the same for the decoder's and the encoder's stacks.
void copy_block(const StackStats& stack, size_t b, LayerTelemetry& layer) {
    layer.resid = stack.resid[b];
    layer.resid_attn = stack.resid_attn[b];
    if (!stack.attn_entropy.empty()) {  // measured on this pass
        layer.attn_entropy = stack.attn_entropy[b];
        layer.attn_max_logit = stack.attn_max_logit[b];
    }
    if (!stack.q_rms.empty()) {  // the decoder's, measured on this pass
        layer.q_rms = stack.q_rms[b];
        layer.k_rms = stack.k_rms[b];
    }
    if (!stack.act_overflow.empty()) {  // emulated precision, measured on this pass
        layer.act_overflow = stack.act_overflow[b];
        layer.act_underflow = stack.act_underflow[b];
        layer.grad_overflow = stack.grad_overflow[b];
        layer.grad_underflow = stack.grad_underflow[b];
        layer.stream_headroom = stack.stream_headroom[b];
    }
}

void copy_cross_attention(const ForwardStats& forward, const SublayerSlots& slots, size_t b,
                          LayerTelemetry& layer) {
    const StackStats& cross = forward.cross;
    const SublayerStats& sublayers = forward.sublayers;
    layer.has_cross = true;
    layer.resid_cross = cross.resid_attn[b];
    if (!cross.attn_entropy.empty()) {
        layer.cross_attn_entropy = cross.attn_entropy[b];
        layer.cross_attn_max_logit = cross.attn_max_logit[b];
    }
    const size_t slot = static_cast<size_t>(slots.of(kCrossAttentionSublayer, static_cast<int>(b)));
    if (!sublayers.norm_scale_mean.empty()) {  // measured on this pass
        layer.norm_cross_scale_mean = sublayers.norm_scale_mean[slot];
        layer.norm_cross_scale_cv = sublayers.norm_scale_cv[slot];
        layer.norm_cross_out_scale_mean = sublayers.norm_out_scale_mean[slot];
        layer.norm_cross_out_scale_cv = sublayers.norm_out_scale_cv[slot];
    }
    if (!sublayers.norm_stat_gap.empty()) layer.norm_cross_stat_gap = sublayers.norm_stat_gap[slot];
    if (!sublayers.dependency.empty()) {
        layer.dependency_cross = sublayers.dependency[slot];
        layer.contribution_cross = sublayers.contribution[slot];
    }
}
}  // namespace

void copy_forward_stats(const ForwardStats& forward, const SublayerSlots& slots, int block, bool encoder,
                        LayerTelemetry& layer) {
    const size_t b = static_cast<size_t>(block);
    copy_block(encoder ? forward.encoder : forward.decoder, b, layer);
    if (encoder) {
        copy_sublayers(forward.sublayers, slots.of_encoder(kAttentionSublayer, block),
                       slots.of_encoder(kFeedForwardSublayer, block), layer);
        return;
    }
    copy_sublayers(forward.sublayers, slots.of(kAttentionSublayer, block),
                   slots.of(kFeedForwardSublayer, block), layer);
    if (!forward.cross.resid_attn.empty()) copy_cross_attention(forward, slots, b, layer);
}

}  // namespace normlab
