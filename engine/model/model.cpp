// Model construction, the sub-layer plan, and the forward and backward passes, laid out per sub-layer:
//   u = g Norm_in(x) (pre, peri);  f = F(u);  f = Norm_out(f) (peri);  s = c x + a f;  y = Norm(s) (post)
// with g = LayerNorm Scaling's 1/sqrt(l), c = DeepNorm alpha or Admin omega and a = the ReZero scalar
// (1 otherwise); with B2T a Post-LN block's last sum also adds the block's input: s = c x + a f + x_0.
// ResiDual keeps beside each stack's Post-LN stream a dual stream, the stack's input plus every a f, and
// the stack's output is its last y + FinalNorm(dual) (Xie et al. 2023). DenseFormer feeds each block a
// learned average of the earlier blocks' outputs (model_dense.cpp). F is causal self-attention, an FFN,
// or (with an encoder) the encoder's bidirectional self-attention and the decoder's cross-attention, whose
// keys and values come from the encoder's memory.
#include "engine/model/model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "engine/core/errors.h"
#include "engine/core/memory_check.h"
#include "engine/model/constants.h"
#include "engine/model/parametrization.h"

namespace normlab {

namespace {
constexpr int kAttention = kAttentionSublayer;
constexpr int kFeedForward = kFeedForwardSublayer;
constexpr int kCrossAttention = kCrossAttentionSublayer;
}  // namespace

Model::Model(const ModelConfig& config, int vocab, Backend& backend)
    : m_config(effective_model_config(config)), m_vocab(vocab), m_backend(&backend), m_matmuls(backend) {
    m_layout = build_layout(m_config, vocab);
    // parameters, gradients, two optimizer moments, updates
    check_memory(m_layout.total * sizeof(float) * 5, "the model's parameters and optimizer state");
    m_params = m_backend->allocate(m_layout.total);
    m_grads = m_backend->allocate(m_layout.total);
    m_attention_stats = m_backend->allocate(attention_stat_total());
    // room for every norm gain's scaled copy (norm-gain warmup), each where entry_ptr finds it
    GainWarmup& warmup = m_gain_warmup;
    warmup.offsets.assign(m_layout.entries.size(), GainWarmup::kNoShadow);
    for (size_t i = 0; i < m_layout.entries.size(); ++i) {
        if (m_layout.entries[i].role != ParamRole::NormWeight) continue;
        warmup.offsets[i] = warmup.total;
        warmup.total += m_layout.entries[i].count;
    }
    warmup.shadow = m_backend->allocate(std::max<size_t>(warmup.total, 1));
    allocate_feature_norms();
    m_frozen_rstd.assign(m_layout.entries.size(), 0.0f);
    refresh_active();
    build_plan();

    reserve_stats();
}

void Model::build_plan() {
    const SublayerSlots slots(m_config);
    m_plan.clear();
    for (int block = 0; block < m_config.encoder_layers; ++block) {
        const NormPlacement placement = block_placement(m_config, block, true);
        m_plan.push_back({block, true, kAttention, slots.of_encoder(kAttentionSublayer, block),
                          slots.attention_of_encoder(block), placement});
        m_plan.push_back(
            {block, true, kFeedForward, slots.of_encoder(kFeedForwardSublayer, block), -1, placement});
    }
    m_encoder_steps = static_cast<int>(m_plan.size());
    for (int block = 0; block < m_config.layers; ++block) {
        const NormPlacement placement = block_placement(m_config, block, false);
        m_plan.push_back({block, false, kAttention, slots.of(kAttentionSublayer, block),
                          slots.attention_of(kAttentionSublayer, block), placement});
        if (m_config.encoder_layers > 0)
            m_plan.push_back({block, false, kCrossAttention, slots.of(kCrossAttentionSublayer, block),
                              slots.attention_of(kCrossAttentionSublayer, block), placement});
        m_plan.push_back({block, false, kFeedForward, slots.of(kFeedForwardSublayer, block), -1, placement});
    }
}

const Model::SublayerStep& Model::plan_step(int slot) const {
    return *std::find_if(m_plan.begin(), m_plan.end(),
                         [slot](const SublayerStep& step) { return step.slot == slot; });
}

const BlockIndex& Model::block_index(const SublayerStep& step) const {
    return step.encoder ? m_layout.encoder_blocks[step.block] : m_layout.blocks[step.block];
}

Model::~Model() {
    m_backend->release(m_params);
    m_backend->release(m_grads);
    m_backend->release(m_attention_stats);
    m_backend->release(m_gain_warmup.shadow);
    m_backend->release(m_feature_norms.buffer);
    m_backend->release(m_activations);
    m_backend->release(m_tokens);
    m_backend->release(m_targets);
}

void Model::refresh_active() {
    m_active.assign(m_layout.entries.size(), false);
    for (size_t i = 0; i < m_layout.entries.size(); ++i)
        m_active[i] = is_active(m_layout.entries[i], m_config);
}

ScaleRef Model::shortcut_scale(const SublayerStep& step) const {
    if (m_config.residual == Residual::DeepNorm) {
        return {static_cast<float>(effective_deepnorm_alpha(m_config, step.encoder)), nullptr};
    }
    if (m_config.residual == Residual::Admin) {
        const BlockIndex& index = block_index(step);
        if (step.kind == kCrossAttention) return {1.0f, entry_ptr(index.cross_admin_omega)};
        return {1.0f, entry_ptr(index.admin_omega) + step.kind};
    }
    return {1.0f, nullptr};
}

ScaleRef Model::branch_scale(const SublayerStep& step) const {
    if (m_config.residual == Residual::ReZero) return {1.0f, entry_ptr(block_index(step).rezero_alpha)};
    // 1 without residual warmup and CompleteP
    return {residual_warmup_scale(step.block) * static_cast<float>(branch_multiplier(m_config)), nullptr};
}

float Model::input_norm_scale(const SublayerStep& step) const {
    if (m_config.residual != Residual::Lns) return 1.0f;
    return static_cast<float>(1.0 / std::sqrt(static_cast<double>(step.block + 1)));
}

bool Model::carries_block_input(const SublayerStep& step) const {
    return m_config.residual == Residual::B2t && step.kind == kFeedForward &&
           step.placement == NormPlacement::Post;
}

const float* Model::block_input(const SublayerStep& step) const {
    const SublayerSlots slots(m_config);
    const int first = step.encoder ? slots.of_encoder(kAttentionSublayer, step.block)
                                   : slots.of(kAttentionSublayer, step.block);
    return m_sublayers[static_cast<size_t>(first)].input;
}

bool Model::fused_residual_sums() const {
    return m_backend->fuses_residual_sums() && m_config.residual != Residual::B2t && !attn_res();
}

float* Model::dual_stream(bool encoder) const {
    if (!has_dual_stream(m_config, encoder)) return nullptr;
    return encoder ? m_encoder_dual : m_dual;
}

const float* Model::final_norm_input(bool encoder) const {
    if (const float* dual = dual_stream(encoder)) return dual;
    if (encoder) return stack_output(m_plan[m_encoder_steps - 1]);
    return m_sublayers.empty() ? m_embedded : stack_output(m_plan.back());
}

AttentionShape Model::attention_shape(const SublayerStep& step, int batch, int seq) const {
    AttentionShape shape{batch, seq, m_config.heads, m_config.d_model / m_config.heads};
    shape.logit_scale = attention_logit_scale(m_config);
    if (step.encoder || step.kind == kCrossAttention) {
        shape.causal = false;  // the encoder reads its whole source; the decoder all of the memory
        shape.keys = m_source_len;
    }
    return shape;
}

const NormIndex& Model::input_norm_of(const BlockIndex& index, int kind) {
    if (kind == kCrossAttention) return index.norm_cross;
    return kind == kAttention ? index.norm1 : index.norm2;
}

const NormIndex& Model::output_norm_of(const BlockIndex& index, int kind) {
    if (kind == kCrossAttention) return index.norm_cross_out;
    return kind == kAttention ? index.norm1_out : index.norm2_out;
}

const float* Model::sublayer_output(const SublayerStep& step) const {
    const SublayerActivations& acts = m_sublayers[step.slot];
    return step.placement == NormPlacement::Post ? acts.output : acts.sum;
}

const float* Model::memory_buffer() const {
    if (has_final_norm(m_config, true)) return m_memory;
    return stack_output(m_plan[m_encoder_steps - 1]);
}

void Model::forward_sublayer(const SublayerStep& step, const float* x, int batch, int seq,
                             bool attention_stats) {
    const BlockIndex& index = block_index(step);
    SublayerActivations& acts = m_sublayers[step.slot];
    const int n = batch * seq;
    const int d = m_config.d_model;
    const size_t nd = static_cast<size_t>(n) * d;
    const NormIndex& norm_in = input_norm_of(index, step.kind);
    const NormIndex& norm_out = output_norm_of(index, step.kind);

    acts.input = x;
    m_matmuls.set_site(step.slot);
    const float* u = x;
    if (has_input_norm(step.placement)) {
        apply_norm(norm_in, acts.normed, acts.normed_stats, x, n);
        const float scale = input_norm_scale(step);
        if (scale != 1.0f) m_backend->scale(acts.normed, scale, nd);
        m_matmuls.round_activation(acts.normed, nd);  // read by the projections alone
        u = acts.normed;
    }

    const float* f = acts.branch;
    if (step.kind == kFeedForward) {
        forward_feed_forward(index, acts, u, n);
    } else {
        AttentionStatsRef stats;
        if (attention_stats) {
            float* slot = m_attention_stats + attention_stat_floats() * step.attention_slot;
            stats = {slot, slot + 1};
        }
        const bool cross = step.kind == kCrossAttention;
        m_backend->attention_forward(acts.heads, acts.probs, project_attention(step, u, n),
                                     attention_shape(step, batch, seq), stats);
        if (m_config.theory_mode) {
            f = acts.heads;
        } else {
            const int out_weight = cross ? index.cross_out_weight : index.out_weight;
            const int out_bias = cross ? index.cross_out_bias : index.out_bias;
            m_matmuls.round_activation(acts.heads, nd);
            m_matmuls.forward(acts.branch, acts.heads, entry_ptr(out_weight), entry_ptr(out_bias), n, d, d,
                              MatmulInput::Rounded);
        }
    }
    if (step.placement == NormPlacement::Peri) {
        apply_norm(norm_out, acts.branch_normed, acts.branch_stats, f, n);
        f = acts.branch_normed;
    }
    if (attn_res()) {
        attn_res_forward(step, f, n);    // the sum is an average over the earlier branches
    } else if (fused_residual_sums()) {  // the telemetry's sums of s and f, taken in the same pass
        const size_t slot = static_cast<size_t>(step.slot);
        const size_t branch_slot = m_sublayers.size() + slot;
        m_backend->residual_forward_with_sums(
            acts.sum, x, f, shortcut_scale(step), branch_scale(step), nd,
            {&m_telemetry.slice_sums[slot], &m_telemetry.slice_squares[slot],
             &m_telemetry.slice_sums[branch_slot], &m_telemetry.slice_squares[branch_slot]});
    } else {
        m_backend->residual_forward(acts.sum, x, f, shortcut_scale(step), branch_scale(step), nd);
    }
    if (carries_block_input(step)) m_backend->add(acts.sum, block_input(step), nd);  // B2T
    if (float* dual = dual_stream(step.encoder))  // ResiDual: the dual stream adds the branch unnormalised
        m_backend->residual_forward(dual, dual, f, {1.0f, nullptr}, branch_scale(step), nd);
    if (step.placement == NormPlacement::Post) {
        apply_norm(norm_in, acts.output, acts.output_stats, acts.sum, n);
    }
    if (attention_stats) m_matmuls.measure_stream(acts.sum, nd);
    if (ends_dense_block(step)) dense_forward(step, nd);  // DenseFormer: the next block's input
}

const float* Model::forward_encoder(int batch, int seq, bool attention_stats) {
    const float* x = m_embedded;
    if (float* dual = dual_stream(true))
        m_backend->copy(dual, m_embedded, static_cast<size_t>(batch) * seq * m_config.d_model);
    for (int i = 0; i < m_encoder_steps; ++i) {
        forward_sublayer(m_plan[i], x, batch, seq, attention_stats);
        x = stack_output(m_plan[i]);
    }
    finish_memory(batch, seq);
    return memory_buffer();
}

void Model::finish_memory(int batch, int seq) {
    if (!has_final_norm(m_config, true)) return;
    apply_norm(m_layout.encoder_final_norm, m_memory, m_memory_stats, final_norm_input(true), batch * seq);
    if (has_dual_stream(m_config, true))  // ResiDual: the memory is x + FinalNorm(dual)
        m_backend->add(m_memory, stack_output(m_plan[m_encoder_steps - 1]),
                       static_cast<size_t>(batch) * seq * m_config.d_model);
}

void Model::upload_targets(const Batch& batch) {
    const int n = batch.batch * batch.seq;
    if (m_config.encoder_layers <= 0) {
        m_backend->upload_ints(m_targets, batch.targets.data(), n);
        return;
    }
    // The memory holds positions [0, s): a target among them (position t < s - 1 predicts t + 1) would be
    // read off the memory, so it is not scored.
    m_host_targets.assign(batch.targets.begin(), batch.targets.end());
    for (int row = 0; row < batch.batch; ++row) {
        for (int t = 0; t + 1 < m_source_len; ++t)
            m_host_targets[static_cast<size_t>(row) * batch.seq + t] = -1;
    }
    m_backend->upload_ints(m_targets, m_host_targets.data(), n);
}

void Model::check_batch(const Batch& batch) const {
    for (size_t i = 0; i < batch.inputs.size(); ++i) {
        const int32_t token = batch.inputs[i];
        const int32_t target = batch.targets[i];
        if (token < 0 || token >= m_vocab || target < -1 || target >= m_vocab) {
            throw InputError("token id " + std::to_string(token < 0 || token >= m_vocab ? token : target) +
                             " at position " + std::to_string(i) + " is outside the vocabulary [0, " +
                             std::to_string(m_vocab) + ")");
        }
    }
    if (batch.seq > m_config.seq_len) {
        throw InputError("a sequence of " + std::to_string(batch.seq) +
                         " tokens is longer than model.seq_len (" + std::to_string(m_config.seq_len) + ")");
    }
}

const ForwardStats& Model::forward_backward(const Batch& batch, const PassOptions& options) {
    const bool backward = options.backward, attention_stats = options.attention_stats;
    const float z_loss = options.z_loss;
    check_batch(batch);
    ensure_activations(batch.batch, batch.seq);
    const int n = batch.batch * batch.seq;
    const int d = m_config.d_model;
    const bool final_norm_present = has_final_norm(m_config, false);
    const bool has_encoder = m_config.encoder_layers > 0;
    m_source_len = source_length(batch);
    m_gain_warmup.scale = norm_gain_scale();
    if (m_gain_warmup.scale != 1.0f) scale_norm_gains();
    m_matmuls.begin_pass(head_site() + 1);
    m_matmuls.round_weights(m_params, m_layout.total);

    m_backend->upload_ints(m_tokens, batch.inputs.data(), n);
    upload_targets(batch);
    m_backend->embedding_forward(m_embedded, m_tokens, entry_ptr(m_layout.wte), entry_ptr(m_layout.wpe),
                                 batch.batch, batch.seq, d);
    if (has_encoder) forward_encoder(batch.batch, batch.seq, attention_stats);
    const float* x = forward_decoder(batch.batch, batch.seq, attention_stats);
    m_matmuls.set_site(head_site());
    if (final_norm_present) forward_final_norm(x, n);
    const float* head_input = head_input_buffer();
    const MatmulInput head_operand = final_norm_present ? MatmulInput::Rounded : MatmulInput::Shared;
    m_matmuls.forward(m_logits, head_input, entry_ptr(m_layout.head), nullptr, n, d, m_vocab, head_operand);
    const float output_scale = static_cast<float>(output_multiplier(m_config));  // muP's readout multiplier
    const size_t logit_count = static_cast<size_t>(n) * m_vocab;
    if (output_scale != 1.0f) m_backend->scale(m_logits, output_scale, logit_count);
    const auto loss = m_backend->cross_entropy(m_logits, m_logits, m_targets, n, m_vocab, backward, z_loss);

    if (m_feature_norms.mode == FeatureStatistics::BatchUpdating) m_feature_norms.seed_pending = false;
    const ForwardStats& stats = collect_stats(loss, attention_stats);
    if (!backward) return stats;

    m_backend->fill(m_grads, 0.0f, m_layout.total);
    // d loss / d (head output) = d loss / d logits x the output multiplier, with the loss scale
    if (m_loss_scale * output_scale != 1.0f)
        m_backend->scale(m_logits, m_loss_scale * output_scale, logit_count);
    float* grad_residual = m_scratch[kGradResidual];
    m_matmuls.set_site(head_site());
    m_matmuls.backward(grad_residual, grad_ptr(m_layout.head), nullptr, m_logits, head_input,
                       entry_ptr(m_layout.head), n, d, m_vocab, false, head_operand);
    if (final_norm_present) backward_final_norm(x, n);
    backward_decoder(batch.batch, batch.seq);
    if (has_encoder) backward_encoder(batch.batch, batch.seq);
    if (m_gain_warmup.scale != 1.0f) scale_norm_gain_grads();
    if (attention_stats && m_matmuls.emulated()) collect_precision_stats();
    return stats;
}

const float* Model::forward_decoder(int batch, int seq, bool attention_stats) {
    const float* x = m_embedded;
    if (float* dual = dual_stream(false))  // ResiDual's dual stream starts at the stack's input
        m_backend->copy(dual, m_embedded, static_cast<size_t>(batch) * seq * m_config.d_model);
    begin_attn_res(batch * seq);
    for (size_t i = static_cast<size_t>(m_encoder_steps); i < m_plan.size(); ++i) {
        forward_sublayer(m_plan[i], x, batch, seq, attention_stats);
        x = stack_output(m_plan[i]);
    }
    return x;
}

void Model::forward_final_norm(const float* x, int n) {
    const size_t nd = static_cast<size_t>(n) * m_config.d_model;
    apply_norm(m_layout.final_norm, m_final_normed, m_final_stats, final_norm_input(false), n);
    if (dual_stream(false)) m_backend->add(m_final_normed, x, nd);  // ResiDual: x + FinalNorm(dual)
    m_matmuls.round_activation(m_final_normed, nd);
}

void Model::backward_final_norm(const float* x, int n) {
    float* grad_residual = m_scratch[kGradResidual];
    if (const float* dual = dual_stream(false)) {  // ResiDual: dL/dx stays; dL/d(dual) waits in kGradDual
        apply_norm_backward(m_layout.final_norm, m_scratch[kGradDual], grad_residual, dual, m_final_stats, n,
                            false);
        return;
    }
    apply_norm_backward(m_layout.final_norm, m_scratch[kGradTemp], grad_residual, x, m_final_stats, n, false);
    m_backend->copy(grad_residual, m_scratch[kGradTemp], static_cast<size_t>(n) * m_config.d_model);
}

void Model::backward_decoder(int batch, int seq) {
    const int n = batch * seq;
    const size_t nd = static_cast<size_t>(n) * m_config.d_model;
    float* grad_residual = m_scratch[kGradResidual];
    if (m_config.encoder_layers > 0) m_backend->fill(m_scratch[kGradMemory], 0.0f, nd);
    begin_dense_backward(nd);
    begin_attn_res_backward(n);
    for (size_t i = m_plan.size(); i-- > static_cast<size_t>(m_encoder_steps);)
        backward_sublayer(m_plan[i], batch, seq);
    end_dense_backward(nd);
    end_attn_res_backward(n);
    if (dual_stream(false)) m_backend->add(grad_residual, m_scratch[kGradDual], nd);  // the dual's start
    // the embeddings are shared: the decoder's gradient, then the encoder's, are added to them
    m_backend->embedding_backward(grad_ptr(m_layout.wte), grad_ptr(m_layout.wpe), grad_residual, m_tokens,
                                  batch, seq, m_config.d_model);
}

int Model::source_length(const Batch& batch) const {
    if (m_config.encoder_layers <= 0) return 0;
    const int given = batch.source_len > 0 ? batch.source_len : batch.seq / 2;
    return std::clamp(given, 1, batch.seq);
}

void Model::backward_encoder(int batch, int seq) {
    const int n = batch * seq;
    const int d = m_config.d_model;
    float* grad_residual = m_scratch[kGradResidual];
    const float* grad_memory = m_scratch[kGradMemory];
    const size_t nd = static_cast<size_t>(n) * d;
    const float* dual = dual_stream(true);
    if (dual) {  // ResiDual: as the decoder's (forward_backward)
        apply_norm_backward(m_layout.encoder_final_norm, m_scratch[kGradDual], grad_memory, dual,
                            m_memory_stats, n, false);
        m_backend->copy(grad_residual, grad_memory, nd);
    } else if (has_final_norm(m_config, true)) {
        apply_norm_backward(m_layout.encoder_final_norm, grad_residual, grad_memory,
                            stack_output(m_plan[m_encoder_steps - 1]), m_memory_stats, n, false);
    } else {
        m_backend->copy(grad_residual, grad_memory, nd);
    }
    begin_dense_backward(nd);
    for (int i = m_encoder_steps; i-- > 0;) backward_sublayer(m_plan[i], batch, seq);
    end_dense_backward(nd);
    if (dual) m_backend->add(grad_residual, m_scratch[kGradDual], nd);
    m_backend->embedding_backward(grad_ptr(m_layout.wte), grad_ptr(m_layout.wpe), grad_residual, m_tokens,
                                  batch, seq, d);
}

const float* Model::added_branch(const SublayerStep& step) const {
    const SublayerActivations& acts = m_sublayers[step.slot];
    if (step.placement == NormPlacement::Peri) return acts.branch_normed;
    return step.kind != kFeedForward && m_config.theory_mode ? acts.heads : acts.branch;
}

const float* Model::head_input_buffer() const {
    if (has_final_norm(m_config, false)) return m_final_normed;
    return final_norm_input(false);  // the last sub-layer's output (or the embeddings)
}

// On entry the residual-gradient scratch holds dL/dy for the sub-layer's output y (DenseFormer: dL/d of
// the block's average, which dense_backward turns into dL/dy); on exit dL/dx.
// Cross-attention also adds its keys' and values' gradient to the memory's (kGradMemory).
void Model::backward_sublayer(const SublayerStep& step, int batch, int seq) {
    const BlockIndex& index = block_index(step);
    const SublayerActivations& acts = m_sublayers[step.slot];
    const int n = batch * seq;
    const bool input_norm = has_input_norm(step.placement);
    m_matmuls.set_site(step.slot);
    float* grad_residual = m_scratch[kGradResidual];
    if (ends_dense_block(step)) dense_backward(step, static_cast<size_t>(n) * m_config.d_model);
    const float* grad_branch = backward_residual(step, n);
    // the branch's input u and where dL/du goes: the input norm's scratch, or added to dL/dx
    const float* u = input_norm ? acts.normed : acts.input;
    float* grad_u = input_norm ? m_scratch[kGradNormIn] : grad_residual;
    if (step.kind == kFeedForward)
        backward_feed_forward(index, acts, grad_branch, u, grad_u, !input_norm, n);
    else
        backward_attention(step, grad_branch, u, grad_u, !input_norm, batch, seq);
    // B2T: the block's input also reached its last sum; that sum's gradient, kept by backward_residual,
    // is added once the block's first sub-layer has made dL/dx
    const bool owes_block_input = m_config.residual == Residual::B2t && step.kind == kAttention &&
                                  step.placement == NormPlacement::Post;
    if (input_norm) {
        const float scale = input_norm_scale(step);  // u = g Norm_in(x): dL/dNorm_in = g dL/du
        if (scale != 1.0f) m_backend->scale(grad_u, scale, static_cast<size_t>(n) * m_config.d_model);
        apply_norm_backward(input_norm_of(index, step.kind), grad_residual, grad_u, acts.input,
                            acts.normed_stats, n, true);
    }
    if (owes_block_input)
        m_backend->add(grad_residual, m_scratch[kGradBlockInput], static_cast<size_t>(n) * m_config.d_model);
}

const float* Model::backward_residual(const SublayerStep& step, int n) {
    if (attn_res()) return branch_output_norm_backward(step, attn_res_backward(step, n), n);
    const BlockIndex& index = block_index(step);
    const SublayerActivations& acts = m_sublayers[step.slot];
    const int kind = step.kind;
    const size_t nd = static_cast<size_t>(n) * m_config.d_model;
    float* grad_residual = m_scratch[kGradResidual];

    const float* grad_sum = grad_residual;
    if (step.placement == NormPlacement::Post) {
        apply_norm_backward(input_norm_of(index, kind), m_scratch[kGradTemp], grad_residual, acts.sum,
                            acts.output_stats, n, false);
        grad_sum = m_scratch[kGradTemp];
    }
    if (carries_block_input(step)) m_backend->copy(m_scratch[kGradBlockInput], grad_sum, nd);  // B2T

    float* grad_shortcut = nullptr;
    if (m_config.residual == Residual::Admin)
        grad_shortcut =
            kind == kCrossAttention ? grad_ptr(index.cross_admin_omega) : grad_ptr(index.admin_omega) + kind;
    float* grad_rezero = m_config.residual == Residual::ReZero ? grad_ptr(index.rezero_alpha) : nullptr;
    const ScaleRef shortcut = shortcut_scale(step), scale = branch_scale(step);
    const float* grad_branch = grad_sum;
    // s = x + f with nothing to learn in it passes ds on to both unchanged: the branch reads ds where it
    // is (every reader is done with it before grad_residual is written again), no copies.
    const bool plain_sum =
        is_one(shortcut) && is_one(scale) && !grad_shortcut && !grad_rezero && grad_sum == grad_residual;
    if (!plain_sum) {
        m_backend->residual_backward(grad_residual, m_scratch[kGradBranch], grad_shortcut, grad_rezero,
                                     grad_sum, acts.input, added_branch(step), shortcut, scale, nd);
        grad_branch = m_scratch[kGradBranch];
    }
    grad_branch = branch_output_norm_backward(step, grad_branch, n);
    if (dual_stream(
            step.encoder)) {  // ResiDual (Post-LN: grad_branch is kGradBranch): the dual's a dL/d(dual)
        float* into = m_scratch[kGradBranch];
        m_backend->residual_forward(into, into, m_scratch[kGradDual], {1.0f, nullptr}, scale, nd);
    }
    return grad_branch;
}

const float* Model::branch_output_norm_backward(const SublayerStep& step, const float* grad_branch, int n) {
    if (step.placement != NormPlacement::Peri) return grad_branch;
    const SublayerActivations& acts = m_sublayers[step.slot];
    const float* branch = step.kind != kFeedForward && m_config.theory_mode ? acts.heads : acts.branch;
    apply_norm_backward(output_norm_of(block_index(step), step.kind), m_scratch[kGradBranchNormed],
                        grad_branch, branch, acts.branch_stats, n, false);
    return m_scratch[kGradBranchNormed];
}

void Model::backward_attention(const SublayerStep& step, const float* grad_branch, const float* u,
                               float* grad_u, bool accumulate_u, int batch, int seq) {
    const BlockIndex& index = block_index(step);
    const SublayerActivations& acts = m_sublayers[step.slot];
    const bool cross = step.kind == kCrossAttention;
    const int n = batch * seq;
    const int d = m_config.d_model;
    const float* grad_heads = grad_branch;
    if (!m_config.theory_mode) {
        const int out_weight = cross ? index.cross_out_weight : index.out_weight;
        const int out_bias = cross ? index.cross_out_bias : index.out_bias;
        m_matmuls.backward(m_scratch[kGradHeads], grad_ptr(out_weight), grad_ptr(out_bias), grad_branch,
                           acts.heads, entry_ptr(out_weight), n, d, d, false, MatmulInput::Rounded);
        grad_heads = m_scratch[kGradHeads];
    }
    backward_attention_inputs(step, grad_heads, batch, seq);
    backward_attention_projection(step, m_scratch[kGradQkv], u, grad_u, accumulate_u, m_scratch[kGradMemory],
                                  m_scratch[kGradHeads], n);
}

}  // namespace normlab
