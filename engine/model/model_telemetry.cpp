// Telemetry from the forward pass into ForwardStats: residual sums' E||s||^2/d and finiteness,
// attention entropy and largest logits, the queries' and keys' RMS, Admin's dependency ratios and the
// branches' contribution shares. The norms' per-token scales are measured in norm_scales.cpp.
#include <algorithm>
#include <cmath>

#include "engine/model/model.h"

namespace normlab {

void Model::reserve_stats() {
    const size_t slots = static_cast<size_t>(SublayerSlots(m_config).count());
    m_stats.reserve(m_config);
    m_telemetry.branch_slices.reserve(slots);
    m_telemetry.input_slices.reserve(slots);
    m_telemetry.slice_squares.resize(3 * slots);
    m_telemetry.slice_sums.resize(3 * slots);
    m_telemetry.attention_host.resize(attention_stat_total());
}

StackStats& Model::stack_stats(const SublayerStep& step) {
    if (step.encoder) return m_stats.encoder;
    return step.kind == kCrossAttentionSublayer ? m_stats.cross : m_stats.decoder;
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
    stats.clear_telemetry();
    if (attention_stats) {
        collect_attention_stats(m_batch, m_seq);
        measure_qk_rms(n);
        measure_norm_scales(n);
        measure_feature_norm_gaps();
        measure_branch_shares(nd);
    }
    return stats;
}

// Every residual sum's E||s||^2/d into its stack's list (the FFN's into resid, the attention's and the
// cross-attention's into resid_attn), and the first block whose sum is not finite.
void Model::collect_residual_stats(size_t nd) {
    ForwardStats& stats = m_stats;
    const std::vector<double>& sums = m_telemetry.slice_squares;  // one per residual sum, by slot
    // Sums too, in the same pass: the dependency ratio's variances need them on telemetry steps. A
    // backend that fuses them into residual_forward has taken them already (forward_sublayer).
    if (!fused_residual_sums()) {
        m_backend->sum_values_and_squares(m_activations, m_resid_slices, m_telemetry.slice_sums.data(),
                                          m_telemetry.slice_squares.data());
    }
    const double count = static_cast<double>(nd);
    stats.first_nonfinite_block = -1;
    // m_plan: the encoder's blocks (any non-finite sum shows as block 0), then the decoder's in order
    for (const SublayerStep& step : m_plan) {
        const double sum = sums[step.slot];
        StackStats& stack = stack_stats(step);
        (step.kind == kFeedForwardSublayer ? stack.resid : stack.resid_attn)[step.block] = sum / count;
        if (stats.first_nonfinite_block < 0 && !std::isfinite(sum))
            stats.first_nonfinite_block = step.encoder ? 0 : step.block;
    }
    if (stats.first_nonfinite_block < 0 && !std::isfinite(stats.loss))
        stats.first_nonfinite_block = m_config.layers;
}

void Model::collect_attention_stats(int batch, int seq) {
    std::vector<float>& host = m_telemetry.attention_host;
    m_backend->download(host.data(), m_attention_stats, host.size());
    const double rows = static_cast<double>(batch) * m_config.heads * seq;
    for (const SublayerStep& step : m_plan) {
        if (step.attention_slot < 0) continue;
        const float* slot = host.data() + attention_stat_floats() * step.attention_slot;
        const float* head_max = slot + 1;  // the op's largest logit of each head
        StackStats& stack = stack_stats(step);
        stack.attn_entropy.push_back(slot[0] / rows);
        stack.attn_max_logit.push_back(*std::max_element(head_max, head_max + m_config.heads));
        if (&stack == &m_stats.decoder)  // kBlockLists: per-head logits of the decoder's attention only
            stack.attn_head_max_logit.insert(stack.attn_head_max_logit.end(), head_max,
                                             head_max + m_config.heads);
    }
}

// Per block of the decoder and of the encoder, its sub-layers' tallies together (a decoder block's
// cross-attention included): the shares of the activations and gradients rounded that overflowed and
// underflowed, and log2(format max / the largest |x| of its residual sums).
void Model::collect_precision_stats() {
    const std::vector<MatmulPrecision::SiteTally> sites = m_matmuls.read_tallies();
    const double max_finite = number_format_spec(m_matmuls.format()).max_finite;
    auto share = [](double part, double whole) { return whole > 0.0 ? part / whole : 0.0; };
    for (StackStats* stack : {&m_stats.encoder, &m_stats.decoder}) {
        const bool encoder = stack == &m_stats.encoder;
        const int blocks = encoder ? m_config.encoder_layers : m_config.layers;
        for (int block = 0; block < blocks; ++block) {
            MatmulPrecision::SiteTally sum;
            for (const SublayerStep& step : m_plan) {
                if (step.encoder != encoder || step.block != block) continue;
                const MatmulPrecision::SiteTally& site = sites[static_cast<size_t>(step.slot)];
                sum.activations += site.activations;
                sum.activation_overflows += site.activation_overflows;
                sum.activation_underflows += site.activation_underflows;
                sum.gradients += site.gradients;
                sum.gradient_overflows += site.gradient_overflows;
                sum.gradient_underflows += site.gradient_underflows;
                sum.stream_max_abs = std::max(sum.stream_max_abs, site.stream_max_abs);
            }
            stack->act_overflow.push_back(share(sum.activation_overflows, sum.activations));
            stack->act_underflow.push_back(share(sum.activation_underflows, sum.activations));
            stack->grad_overflow.push_back(share(sum.gradient_overflows, sum.gradients));
            stack->grad_underflow.push_back(share(sum.gradient_underflows, sum.gradients));
            stack->stream_headroom.push_back(std::log2(max_finite / sum.stream_max_abs));
        }
    }
}

// Fills m_stats.sublayers' dependency (a^2 Var[branch] / Var[residual sum]) and contribution
// (sqrt(a^2 E||branch||^2 / E||input||^2)), per sub-layer by slot.
void Model::measure_branch_shares(size_t count) {
    const size_t sublayers = m_sublayers.size();
    const std::vector<double>& squares = m_telemetry.slice_squares;
    const std::vector<double>& sums = m_telemetry.slice_sums;
    std::vector<Slice>& branch_slices = m_telemetry.branch_slices;
    std::vector<Slice>& input_slices = m_telemetry.input_slices;
    // The residual sums' sums and squares are already in [0, sublayers) (the forward's telemetry), and
    // the branches' too in [sublayers, 2 sublayers) when the backend fuses them.
    if (!fused_residual_sums()) {
        branch_slices.assign(sublayers, Slice{});
        for (const SublayerStep& step : m_plan) {
            branch_slices[step.slot] = {static_cast<size_t>(added_branch(step) - m_activations), count};
        }
        m_backend->sum_values_and_squares(m_activations, branch_slices,
                                          m_telemetry.slice_sums.data() + sublayers,
                                          m_telemetry.slice_squares.data() + sublayers);
    }
    // the sub-layers' inputs (embeddings, memory and sums all live in the activation buffer) into
    // [2 sublayers, 3 sublayers)
    input_slices.assign(sublayers, Slice{});
    for (const SublayerStep& step : m_plan)
        input_slices[step.slot] = {static_cast<size_t>(m_sublayers[step.slot].input - m_activations), count};
    m_backend->sum_values_and_squares(m_activations, input_slices,
                                      m_telemetry.slice_sums.data() + 2 * sublayers,
                                      m_telemetry.slice_squares.data() + 2 * sublayers);
    auto variance = [&](size_t i) {
        const double mean = sums[i] / static_cast<double>(count);
        return squares[i] / static_cast<double>(count) - mean * mean;
    };
    std::vector<double>& dependency = m_stats.sublayers.dependency;
    std::vector<double>& contribution = m_stats.sublayers.contribution;
    dependency.assign(sublayers, 0.0);
    contribution.assign(sublayers, 0.0);
    for (const SublayerStep& step : m_plan) {
        const size_t i = static_cast<size_t>(step.slot);
        const ScaleRef a = branch_scale(step);
        float value = a.constant;
        if (a.param) m_backend->download(&value, a.param, 1);
        const double scale = static_cast<double>(value) * value;
        const double total = variance(i);
        dependency[i] = total > 0.0 ? scale * variance(sublayers + i) / total : 0.0;
        const double input = squares[2 * sublayers + i];
        contribution[i] = input > 0.0 ? std::sqrt(scale * squares[sublayers + i] / input) : std::nan("");
    }
}

void Model::measure_qk_rms(int n) {
    const int d = m_config.d_model;
    const size_t nd = static_cast<size_t>(n) * d;
    const bool planar = m_config.qk_norm != QkNorm::None;
    // per decoder block: its queries' slices, then its keys' (one each when planar, else one per row);
    // the keys are kv_width wide (fewer with grouped-query attention)
    const size_t per_part = planar ? 1 : static_cast<size_t>(n);
    const size_t widths[2] = {static_cast<size_t>(d), static_cast<size_t>(kv_width(false))};
    const size_t row_floats = widths[0] + 2 * widths[1];
    const SublayerSlots slots(m_config);
    std::vector<Slice>& qk_slices = m_telemetry.qk_slices;
    qk_slices.clear();
    for (int block = 0; block < m_config.layers; ++block) {
        const size_t qkv =
            static_cast<size_t>(m_sublayers[slots.of(kAttentionSublayer, block)].qkv - m_activations);
        for (int part = 0; part < 2; ++part) {
            if (planar) {
                qk_slices.push_back({qkv + part * nd, static_cast<size_t>(n) * widths[part]});
                continue;
            }
            for (int row = 0; row < n; ++row)
                qk_slices.push_back(
                    {qkv + static_cast<size_t>(row) * row_floats + part * widths[0], widths[part]});
        }
    }
    std::vector<double>& squares = m_telemetry.qk_squares;
    squares.resize(qk_slices.size());
    m_backend->sum_squares(m_activations, qk_slices, squares.data());
    StackStats& decoder = m_stats.decoder;  // q_rms and k_rms emptied by clear_telemetry
    for (int block = 0; block < m_config.layers; ++block) {
        for (int part = 0; part < 2; ++part) {
            const size_t first = (2 * static_cast<size_t>(block) + part) * per_part;
            double total = 0.0;
            for (size_t i = first; i < first + per_part; ++i) total += squares[i];
            const double count = static_cast<double>(n) * static_cast<double>(widths[part]);
            (part == 0 ? decoder.q_rms : decoder.k_rms).push_back(std::sqrt(total / count));
        }
    }
}

}  // namespace normlab
