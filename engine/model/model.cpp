// Model construction, activation memory, and the forward and backward passes, laid out per sub-layer:
//   u = Norm_in(x) (pre, peri);  f = F(u);  f = Norm_out(f) (peri);  s = c x + a f;  y = Norm(s) (post)
// with c = DeepNorm alpha or Admin omega and a = the ReZero scalar (1 otherwise).
#include "engine/model/model.h"

#include <cmath>
#include <string>

#include "engine/core/errors.h"
#include "engine/core/memory_check.h"
#include "engine/model/constants.h"

namespace normlab {

namespace {
constexpr int kAttention = 0;
constexpr int kFeedForward = 1;
// Backward scratch buffers, by role.
enum Scratch {
    kGradResidual,
    kGradTemp,
    kGradBranch,
    kGradBranchNormed,
    kGradNormIn,
    kGradHeads,
    kGradQkv,
    kGradHidden,
    kScratchCount
};

bool has_input_norm(NormPlacement p) {
    return p == NormPlacement::Pre || p == NormPlacement::Peri;
}
}  // namespace

Model::Model(const ModelConfig& config, int vocab, Backend& backend)
    : m_config(effective_model_config(config)), m_vocab(vocab), m_backend(&backend) {
    m_layout = build_layout(m_config, vocab);
    // parameters, gradients, two optimizer moments, updates
    check_memory(m_layout.total * sizeof(float) * 5, "the model's parameters and optimizer state");
    m_params = m_backend->allocate(m_layout.total);
    m_grads = m_backend->allocate(m_layout.total);
    m_attention_stats = m_backend->allocate(static_cast<size_t>(m_config.layers) * 2);
    refresh_active();

    const size_t layers = static_cast<size_t>(m_config.layers);
    m_stats.resid.resize(layers);
    m_stats.resid_attn.resize(layers);
    m_stats.attn_entropy.reserve(layers);
    m_stats.attn_max_logit.reserve(layers);
    m_stats.dependency.reserve(2 * layers);
    m_branch_slices.reserve(2 * layers);
    m_slice_squares.resize(4 * layers);
    m_slice_sums.resize(4 * layers);
    m_attention_host.resize(2 * layers);
}

Model::~Model() {
    m_backend->release(m_params);
    m_backend->release(m_grads);
    m_backend->release(m_attention_stats);
    m_backend->release(m_activations);
    m_backend->release(m_tokens);
    m_backend->release(m_targets);
}

void Model::refresh_active() {
    m_active.assign(m_layout.entries.size(), false);
    for (size_t i = 0; i < m_layout.entries.size(); ++i)
        m_active[i] = is_active(m_layout.entries[i], m_config);
}

namespace {
// Floats in the activation buffer for one batch x seq pass (the layout ensure_activations carves).
size_t activation_floats(const ModelConfig& c, int vocab, int batch, int seq) {
    const size_t n = static_cast<size_t>(batch) * static_cast<size_t>(seq);
    const size_t d = static_cast<size_t>(c.d_model);
    const size_t d_ff = static_cast<size_t>(c.d_ff);
    const size_t probs = static_cast<size_t>(batch) * c.heads * static_cast<size_t>(seq) * seq;
    const size_t per_sublayer_common =
        6 * n * d + 6 * n;  // normed, branch, branch_normed, sum, output + stats
    const size_t attention = 3 * n * d + probs + n * d;
    const size_t feed_forward = 2 * n * d_ff;
    const size_t globals = 2 * n * d + 2 * n + n * static_cast<size_t>(vocab);
    const size_t scratch = 6 * n * d + 3 * n * d + n * d_ff;
    return static_cast<size_t>(c.layers) * (2 * per_sublayer_common + attention + feed_forward) + globals +
           scratch;
}
}  // namespace

size_t estimate_training_bytes(const ModelConfig& model, int vocab, int batch, int seq) {
    const ModelConfig effective = effective_model_config(model);
    const size_t parameters = build_layout(effective, vocab).total;
    const size_t tokens = 2 * static_cast<size_t>(batch) * static_cast<size_t>(seq);  // inputs, targets
    // parameters, gradients, two optimizer moments and the last update; activations; the host batch
    // and its device copy
    return (parameters * 5 + activation_floats(effective, vocab, batch, seq)) * sizeof(float) +
           2 * tokens * sizeof(int32_t);
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
    m_sublayers.assign(static_cast<size_t>(m_config.layers) * 2, SublayerActivations{});
    m_resid_slices.clear();
    for (int block = 0; block < m_config.layers; ++block) {
        for (int kind = 0; kind < 2; ++kind) {
            SublayerActivations& acts = m_sublayers[block * 2 + kind];
            acts.normed = take(n * d);
            acts.normed_stats = take(2 * n);
            if (kind == kAttention) {
                acts.qkv = take(3 * n * d);
                acts.probs = take(probs);
                acts.heads = take(n * d);
            } else {
                acts.hidden_pre = take(n * d_ff);
                acts.hidden = take(n * d_ff);
            }
            acts.branch = take(n * d);
            acts.branch_normed = take(n * d);
            acts.branch_stats = take(2 * n);
            acts.sum = take(n * d);
            acts.output = take(n * d);
            acts.output_stats = take(2 * n);
            m_resid_slices.push_back({static_cast<size_t>(acts.sum - m_activations), n * d});
        }
    }
    m_embedded = take(n * d);
    m_final_normed = take(n * d);
    m_final_stats = take(2 * n);
    m_logits = take(n * static_cast<size_t>(m_vocab));
    m_scratch.assign(kScratchCount, nullptr);
    for (int role = kGradResidual; role <= kGradHeads; ++role) m_scratch[role] = take(n * d);
    m_scratch[kGradQkv] = take(3 * n * d);
    m_scratch[kGradHidden] = take(n * d_ff);
}

ScaleRef Model::shortcut_scale(int block, int kind) const {
    if (m_config.residual == Residual::DeepNorm) {
        return {static_cast<float>(effective_deepnorm_alpha(m_config)), nullptr};
    }
    if (m_config.residual == Residual::Admin)
        return {1.0f, entry_ptr(m_layout.blocks[block].admin_omega) + kind};
    return {1.0f, nullptr};
}

ScaleRef Model::branch_scale(int block) const {
    if (m_config.residual == Residual::ReZero) return {1.0f, entry_ptr(m_layout.blocks[block].rezero_alpha)};
    return {1.0f, nullptr};
}

void Model::forward_sublayer(int block, int kind, const float* x, SublayerActivations& acts, int batch,
                             int seq, bool attention_stats) {
    const BlockIndex& index = m_layout.blocks[block];
    const int n = batch * seq;
    const int d = m_config.d_model;
    const NormType type = m_config.norm_type;
    const float eps = static_cast<float>(m_config.norm_eps);
    const NormIndex& norm_in = kind == kAttention ? index.norm1 : index.norm2;
    const NormIndex& norm_out = kind == kAttention ? index.norm1_out : index.norm2_out;

    acts.input = x;
    const float* u = x;
    if (has_input_norm(m_config.norm_placement)) {
        m_backend->norm_forward(type, acts.normed, acts.normed_stats, x, entry_ptr(norm_in.weight),
                                entry_ptr(norm_in.bias), {0.0f, entry_ptr(norm_in.alpha)}, n, d, eps);
        u = acts.normed;
    }

    const float* f = acts.branch;
    if (kind == kAttention) {
        m_backend->linear_forward(acts.qkv, u, entry_ptr(index.qkv_weight), entry_ptr(index.qkv_bias), n, d,
                                  3 * d);
        AttentionStatsRef stats;
        if (attention_stats) stats = {m_attention_stats + 2 * block, m_attention_stats + 2 * block + 1};
        m_backend->attention_forward(acts.heads, acts.probs, acts.qkv, batch, seq, m_config.heads,
                                     d / m_config.heads, stats);
        if (m_config.theory_mode) {
            f = acts.heads;
        } else {
            m_backend->linear_forward(acts.branch, acts.heads, entry_ptr(index.out_weight),
                                      entry_ptr(index.out_bias), n, d, d);
        }
    } else {
        const int d_ff = m_config.d_ff;
        m_backend->linear_forward(acts.hidden_pre, u, entry_ptr(index.fc1_weight), entry_ptr(index.fc1_bias),
                                  n, d, d_ff);
        m_backend->activation_forward(m_config.activation, acts.hidden, acts.hidden_pre,
                                      static_cast<size_t>(n) * d_ff);
        m_backend->linear_forward(acts.branch, acts.hidden, entry_ptr(index.fc2_weight),
                                  entry_ptr(index.fc2_bias), n, d_ff, d);
    }
    if (m_config.norm_placement == NormPlacement::Peri) {
        m_backend->norm_forward(type, acts.branch_normed, acts.branch_stats, f, entry_ptr(norm_out.weight),
                                entry_ptr(norm_out.bias), {0.0f, entry_ptr(norm_out.alpha)}, n, d, eps);
        f = acts.branch_normed;
    }
    m_backend->residual_forward(acts.sum, x, f, shortcut_scale(block, kind), branch_scale(block),
                                static_cast<size_t>(n) * d);
    if (m_config.norm_placement == NormPlacement::Post) {
        m_backend->norm_forward(type, acts.output, acts.output_stats, acts.sum, entry_ptr(norm_in.weight),
                                entry_ptr(norm_in.bias), {0.0f, entry_ptr(norm_in.alpha)}, n, d, eps);
    }
}

const ForwardStats& Model::forward_backward(const Batch& batch, bool backward, bool attention_stats) {
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
    ensure_activations(batch.batch, batch.seq);
    const int n = batch.batch * batch.seq;
    const int d = m_config.d_model;
    const size_t nd = static_cast<size_t>(n) * d;
    const NormType type = m_config.norm_type;
    const float eps = static_cast<float>(m_config.norm_eps);
    const NormIndex& final_norm = m_layout.final_norm;
    const bool has_final_norm = has_input_norm(m_config.norm_placement);

    m_backend->upload_ints(m_tokens, batch.inputs.data(), n);
    m_backend->upload_ints(m_targets, batch.targets.data(), n);
    m_backend->embedding_forward(m_embedded, m_tokens, entry_ptr(m_layout.wte), entry_ptr(m_layout.wpe),
                                 batch.batch, batch.seq, d);
    const float* x = m_embedded;
    for (int block = 0; block < m_config.layers; ++block) {
        for (int kind = 0; kind < 2; ++kind) {
            SublayerActivations& acts = m_sublayers[block * 2 + kind];
            forward_sublayer(block, kind, x, acts, batch.batch, batch.seq, attention_stats);
            x = m_config.norm_placement == NormPlacement::Post ? acts.output : acts.sum;
        }
    }
    if (has_final_norm) {
        m_backend->norm_forward(type, m_final_normed, m_final_stats, x, entry_ptr(final_norm.weight),
                                entry_ptr(final_norm.bias), {0.0f, entry_ptr(final_norm.alpha)}, n, d, eps);
    }
    const float* head_input = head_input_buffer();
    m_backend->linear_forward(m_logits, head_input, entry_ptr(m_layout.head), nullptr, n, d, m_vocab);
    const auto loss = m_backend->cross_entropy(m_logits, m_logits, m_targets, n, m_vocab, backward);

    ForwardStats& stats = m_stats;
    stats.scored = loss.scored;
    stats.correct = loss.correct;
    stats.loss = loss.scored > 0 ? loss.loss_sum / static_cast<double>(loss.scored) : 0.0;
    stats.first_nonfinite_block = -1;
    const std::vector<double>& sums = m_slice_squares;  // one per residual sum, in sub-layer order
    // Sums too, in the same pass: the dependency ratio's variances need them on telemetry steps.
    m_backend->sum_values_and_squares(m_activations, m_resid_slices, m_slice_sums.data(),
                                      m_slice_squares.data());
    for (int block = 0; block < m_config.layers; ++block) {
        stats.resid_attn[block] = sums[2 * block] / static_cast<double>(nd);
        stats.resid[block] = sums[2 * block + 1] / static_cast<double>(nd);
        if (stats.first_nonfinite_block < 0 &&
            !(std::isfinite(sums[2 * block]) && std::isfinite(sums[2 * block + 1]))) {
            stats.first_nonfinite_block = block;
        }
    }
    if (stats.first_nonfinite_block < 0 && !std::isfinite(stats.loss))
        stats.first_nonfinite_block = m_config.layers;
    stats.attn_entropy.clear();
    stats.attn_max_logit.clear();
    stats.dependency.clear();
    if (attention_stats) {
        m_backend->download(m_attention_host.data(), m_attention_stats, m_attention_host.size());
        const double rows = static_cast<double>(batch.batch) * m_config.heads * batch.seq;
        for (int block = 0; block < m_config.layers; ++block) {
            stats.attn_entropy.push_back(m_attention_host[2 * block] / rows);
            stats.attn_max_logit.push_back(m_attention_host[2 * block + 1]);
        }
        measure_dependency(nd);
    }
    if (!backward) return stats;

    m_backend->fill(m_grads, 0.0f, m_layout.total);
    float* grad_residual = m_scratch[kGradResidual];
    m_backend->linear_backward(grad_residual, grad_ptr(m_layout.head), nullptr, m_logits, head_input,
                               entry_ptr(m_layout.head), n, d, m_vocab, false);
    if (has_final_norm) {
        float* grad_temp = m_scratch[kGradTemp];
        m_backend->norm_backward(type, grad_temp, grad_ptr(final_norm.weight), grad_ptr(final_norm.bias),
                                 grad_ptr(final_norm.alpha), grad_residual, x, m_final_stats,
                                 entry_ptr(final_norm.weight), {0.0f, entry_ptr(final_norm.alpha)}, n, d,
                                 false);
        m_backend->copy(grad_residual, grad_temp, nd);
    }
    for (int block = m_config.layers - 1; block >= 0; --block) {
        for (int kind = 1; kind >= 0; --kind) {
            backward_sublayer(block, kind, m_sublayers[block * 2 + kind], batch.batch, batch.seq);
        }
    }
    m_backend->embedding_backward(grad_ptr(m_layout.wte), grad_ptr(m_layout.wpe), grad_residual, m_tokens,
                                  batch.batch, batch.seq, d);
    return stats;
}

const float* Model::added_branch(int block, int kind) const {
    const SublayerActivations& acts = m_sublayers[block * 2 + kind];
    if (m_config.norm_placement == NormPlacement::Peri) return acts.branch_normed;
    return kind == kAttention && m_config.theory_mode ? acts.heads : acts.branch;
}

// Fills m_stats.dependency: per sub-layer, a^2 Var[branch] / Var[residual sum].
void Model::measure_dependency(size_t count) {
    const size_t sublayers = m_sublayers.size();
    m_branch_slices.clear();
    for (size_t i = 0; i < sublayers; ++i) {
        m_branch_slices.push_back(
            {static_cast<size_t>(added_branch(static_cast<int>(i / 2), static_cast<int>(i % 2)) -
                                 m_activations),
             count});
    }
    const std::vector<double>& squares = m_slice_squares;
    const std::vector<double>& sums = m_slice_sums;
    // The residual sums' sums and squares are already in [0, sublayers) (the forward's telemetry).
    m_backend->sum_values_and_squares(m_activations, m_branch_slices, m_slice_sums.data() + sublayers,
                                      m_slice_squares.data() + sublayers);
    auto variance = [&](size_t i) {
        const double mean = sums[i] / static_cast<double>(count);
        return squares[i] / static_cast<double>(count) - mean * mean;
    };
    for (size_t i = 0; i < sublayers; ++i) {
        double scale = 1.0;
        const ScaleRef a = branch_scale(static_cast<int>(i / 2));
        if (a.param) {
            float value = 0.0f;
            m_backend->download(&value, a.param, 1);
            scale = static_cast<double>(value) * value;
        }
        const double total = variance(i);
        m_stats.dependency.push_back(total > 0.0 ? scale * variance(sublayers + i) / total : 0.0);
    }
}

const float* Model::head_input_buffer() const {
    if (has_input_norm(m_config.norm_placement)) return m_final_normed;
    if (m_sublayers.empty()) return m_embedded;
    const SublayerActivations& last = m_sublayers.back();
    return m_config.norm_placement == NormPlacement::Post ? last.output : last.sum;
}

void Model::stage_move(BackendTransfer& transfer) {
    transfer.copy(m_params, m_layout.total);
    transfer.copy(m_grads, m_layout.total);
    transfer.copy(m_attention_stats, static_cast<size_t>(m_config.layers) * 2);
    if (!m_activations) return;
    const size_t n = static_cast<size_t>(m_batch) * m_seq;
    transfer.copy(m_activations, activation_floats(m_config, m_vocab, m_batch, m_seq));
    transfer.reallocate(m_tokens, n);  // uploaded again by every pass
    transfer.reallocate(m_targets, n);
}

void Model::moved_to(Backend& target) {
    m_backend = &target;
    if (m_activations) carve_activations();
}

std::vector<float> Model::read_block_output(int block) {
    const SublayerActivations& acts = m_sublayers.at(static_cast<size_t>(block) * 2 + kFeedForward);
    const float* output = m_config.norm_placement == NormPlacement::Post ? acts.output : acts.sum;
    std::vector<float> host(static_cast<size_t>(m_batch) * m_seq * m_config.d_model);
    m_backend->download(host.data(), output, host.size());
    return host;
}

std::vector<float> Model::read_head_input() {
    std::vector<float> host(static_cast<size_t>(m_batch) * m_seq * m_config.d_model);
    m_backend->download(host.data(), head_input_buffer(), host.size());
    return host;
}

// On entry the residual-gradient scratch holds dL/dy for the sub-layer's output y; on exit dL/dx.
void Model::backward_sublayer(int block, int kind, SublayerActivations& acts, int batch, int seq) {
    const BlockIndex& index = m_layout.blocks[block];
    const int n = batch * seq;
    const int d = m_config.d_model;
    const size_t nd = static_cast<size_t>(n) * d;
    const NormType type = m_config.norm_type;
    const NormIndex& norm_in = kind == kAttention ? index.norm1 : index.norm2;
    const NormIndex& norm_out = kind == kAttention ? index.norm1_out : index.norm2_out;
    const bool input_norm = has_input_norm(m_config.norm_placement);
    const bool peri = m_config.norm_placement == NormPlacement::Peri;
    float* grad_residual = m_scratch[kGradResidual];

    const float* grad_sum = grad_residual;
    if (m_config.norm_placement == NormPlacement::Post) {
        m_backend->norm_backward(type, m_scratch[kGradTemp], grad_ptr(norm_in.weight), grad_ptr(norm_in.bias),
                                 grad_ptr(norm_in.alpha), grad_residual, acts.sum, acts.output_stats,
                                 entry_ptr(norm_in.weight), {0.0f, entry_ptr(norm_in.alpha)}, n, d, false);
        grad_sum = m_scratch[kGradTemp];
    }

    const float* branch = kind == kAttention && m_config.theory_mode ? acts.heads : acts.branch;
    const float* combined = added_branch(block, kind);
    float* grad_shortcut =
        m_config.residual == Residual::Admin ? grad_ptr(index.admin_omega) + kind : nullptr;
    float* grad_rezero = m_config.residual == Residual::ReZero ? grad_ptr(index.rezero_alpha) : nullptr;
    m_backend->residual_backward(grad_residual, m_scratch[kGradBranch], grad_shortcut, grad_rezero, grad_sum,
                                 acts.input, combined, shortcut_scale(block, kind), branch_scale(block), nd);

    const float* grad_branch = m_scratch[kGradBranch];
    if (peri) {
        m_backend->norm_backward(type, m_scratch[kGradBranchNormed], grad_ptr(norm_out.weight),
                                 grad_ptr(norm_out.bias), grad_ptr(norm_out.alpha), grad_branch, branch,
                                 acts.branch_stats, entry_ptr(norm_out.weight),
                                 {0.0f, entry_ptr(norm_out.alpha)}, n, d, false);
        grad_branch = m_scratch[kGradBranchNormed];
    }

    const float* u = input_norm ? acts.normed : acts.input;
    float* grad_u = input_norm ? m_scratch[kGradNormIn] : grad_residual;
    const bool accumulate_u = !input_norm;
    if (kind == kAttention) {
        const float* grad_heads = grad_branch;
        if (!m_config.theory_mode) {
            m_backend->linear_backward(m_scratch[kGradHeads], grad_ptr(index.out_weight),
                                       grad_ptr(index.out_bias), grad_branch, acts.heads,
                                       entry_ptr(index.out_weight), n, d, d, false);
            grad_heads = m_scratch[kGradHeads];
        }
        m_backend->attention_backward(m_scratch[kGradQkv], grad_heads, acts.qkv, acts.probs, batch, seq,
                                      m_config.heads, d / m_config.heads);
        m_backend->linear_backward(grad_u, grad_ptr(index.qkv_weight), grad_ptr(index.qkv_bias),
                                   m_scratch[kGradQkv], u, entry_ptr(index.qkv_weight), n, d, 3 * d,
                                   accumulate_u);
    } else {
        const int d_ff = m_config.d_ff;
        float* grad_hidden = m_scratch[kGradHidden];
        m_backend->linear_backward(grad_hidden, grad_ptr(index.fc2_weight), grad_ptr(index.fc2_bias),
                                   grad_branch, acts.hidden, entry_ptr(index.fc2_weight), n, d_ff, d, false);
        m_backend->activation_backward(m_config.activation, grad_hidden, grad_hidden, acts.hidden_pre,
                                       static_cast<size_t>(n) * d_ff);
        m_backend->linear_backward(grad_u, grad_ptr(index.fc1_weight), grad_ptr(index.fc1_bias), grad_hidden,
                                   u, entry_ptr(index.fc1_weight), n, d, d_ff, accumulate_u);
    }
    if (input_norm) {
        m_backend->norm_backward(type, grad_residual, grad_ptr(norm_in.weight), grad_ptr(norm_in.bias),
                                 grad_ptr(norm_in.alpha), grad_u, acts.input, acts.normed_stats,
                                 entry_ptr(norm_in.weight), {0.0f, entry_ptr(norm_in.alpha)}, n, d, true);
    }
}

}  // namespace normlab
