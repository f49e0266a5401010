// Telemetry from the forward pass into ForwardStats: residual sums' E||s||^2/d and finiteness,
// attention entropy and largest logits, the queries' and keys' RMS and Admin's dependency ratios. The
// norms' per-token scales are measured in norm_scales.cpp.
#include <algorithm>
#include <cmath>

#include "engine/model/model.h"

namespace normlab {

void Model::reserve_stats() {
    ForwardStats& stats = m_stats;
    const size_t layers = static_cast<size_t>(m_config.layers);
    const size_t slots = static_cast<size_t>(SublayerSlots(m_config).count());
    // the residual sums' lists are overwritten in place every pass; the others refilled on telemetry steps
    for (std::vector<double>* list : {&stats.resid, &stats.resid_attn}) list->resize(layers);
    for (std::vector<double>* list : {&stats.attn_entropy, &stats.attn_max_logit, &stats.q_rms, &stats.k_rms})
        list->reserve(layers);
    stats.attn_head_max_logit.reserve(layers * static_cast<size_t>(m_config.heads));
    stats.dependency.reserve(slots);
    if (m_config.encoder_layers > 0) {
        const size_t encoder = static_cast<size_t>(m_config.encoder_layers);
        stats.resid_cross.resize(layers);
        for (std::vector<double>* list : {&stats.encoder_resid, &stats.encoder_resid_attn})
            list->resize(encoder);
        for (std::vector<double>* list : {&stats.cross_attn_entropy, &stats.cross_attn_max_logit})
            list->reserve(layers);
        for (std::vector<double>* list : {&stats.encoder_attn_entropy, &stats.encoder_attn_max_logit})
            list->reserve(encoder);
    }
    m_telemetry.branch_slices.reserve(slots);
    m_telemetry.slice_squares.resize(2 * slots);
    m_telemetry.slice_sums.resize(2 * slots);
    m_telemetry.attention_host.resize(attention_stat_total());
}

const ForwardStats& Model::collect_stats(const Backend::CrossEntropyResult& loss, bool attention_stats) {
    const int n = m_batch * m_seq;
    const size_t nd = static_cast<size_t>(n) * m_config.d_model;
    ForwardStats& stats = m_stats;
    stats.scored = loss.scored;
    stats.correct = loss.correct;
    const double scored = loss.scored > 0 ? static_cast<double>(loss.scored) : 1.0;
    stats.loss = loss.loss_sum / scored;
    stats.z_loss = loss.z_loss_sum / scored;
    stats.log_z_mean = loss.log_z_sum / scored;
    stats.log_z_max_abs = loss.log_z_max_abs;
    stats.logit_mean = loss.logit_sum / (scored * m_vocab);
    stats.logit_max = loss.logit_max;
    collect_residual_stats(nd);
    // the lists only telemetry steps fill
    for (std::vector<double>* list :
         {&stats.attn_entropy, &stats.attn_max_logit, &stats.attn_head_max_logit, &stats.q_rms, &stats.k_rms,
          &stats.norm_scale_mean, &stats.norm_scale_cv, &stats.norm_out_scale_mean, &stats.norm_out_scale_cv,
          &stats.cross_attn_entropy, &stats.cross_attn_max_logit, &stats.encoder_attn_entropy,
          &stats.encoder_attn_max_logit, &stats.dependency})
        list->clear();
    stats.final_norm_scale_mean = stats.final_norm_scale_cv = 0.0;
    stats.encoder_final_norm_scale_mean = stats.encoder_final_norm_scale_cv = 0.0;
    if (attention_stats) {
        collect_attention_stats(m_batch, m_seq);
        measure_qk_rms(n);
        measure_norm_scales(n);
        measure_dependency(nd);
    }
    return stats;
}

void Model::collect_residual_stats(size_t nd) {
    ForwardStats& stats = m_stats;
    const std::vector<double>& sums = m_telemetry.slice_squares;  // one per residual sum, by slot
    // Sums too, in the same pass: the dependency ratio's variances need them on telemetry steps. A
    // backend that fuses them into residual_forward has taken them already (forward_sublayer).
    if (!m_backend->fuses_residual_sums()) {
        m_backend->sum_values_and_squares(m_activations, m_resid_slices, m_telemetry.slice_sums.data(),
                                          m_telemetry.slice_squares.data());
    }
    const int layers = m_config.layers;
    const SublayerSlots slots(m_config);
    const double count = static_cast<double>(nd);
    stats.first_nonfinite_block = -1;
    bool encoder_finite = true;
    for (int block = 0; block < m_config.encoder_layers; ++block) {
        const double attention = sums[slots.of_encoder(kAttentionSublayer, block)];
        const double feed_forward = sums[slots.of_encoder(kFeedForwardSublayer, block)];
        stats.encoder_resid_attn[block] = attention / count;
        stats.encoder_resid[block] = feed_forward / count;
        encoder_finite = encoder_finite && std::isfinite(attention) && std::isfinite(feed_forward);
    }
    if (!encoder_finite) stats.first_nonfinite_block = 0;
    for (int block = 0; block < layers; ++block) {
        const double attention = sums[slots.of(kAttentionSublayer, block)];
        const double feed_forward = sums[slots.of(kFeedForwardSublayer, block)];
        stats.resid_attn[block] = attention / count;
        stats.resid[block] = feed_forward / count;
        bool finite = std::isfinite(attention) && std::isfinite(feed_forward);
        if (m_config.encoder_layers > 0) {
            const double cross = sums[slots.of(kCrossAttentionSublayer, block)];
            stats.resid_cross[block] = cross / count;
            finite = finite && std::isfinite(cross);
        }
        if (stats.first_nonfinite_block < 0 && !finite) stats.first_nonfinite_block = block;
    }
    if (stats.first_nonfinite_block < 0 && !std::isfinite(stats.loss)) stats.first_nonfinite_block = layers;
}

void Model::collect_attention_stats(int batch, int seq) {
    ForwardStats& stats = m_stats;
    m_backend->download(m_telemetry.attention_host.data(), m_attention_stats,
                        m_telemetry.attention_host.size());
    const double rows = static_cast<double>(batch) * m_config.heads * seq;
    for (const SublayerStep& step : m_plan) {
        if (step.attention_slot < 0) continue;
        const float* slot = m_telemetry.attention_host.data() + attention_stat_floats() * step.attention_slot;
        const double entropy = slot[0] / rows;
        const float* head_max = slot + 1;  // the op's largest logit of each head
        const double max_logit = *std::max_element(head_max, head_max + m_config.heads);
        if (!step.encoder && step.kind == kAttentionSublayer)
            stats.attn_head_max_logit.insert(stats.attn_head_max_logit.end(), head_max,
                                             head_max + m_config.heads);
        if (step.encoder) {
            stats.encoder_attn_entropy.push_back(entropy);
            stats.encoder_attn_max_logit.push_back(max_logit);
        } else if (step.kind == kCrossAttentionSublayer) {
            stats.cross_attn_entropy.push_back(entropy);
            stats.cross_attn_max_logit.push_back(max_logit);
        } else {
            stats.attn_entropy.push_back(entropy);
            stats.attn_max_logit.push_back(max_logit);
        }
    }
}

// Fills m_stats.dependency: per sub-layer (by slot), a^2 Var[branch] / Var[residual sum].
void Model::measure_dependency(size_t count) {
    const size_t sublayers = m_sublayers.size();
    const std::vector<double>& squares = m_telemetry.slice_squares;
    const std::vector<double>& sums = m_telemetry.slice_sums;
    // The residual sums' sums and squares are already in [0, sublayers) (the forward's telemetry), and
    // the branches' too in [sublayers, 2 sublayers) when the backend fuses them.
    if (!m_backend->fuses_residual_sums()) {
        m_telemetry.branch_slices.assign(sublayers, Slice{});
        for (const SublayerStep& step : m_plan) {
            m_telemetry.branch_slices[step.slot] = {static_cast<size_t>(added_branch(step) - m_activations),
                                                    count};
        }
        m_backend->sum_values_and_squares(m_activations, m_telemetry.branch_slices,
                                          m_telemetry.slice_sums.data() + sublayers,
                                          m_telemetry.slice_squares.data() + sublayers);
    }
    auto variance = [&](size_t i) {
        const double mean = sums[i] / static_cast<double>(count);
        return squares[i] / static_cast<double>(count) - mean * mean;
    };
    m_stats.dependency.assign(sublayers, 0.0);
    for (const SublayerStep& step : m_plan) {
        const size_t i = static_cast<size_t>(step.slot);
        const ScaleRef a = branch_scale(step);
        float value = a.constant;
        if (a.param) m_backend->download(&value, a.param, 1);
        const double scale = static_cast<double>(value) * value;
        const double total = variance(i);
        m_stats.dependency[i] = total > 0.0 ? scale * variance(sublayers + i) / total : 0.0;
    }
}

void Model::measure_qk_rms(int n) {
    const int d = m_config.d_model;
    const size_t nd = static_cast<size_t>(n) * d;
    const bool planar = m_config.qk_norm != QkNorm::None;
    // per decoder block: its queries' slices, then its keys' (one each when planar, else one per row)
    const size_t per_part = planar ? 1 : static_cast<size_t>(n);
    const SublayerSlots slots(m_config);
    m_telemetry.qk_slices.clear();
    for (int block = 0; block < m_config.layers; ++block) {
        const size_t qkv =
            static_cast<size_t>(m_sublayers[slots.of(kAttentionSublayer, block)].qkv - m_activations);
        for (int part = 0; part < 2; ++part) {
            if (planar) {
                m_telemetry.qk_slices.push_back({qkv + part * nd, nd});
                continue;
            }
            for (int row = 0; row < n; ++row)
                m_telemetry.qk_slices.push_back(
                    {qkv + static_cast<size_t>(row) * 3 * d + static_cast<size_t>(part) * d,
                     static_cast<size_t>(d)});
        }
    }
    m_telemetry.qk_squares.resize(m_telemetry.qk_slices.size());
    m_backend->sum_squares(m_activations, m_telemetry.qk_slices, m_telemetry.qk_squares.data());
    m_stats.q_rms.clear();
    m_stats.k_rms.clear();
    for (int block = 0; block < m_config.layers; ++block) {
        for (int part = 0; part < 2; ++part) {
            const size_t first = (2 * static_cast<size_t>(block) + part) * per_part;
            double total = 0.0;
            for (size_t i = first; i < first + per_part; ++i) total += m_telemetry.qk_squares[i];
            (part == 0 ? m_stats.q_rms : m_stats.k_rms).push_back(std::sqrt(total / static_cast<double>(nd)));
        }
    }
}

}  // namespace normlab
