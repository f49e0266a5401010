// Per-block telemetry of a logged training step: the forward pass's values (copy_forward_stats), each
// block's gradient norms from the per-entry sums of squares, and the optimizer's view of the block
// (update ratio, update RMS, Adam's second moment and the share of it under eps^2).
#include <algorithm>
#include <cmath>

#include "engine/train/forward_telemetry.h"
#include "engine/train/trainer.h"

namespace normlab {

GradientNorms Trainer::gradient_norms(const BlockIndex& index, bool cross) const {
    auto norm_of = [&](int entry) {
        return entry >= 0 && m_model->active(entry) ? std::sqrt(m_grad_squares[entry]) : kNotRecorded;
    };
    GradientNorms grad{norm_of(index.qkv_weight),       norm_of(index.out_weight),
                       norm_of(index.fc1_weight),       norm_of(index.fc2_weight),
                       norm_of(index.norm1.weight),     norm_of(index.norm2.weight),
                       norm_of(index.norm1_out.weight), norm_of(index.norm2_out.weight)};
    if (cross) {
        grad.w_cross_q = norm_of(index.cross_q_weight);
        grad.w_cross_kv = norm_of(index.cross_kv_weight);
        grad.w_cross_o = norm_of(index.cross_out_weight);
        grad.norm_cross = norm_of(index.norm_cross.weight);
        grad.norm_cross_out = norm_of(index.norm_cross_out.weight);
    }
    return grad;
}

// The optimizer's view of one block of a stack, over its active entries: ||update|| / ||parameters||,
// the update's RMS, sqrt(mean v) and the share of coordinates with sqrt(v) < eps.
void Trainer::fill_optimizer_state(int block, bool encoder, LayerTelemetry& layer) const {
    const ParamLayout& layout = m_model->layout();
    double update_total = 0.0, param_total = 0.0, second_moment_total = 0.0, below_eps = 0.0, count = 0.0;
    for (size_t i = 0; i < layout.entries.size(); ++i) {
        const ParamEntry& entry = layout.entries[i];
        if ((encoder ? entry.encoder_block : entry.block) != block || !m_model->active(static_cast<int>(i)))
            continue;
        update_total += m_update_squares[i];
        param_total += m_param_squares[i];
        second_moment_total += m_second_moment_sums[i];
        below_eps += m_below_eps_counts[i];
        count += static_cast<double>(entry.count);
    }
    layer.update_ratio = param_total > 0.0 ? std::sqrt(update_total / param_total) : 0.0;
    layer.update_rms = count > 0.0 ? std::sqrt(update_total / count) : 0.0;
    // the bridge's meanings (docs/bridge.md): sqrt(mean v), and sqrt(v) as stored below eps; SGD keeps no v
    const bool has_second_moment = m_config.train.optimizer != OptimizerKind::Sgd && count > 0.0;
    layer.adam_grad_rms =
        has_second_moment ? std::sqrt(std::max(0.0, second_moment_total / count)) : kNotRecorded;
    layer.adam_eps_fraction = has_second_moment ? below_eps / count : kNotRecorded;
}

void Trainer::fill_layer_telemetry(const ForwardStats& forward, StepRecord& record) {
    const ParamLayout& layout = m_model->layout();
    const SublayerSlots slots(m_model->config());
    const bool has_encoder = !layout.encoder_blocks.empty();
    // Adam's second moment summed per entry: its mean over a block is the squared gradient it sees
    m_backend->sum_values(m_optimizer->second_moment(), m_entry_slices, m_second_moment_sums.data());
    // sqrt(v) < eps as v < eps^2 (in float, as the update's sqrt(v) + eps is taken)
    const float eps = static_cast<float>(m_config.train.eps);
    m_backend->count_below(m_optimizer->second_moment(), m_entry_slices, eps * eps,
                           m_below_eps_counts.data());
    auto fill = [&](LayerTelemetry& layer, const BlockIndex& index, size_t block, bool encoder) {
        copy_forward_stats(forward, slots, static_cast<int>(block), encoder, layer);
        layer.grad = gradient_norms(index, has_encoder && !encoder);
        fill_optimizer_state(static_cast<int>(block), encoder, layer);
    };
    record.layers.resize(layout.blocks.size());
    const std::vector<double>& head_max_logit = forward.decoder.attn_head_max_logit;
    record.attn_head_max_logit.assign(head_max_logit.begin(), head_max_logit.end());
    for (size_t b = 0; b < layout.blocks.size(); ++b) fill(record.layers[b], layout.blocks[b], b, false);
    record.encoder_layers.resize(layout.encoder_blocks.size());
    for (size_t e = 0; e < layout.encoder_blocks.size(); ++e)
        fill(record.encoder_layers[e], layout.encoder_blocks[e], e, true);
}

}  // namespace normlab
