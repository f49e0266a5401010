// Attention's input projections, forward and backward: q from the sub-layer's input u, k and v from u
// (self-attention) or the encoder's memory (cross-attention). Without QK-norm one packed product; with
// it, q, k and v planar and each head's q and k normalised over the head dimension with one gain per head
// dimension, no bias (docs/model.md#qk-norm). With RoPE, q and k are turned in place after the
// projection (and after QK-norm), and their gradients turned back before the projection's backward.
// Grouped-query self-attention projects kv_heads key and value heads and repeats them for attention.
#include <array>
#include <cmath>

#include "engine/model/model.h"

namespace normlab {

namespace {
// One of q, k, v: the rows [first_row, first_row + rows) of a projection weight and its bias.
struct ProjectionPart {
    int weight = -1;
    int bias = -1;
    int first_row = 0;
    int rows = 0;
};

std::array<ProjectionPart, 3> projection_parts(const BlockIndex& index, bool cross, int d, int kv) {
    if (cross)
        return {{{index.cross_q_weight, index.cross_q_bias, 0, d},
                 {index.cross_kv_weight, index.cross_kv_bias, 0, d},
                 {index.cross_kv_weight, index.cross_kv_bias, d, d}}};
    return {{{index.qkv_weight, index.qkv_bias, 0, d},
             {index.qkv_weight, index.qkv_bias, d, kv},
             {index.qkv_weight, index.qkv_bias, d + kv, kv}}};
}

// A bias's part from `first_row` on; none when the model has no biases (model.bias=false).
template <class T>
T* rows_from(T* bias, int first_row) {
    return bias ? bias + first_row : nullptr;
}

NormType qk_norm_type(QkNorm qk_norm) {
    return qk_norm == QkNorm::RmsNorm ? NormType::RmsNorm : NormType::LayerNorm;
}
}  // namespace

int Model::kv_width(bool cross) const {
    return cross ? m_config.d_model : key_value_width(m_config);
}

bool Model::grouped(bool cross) const {
    return kv_width(cross) < m_config.d_model;
}

HeadGroups Model::head_groups(int n) const {
    const int kv_heads = key_value_heads(m_config);
    return {n, kv_heads, m_config.heads / kv_heads, m_config.d_model / m_config.heads};
}

AttentionGrads Model::projection_places(float* base, bool cross, int n) const {
    const int d = m_config.d_model;
    const int kv = kv_width(cross);
    const size_t nd = static_cast<size_t>(n) * d;
    if (m_config.qk_norm != QkNorm::None)
        return {base, base + nd, base + nd + static_cast<size_t>(n) * kv, d, kv};
    if (cross) return {base, base + nd, base + nd + d, d, 2 * d};
    return {base, base + d, base + d + kv, d + 2 * kv, d + 2 * kv};
}

AttentionInputs Model::attention_inputs(const SublayerActivations& acts, bool cross) const {
    const int n = m_batch * m_seq;
    const size_t nd = static_cast<size_t>(n) * m_config.d_model;
    const AttentionGrads p = projection_places(acts.qkv, cross, n);
    AttentionInputs in{p.q, p.k, p.v, p.q_stride, p.kv_stride};
    if (m_config.qk_norm != QkNorm::None) {  // q and k normalised (and turned), v as projected
        in.q = acts.qk_normed;
        in.k = acts.qk_normed + nd;
    }
    if (grouped(cross)) {  // every query head's own copy of its key and value head
        in.k = acts.kv_repeated;
        in.v = acts.kv_repeated + nd;
        in.kv_stride = m_config.d_model;
    }
    return in;
}

void Model::repeat_key_value_heads(const SublayerActivations& acts, bool cross, int n) {
    if (!grouped(cross)) return;
    const size_t nd = static_cast<size_t>(n) * m_config.d_model;
    const AttentionGrads p = projection_places(acts.qkv, cross, n);
    const float* k = m_config.qk_norm != QkNorm::None ? acts.qk_normed + nd : p.k;
    m_backend->repeat_heads(acts.kv_repeated, k, p.kv_stride, head_groups(n));
    m_backend->repeat_heads(acts.kv_repeated + nd, p.v, p.kv_stride, head_groups(n));
}

AttentionInputs Model::project_attention(const SublayerStep& step, const float* u, int n) {
    const BlockIndex& index = block_index(step);
    SublayerActivations& acts = m_sublayers[step.slot];
    const int d = m_config.d_model;
    const bool cross = step.kind == kCrossAttentionSublayer;
    const float* kv_source = cross ? memory_buffer() : u;
    const MatmulInput input = matmul_input(acts, u);
    const MatmulInput kv_input = cross ? MatmulInput::Shared : input;  // the memory is read by every block
    const AttentionGrads out = projection_places(acts.qkv, cross, n);
    if (m_config.qk_norm == QkNorm::None) {
        if (cross) {  // q [n, d], then kv [n, 2d]
            m_matmuls.forward(acts.qkv, u, entry_ptr(index.cross_q_weight), entry_ptr(index.cross_q_bias), n,
                              d, d, input);
            m_matmuls.forward(out.k, kv_source, entry_ptr(index.cross_kv_weight),
                              entry_ptr(index.cross_kv_bias), n, d, 2 * d, kv_input);
        } else {
            m_matmuls.forward(acts.qkv, u, entry_ptr(index.qkv_weight), entry_ptr(index.qkv_bias), n, d,
                              d + 2 * kv_width(false), input);
            rotate_qk(out.q, out.q_stride, out.k, out.kv_stride, n, false);
        }
    } else {
        const auto parts = projection_parts(index, cross, d, kv_width(cross));
        float* const places[3] = {out.q, out.k, out.v};
        for (int part = 0; part < 3; ++part) {
            const ProjectionPart& p = parts[part];
            m_matmuls.forward(places[part], part == 0 ? u : kv_source,
                              entry_ptr(p.weight) + static_cast<size_t>(p.first_row) * d,
                              rows_from(entry_ptr(p.bias), p.first_row), n, d, p.rows,
                              part == 0 ? input : kv_input);
        }
        normalize_qk(step, out, n);
    }
    repeat_key_value_heads(acts, cross, n);
    return attention_inputs(acts, cross);
}

// QK-norm's rows: one per (position, head) of q, then of k (kv heads); the statistics of k after q's.
int Model::qk_rows(bool cross, int part, int n) const {
    const int head_dim = m_config.d_model / m_config.heads;
    return n * (part == 0 ? m_config.heads : kv_width(cross) / head_dim);
}

void Model::normalize_qk(const SublayerStep& step, const AttentionGrads& raw, int n) {
    const BlockIndex& index = block_index(step);
    SublayerActivations& acts = m_sublayers[step.slot];
    const bool cross = step.kind == kCrossAttentionSublayer;
    const int d = m_config.d_model;
    const size_t nd = static_cast<size_t>(n) * d;
    const int head_dim = d / m_config.heads;
    const int gains[2] = {cross ? index.cross_q_norm : index.q_norm,
                          cross ? index.cross_k_norm : index.k_norm};
    const float* sources[2] = {raw.q, raw.k};
    for (int part = 0; part < 2; ++part) {
        m_backend->norm_forward(qk_norm_type(m_config.qk_norm), acts.qk_normed + part * nd,
                                acts.qk_stats + 2 * static_cast<size_t>(part) * qk_rows(cross, 0, n),
                                sources[part], entry_ptr(gains[part]), nullptr, {}, qk_rows(cross, part, n),
                                head_dim, static_cast<float>(m_config.norm_eps));
    }
    if (!cross)  // after the norm (OLMo 2)
        rotate_qk(acts.qk_normed, d, acts.qk_normed + nd, kv_width(false), n, false);
}

void Model::rotate_qk(float* q, int q_stride, float* k, int k_stride, int n, bool inverse) {
    if (m_config.position != Position::Rope) return;
    const int head_dim = m_config.d_model / m_config.heads;
    const auto theta = static_cast<float>(m_config.rope_theta);
    m_backend->rope(q, q_stride, n, m_seq, m_config.heads, head_dim, theta, inverse);
    m_backend->rope(k, k_stride, n, m_seq, key_value_heads(m_config), head_dim, theta, inverse);
}

void Model::backward_attention_inputs(const SublayerStep& step, const float* grad_heads, int batch, int seq) {
    const SublayerActivations& acts = m_sublayers[step.slot];
    const bool cross = step.kind == kCrossAttentionSublayer;
    const int n = batch * seq;
    const AttentionGrads grads = projection_places(m_scratch[kGradQkv], cross, n);
    const AttentionShape shape = attention_shape(step, batch, seq);
    if (!grouped(cross)) {
        m_backend->attention_backward(grads, grad_heads, attention_inputs(acts, cross), acts.probs, shape);
    } else {  // the repeated heads' gradients, each group summed into its key or value head
        const size_t nd = static_cast<size_t>(n) * m_config.d_model;
        float* repeated = m_scratch[kGradKvRepeated];
        m_backend->attention_backward({grads.q, repeated, repeated + nd, grads.q_stride, m_config.d_model},
                                      grad_heads, attention_inputs(acts, cross), acts.probs, shape);
        m_backend->sum_head_groups(grads.k, grads.kv_stride, repeated, head_groups(n));
        m_backend->sum_head_groups(grads.v, grads.kv_stride, repeated + nd, head_groups(n));
    }
    if (!cross) rotate_qk(grads.q, grads.q_stride, grads.k, grads.kv_stride, n, true);  // RoPE's backward
}

void Model::backward_attention_projection(const SublayerStep& step, float* grads, const float* u,
                                          float* grad_u, bool accumulate_u, float* grad_memory,
                                          float* scratch, int n) {
    const BlockIndex& index = block_index(step);
    const SublayerActivations& acts = m_sublayers[step.slot];
    const int d = m_config.d_model;
    const bool cross = step.kind == kCrossAttentionSublayer;
    const float* kv_source = cross ? memory_buffer() : u;
    const MatmulInput input = matmul_input(acts, u);
    const MatmulInput kv_input = cross ? MatmulInput::Shared : input;
    if (m_config.qk_norm == QkNorm::None) {
        if (cross) {
            m_matmuls.backward(grad_u, grad_ptr(index.cross_q_weight), grad_ptr(index.cross_q_bias), grads, u,
                               entry_ptr(index.cross_q_weight), n, d, d, accumulate_u, input);
            m_matmuls.backward(grad_memory, grad_ptr(index.cross_kv_weight), grad_ptr(index.cross_kv_bias),
                               projection_places(grads, true, n).k, kv_source,
                               entry_ptr(index.cross_kv_weight), n, d, 2 * d, true, kv_input);
        } else {
            m_matmuls.backward(grad_u, grad_ptr(index.qkv_weight), grad_ptr(index.qkv_bias), grads, u,
                               entry_ptr(index.qkv_weight), n, d, d + 2 * kv_width(false), accumulate_u,
                               input);
        }
        return;
    }
    const auto parts = projection_parts(index, cross, d, kv_width(cross));
    const AttentionGrads places = projection_places(grads, cross, n);
    const AttentionGrads raw = projection_places(acts.qkv, cross, n);
    float* const grad_parts[3] = {places.q, places.k, places.v};
    const float* const raw_parts[2] = {raw.q, raw.k};
    const int head_dim = d / m_config.heads;
    const int gains[2] = {cross ? index.cross_q_norm : index.q_norm,
                          cross ? index.cross_k_norm : index.k_norm};
    for (int part = 0; part < 3; ++part) {
        const float* grad_out = grad_parts[part];
        if (part < 2) {  // through the norm to the raw projection's output
            m_backend->norm_backward(qk_norm_type(m_config.qk_norm), scratch, grad_ptr(gains[part]), nullptr,
                                     nullptr, grad_out, raw_parts[part],
                                     acts.qk_stats + 2 * static_cast<size_t>(part) * qk_rows(cross, 0, n),
                                     entry_ptr(gains[part]), {}, qk_rows(cross, part, n), head_dim, false);
            grad_out = scratch;
        }
        const ProjectionPart& p = parts[part];
        const bool from_u = part == 0 || !cross;
        const size_t row_offset = static_cast<size_t>(p.first_row) * d;
        m_matmuls.backward(from_u ? grad_u : grad_memory, grad_ptr(p.weight) + row_offset,
                           rows_from(grad_ptr(p.bias), p.first_row), grad_out, from_u ? u : kv_source,
                           entry_ptr(p.weight) + row_offset, n, d, p.rows, part == 0 ? accumulate_u : true,
                           from_u ? input : kv_input);
    }
}

}  // namespace normlab
