// The model's activation memory: how many floats one batch x seq pass needs (and so a training run's
// estimate), carving the activation buffer into per-sub-layer views and scratch, moving it to another
// backend, and host copies of block outputs out of it.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "engine/core/memory_check.h"
#include "engine/model/model.h"

namespace normlab {

namespace {
// DenseFormer: every block's average (both stacks) and the gradients of the outputs 0..blocks.
size_t dense_floats(const ModelConfig& c, size_t n) {
    if (c.residual != Residual::DenseFormer) return 0;
    const auto blocks = static_cast<size_t>(c.layers + c.encoder_layers);
    return (blocks + static_cast<size_t>(std::max(c.layers, c.encoder_layers)) + 1) * n *
           static_cast<size_t>(c.d_model);
}

// Attention Residuals (decoder-only): the sources' values and keys and their gradients, the keys'
// statistics, every average's weights (slot j: j + 2 sources) and one average's weight gradients, and
// two [d] vectors (Model::AttnResBuffers).
size_t attn_res_sources(const ModelConfig& c) {
    return 2 * static_cast<size_t>(c.layers) + 1;
}
size_t attn_res_weight_floats(const ModelConfig& c, size_t n) {
    const size_t averages = 2 * static_cast<size_t>(c.layers);
    return (averages * (averages - 1) / 2 + 2 * averages) * n;  // sum over j < averages of (j + 2) n
}
size_t attn_res_floats(const ModelConfig& c, size_t n) {
    if (c.residual != Residual::AttnRes) return 0;
    const size_t sources = attn_res_sources(c), d = static_cast<size_t>(c.d_model);
    return 4 * sources * n * d + 3 * sources * n + attn_res_weight_floats(c, n) + 2 * d;
}

// Floats in the activation buffer for one batch x seq pass (the layout ensure_activations carves).
size_t activation_floats(const ModelConfig& c, int vocab, int batch, int seq) {
    const size_t n = static_cast<size_t>(batch) * static_cast<size_t>(seq);
    const size_t d = static_cast<size_t>(c.d_model);
    const size_t d_ff = static_cast<size_t>(c.d_ff);
    const size_t probs = static_cast<size_t>(batch) * c.heads * static_cast<size_t>(seq) * seq;
    const size_t per_sublayer_common =
        6 * n * d + 6 * n;  // normed, branch, branch_normed, sum, output + stats
    // with QK-norm also the normalised q and k and their statistics
    const size_t qk_norm = c.qk_norm == QkNorm::None ? 0 : 2 * n * d + 4 * n * static_cast<size_t>(c.heads);
    // self-attention's q, k, v: d + 2 kv_width floats a row, and with grouped-query attention k and v
    // repeated to every head (and their gradients in the scratch)
    const size_t kv = static_cast<size_t>(key_value_width(c));
    const size_t grouped = kv < d ? 2 * n * d : 0;
    const size_t attention = n * (d + 2 * kv) + grouped + probs + n * d + qk_norm;
    const size_t cross_attention = 3 * n * d + probs + n * d + qk_norm;
    // a gated FFN (model.ffn swiglu, geglu) also keeps its gate, and its gradient in the scratch
    const size_t ffn_arrays = c.ffn == FeedForward::Mlp ? 2 : 3;
    const size_t feed_forward = ffn_arrays * n * d_ff;
    const size_t globals = 2 * n * d + 2 * n + n * static_cast<size_t>(vocab);
    const size_t b2t = c.residual == Residual::B2t ? n * d : 0;  // a Post-LN block's last sum's gradient
    // ResiDual: the decoder's dual stream and its gradient (the encoder's dual stream below)
    const size_t resi_dual = has_dual_stream(c, false) ? 2 * n * d : 0;
    const size_t scratch = 6 * n * d + 3 * n * d + (ffn_arrays - 1) * n * d_ff + grouped + b2t + resi_dual +
                           dense_floats(c, n) + attn_res_floats(c, n);
    const size_t block = 2 * per_sublayer_common + attention + feed_forward;
    const size_t decoder_only = static_cast<size_t>(c.layers) * block + globals + scratch;
    if (c.encoder_layers <= 0) return decoder_only;
    // encoder blocks, one cross-attention per decoder block (q and kv take as much as qkv), the memory's
    // norm, and the memory's gradient
    const size_t cross = static_cast<size_t>(c.layers) * (per_sublayer_common + cross_attention);
    const size_t encoder_dual = has_dual_stream(c, true) ? n * d : 0;
    return decoder_only + static_cast<size_t>(c.encoder_layers) * block + cross + (n * d + 2 * n) + n * d +
           encoder_dual;
}
}  // namespace

size_t emulated_precision_bytes(const ModelConfig& model, int vocab, int batch, int seq) {
    const ModelConfig effective = effective_model_config(model);
    const size_t n = static_cast<size_t>(batch) * static_cast<size_t>(seq);
    const size_t widest = static_cast<size_t>(std::max(
        {effective.d_model, effective.d_ff, vocab, effective.d_model + 2 * key_value_width(effective)}));
    // the parameters' rounded copy, a product's output gradient and its shared input, a weight rounded
    // outside the parameters (never, today), and the tallies
    const size_t parameters = build_layout(effective, vocab).total;
    const size_t sites = static_cast<size_t>(SublayerSlots(effective).count()) + 1;
    return (parameters + n * widest + n * static_cast<size_t>(effective.d_model) + 9 * sites) * sizeof(float);
}

size_t estimate_training_bytes(const ModelConfig& model, int vocab, int batch, int seq,
                               NumberFormat precision) {
    const ModelConfig effective = effective_model_config(model);
    const size_t parameters = build_layout(effective, vocab).total;
    const size_t tokens = 2 * static_cast<size_t>(batch) * static_cast<size_t>(seq);  // inputs, targets
    // parameters, gradients, two optimizer moments and the last update; activations; the host batch
    // and its device copy; emulated precision's scratch
    const size_t emulation =
        precision == NumberFormat::Fp32 ? 0 : emulated_precision_bytes(model, vocab, batch, seq);
    return (parameters * 5 + activation_floats(effective, vocab, batch, seq)) * sizeof(float) +
           2 * tokens * sizeof(int32_t) + emulation;
}

void Model::ensure_activations(int batch, int seq) {
    if (batch == m_batch && seq == m_seq) return;
    const size_t n = static_cast<size_t>(batch) * seq;
    const size_t total = activation_floats(m_config, m_vocab, batch, seq);
    check_memory(total * sizeof(float),
                 "activations for batch " + std::to_string(batch) + " x seq " + std::to_string(seq));

    m_backend->release(m_activations);
    m_backend->release(m_tokens);
    m_backend->release(m_targets);
    m_activations = m_backend->allocate(total);
    m_tokens = m_backend->allocate_ints(n);
    m_targets = m_backend->allocate_ints(n);
    m_batch = batch;
    m_seq = seq;
    carve_activations();
}

void Model::release_activations() {
    m_backend->release(m_activations);
    m_backend->release(m_tokens);
    m_backend->release(m_targets);
    m_activations = nullptr;
    m_tokens = nullptr;
    m_targets = nullptr;
    m_batch = 0;
    m_seq = 0;
    m_sublayers.clear();
}

void Model::carve_activations() {
    const size_t n = static_cast<size_t>(m_batch) * m_seq;
    const size_t d = m_config.d_model;
    const size_t d_ff = m_config.d_ff;
    const size_t probs = static_cast<size_t>(m_batch) * m_config.heads * m_seq * m_seq;
    float* cursor = m_activations;
    auto take = [&cursor](size_t count) {
        float* block = cursor;
        cursor += count;
        return block;
    };
    const SublayerSlots slots(m_config);
    m_sublayers.assign(static_cast<size_t>(slots.count()), SublayerActivations{});
    m_resid_slices.clear();
    for (int slot = 0; slot < slots.count(); ++slot) {
        const int kind = slots.at(slot).kind;
        SublayerActivations& acts = m_sublayers[slot];
        acts.normed = take(n * d);
        acts.normed_stats = take(2 * n);
        if (kind == kFeedForwardSublayer) {
            acts.hidden_pre = take(n * d_ff);
            acts.hidden = take(n * d_ff);
            if (m_config.ffn != FeedForward::Mlp) acts.gate = take(n * d_ff);
        } else {
            const bool cross = kind == kCrossAttentionSublayer;
            acts.qkv = take(n * (d + 2 * static_cast<size_t>(kv_width(cross))));  // projection_places
            if (grouped(cross)) acts.kv_repeated = take(2 * n * d);
            acts.probs = take(probs);
            acts.heads = take(n * d);
            if (m_config.qk_norm != QkNorm::None) {
                acts.qk_normed = take(2 * n * d);
                acts.qk_stats = take(4 * n * static_cast<size_t>(m_config.heads));
            }
        }
        acts.branch = take(n * d);
        acts.branch_normed = take(n * d);
        acts.branch_stats = take(2 * n);
        acts.sum = take(n * d);
        acts.output = take(n * d);
        acts.output_stats = take(2 * n);
        m_resid_slices.push_back({static_cast<size_t>(acts.sum - m_activations), n * d});
    }
    m_embedded = take(n * d);
    m_final_normed = take(n * d);
    m_final_stats = take(2 * n);
    m_logits = take(n * static_cast<size_t>(m_vocab));
    m_scratch.assign(kScratchCount, nullptr);
    for (int role = kGradResidual; role <= kGradHeads; ++role) m_scratch[role] = take(n * d);
    m_scratch[kGradQkv] = take(3 * n * d);
    m_scratch[kGradHidden] = take(n * d_ff);
    if (m_config.ffn != FeedForward::Mlp) m_scratch[kGradGate] = take(n * d_ff);
    if (grouped(false)) m_scratch[kGradKvRepeated] = take(2 * n * d);
    if (m_config.encoder_layers > 0) {
        m_memory = take(n * d);
        m_memory_stats = take(2 * n);
        m_scratch[kGradMemory] = take(n * d);
    }
    carve_scheme_buffers(cursor, n * d);
}

void Model::carve_scheme_buffers(float*& cursor, size_t nd) {
    auto take = [&cursor, nd] {
        float* view = cursor;
        cursor += nd;
        return view;
    };
    if (m_config.residual == Residual::B2t) m_scratch[kGradBlockInput] = take();
    m_dual = has_dual_stream(m_config, false) ? take() : nullptr;
    if (m_dual) m_scratch[kGradDual] = take();
    m_encoder_dual = has_dual_stream(m_config, true) ? take() : nullptr;
    m_dense.averages.clear();
    m_dense.encoder_averages.clear();
    m_dense.output_grads.clear();
    if (m_config.residual == Residual::DenseFormer) {
        for (int block = 0; block < m_config.layers; ++block) m_dense.averages.push_back(take());
        for (int block = 0; block < m_config.encoder_layers; ++block)
            m_dense.encoder_averages.push_back(take());
        for (int output = 0; output <= std::max(m_config.layers, m_config.encoder_layers); ++output)
            m_dense.output_grads.push_back(take());
    }
    carve_attn_res_buffers(cursor, nd / static_cast<size_t>(m_config.d_model));
    // the last views: they must fit what activation_floats counted (what ensure_activations allocated)
    if (cursor > m_activations + activation_floats(m_config, m_vocab, m_batch, m_seq))
        throw std::logic_error("the activation views overrun the buffer activation_floats sized");
}

void Model::carve_attn_res_buffers(float*& cursor, size_t n) {
    m_attn_res = {};
    if (!attn_res()) return;
    auto take = [&cursor](size_t count) {
        float* view = cursor;
        cursor += count;
        return view;
    };
    const size_t sources = attn_res_sources(m_config), d = static_cast<size_t>(m_config.d_model);
    m_attn_res.values = take(sources * n * d);
    m_attn_res.keys = take(sources * n * d);
    m_attn_res.value_grads = take(sources * n * d);
    m_attn_res.key_grads = take(sources * n * d);
    m_attn_res.key_stats = take(2 * sources * n);
    m_attn_res.weight_grads = take(sources * n);
    m_attn_res.weights = take(attn_res_weight_floats(m_config, n));
    m_attn_res.ones = take(d);
    m_attn_res.unused_gain_grad = take(d);
}

void Model::stage_move(BackendTransfer& transfer) {
    m_matmuls.release();  // scratch, made again on the next pass where the model then lives
    transfer.copy(m_params, m_layout.total);
    transfer.copy(m_grads, m_layout.total);
    transfer.copy(m_attention_stats, attention_stat_total());
    transfer.copy(m_gain_warmup.shadow, std::max<size_t>(m_gain_warmup.total, 1));
    transfer.copy(m_feature_norms.buffer, std::max<size_t>(m_feature_norms.total, 1));
    if (!m_activations) return;
    const size_t n = static_cast<size_t>(m_batch) * m_seq;
    transfer.copy(m_activations, activation_floats(m_config, m_vocab, m_batch, m_seq));
    transfer.reallocate(m_tokens, n);  // uploaded again by every pass
    transfer.reallocate(m_targets, n);
}

void Model::moved_to(Backend& target) {
    m_backend = &target;
    m_matmuls.use_backend(target);
    if (m_activations) carve_activations();
}

std::vector<float> Model::read_buffer(const float* buffer) {
    std::vector<float> host(static_cast<size_t>(m_batch) * m_seq * m_config.d_model);
    m_backend->download(host.data(), buffer, host.size());
    return host;
}

std::vector<float> Model::read_block_output(int block) {
    if (block < 0 || block >= m_config.layers)
        throw std::out_of_range("no decoder block " + std::to_string(block));
    return read_buffer(sublayer_output(plan_step(SublayerSlots(m_config).of(kFeedForwardSublayer, block))));
}

std::vector<float> Model::read_encoder_block_output(int block) {
    if (block < 0 || block >= m_config.encoder_layers)
        throw std::out_of_range("no encoder block " + std::to_string(block));
    return read_buffer(
        sublayer_output(plan_step(SublayerSlots(m_config).of_encoder(kFeedForwardSublayer, block))));
}

std::vector<float> Model::read_memory() {
    if (m_config.encoder_layers <= 0) throw std::out_of_range("a decoder-only model has no memory");
    return read_buffer(memory_buffer());
}

std::vector<float> Model::read_head_input() {
    return read_buffer(head_input_buffer());
}

std::vector<float> Model::read_logits() {
    std::vector<float> host(static_cast<size_t>(m_batch) * m_seq * m_vocab);
    m_backend->download(host.data(), m_logits, host.size());
    return host;
}

}  // namespace normlab
