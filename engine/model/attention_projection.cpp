// Attention's input projections, forward and backward: q from the sub-layer's input u, k and v from u
// (self-attention) or the encoder's memory (cross-attention). Without QK-norm one packed product; with
// it, q, k and v planar [3, n, d] and each head's q and k normalised over the head dimension with one
// gain per head dimension, no bias (docs/model.md#qk-norm). With RoPE, q and k are turned in place after
// the projection (and after QK-norm), and their gradients turned back before the projection's backward.
#include <array>
#include <cmath>

#include "engine/model/model.h"

namespace normlab {

namespace {
// One of q, k, v: the rows [first_row, first_row + d) of a projection weight and its bias.
struct ProjectionPart {
    int weight = -1;
    int bias = -1;
    int first_row = 0;
};

std::array<ProjectionPart, 3> projection_parts(const BlockIndex& index, bool cross, int d) {
    if (cross)
        return {{{index.cross_q_weight, index.cross_q_bias, 0},
                 {index.cross_kv_weight, index.cross_kv_bias, 0},
                 {index.cross_kv_weight, index.cross_kv_bias, d}}};
    return {{{index.qkv_weight, index.qkv_bias, 0},
             {index.qkv_weight, index.qkv_bias, d},
             {index.qkv_weight, index.qkv_bias, 2 * d}}};
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

AttentionInputs Model::project_attention(const SublayerStep& step, const float* u, int n) {
    const BlockIndex& index = block_index(step);
    SublayerActivations& acts = m_sublayers[step.slot];
    const int d = m_config.d_model;
    const size_t nd = static_cast<size_t>(n) * d;
    const bool cross = step.kind == kCrossAttentionSublayer;
    const float* kv_source = cross ? memory_buffer() : u;
    if (m_config.qk_norm == QkNorm::None) {
        if (cross) {  // q [n, d], then kv [n, 2d]
            m_backend->linear_forward(acts.qkv, u, entry_ptr(index.cross_q_weight),
                                      entry_ptr(index.cross_q_bias), n, d, d);
            m_backend->linear_forward(acts.qkv + nd, kv_source, entry_ptr(index.cross_kv_weight),
                                      entry_ptr(index.cross_kv_bias), n, d, 2 * d);
        } else {
            m_backend->linear_forward(acts.qkv, u, entry_ptr(index.qkv_weight), entry_ptr(index.qkv_bias), n,
                                      d, 3 * d);
            rotate_qk(acts.qkv, acts.qkv + d, 3 * d, 3 * d, n, false);
        }
        return attention_inputs(acts, cross);
    }
    const auto parts = projection_parts(index, cross, d);
    for (int part = 0; part < 3; ++part) {
        const ProjectionPart& p = parts[part];
        m_backend->linear_forward(acts.qkv + part * nd, part == 0 ? u : kv_source,
                                  entry_ptr(p.weight) + static_cast<size_t>(p.first_row) * d,
                                  rows_from(entry_ptr(p.bias), p.first_row), n, d, d);
    }
    const int rows = n * m_config.heads;  // one per (position, head)
    const int head_dim = d / m_config.heads;
    const int gains[2] = {cross ? index.cross_q_norm : index.q_norm,
                          cross ? index.cross_k_norm : index.k_norm};
    for (int part = 0; part < 2; ++part) {
        m_backend->norm_forward(qk_norm_type(m_config.qk_norm), acts.qk_normed + part * nd,
                                acts.qk_stats + 2 * static_cast<size_t>(part) * rows, acts.qkv + part * nd,
                                entry_ptr(gains[part]), nullptr, {}, rows, head_dim,
                                static_cast<float>(m_config.norm_eps));
    }
    if (!cross) rotate_qk(acts.qk_normed, acts.qk_normed + nd, d, d, n, false);  // after the norm (OLMo 2)
    return attention_inputs(acts, cross);
}

void Model::rotate_qk(float* q, float* k, int q_stride, int k_stride, int n, bool inverse) {
    if (m_config.position != Position::Rope) return;
    const int heads = m_config.heads;
    const int head_dim = m_config.d_model / heads;
    const auto theta = static_cast<float>(m_config.rope_theta);
    m_backend->rope(q, q_stride, n, m_seq, heads, head_dim, theta, inverse);
    m_backend->rope(k, k_stride, n, m_seq, heads, head_dim, theta, inverse);
}

void Model::backward_attention_projection(const SublayerStep& step, float* grads, const float* u,
                                          float* grad_u, bool accumulate_u, float* grad_memory,
                                          float* scratch, int n) {
    const BlockIndex& index = block_index(step);
    const SublayerActivations& acts = m_sublayers[step.slot];
    const int d = m_config.d_model;
    const size_t nd = static_cast<size_t>(n) * d;
    const bool cross = step.kind == kCrossAttentionSublayer;
    const float* kv_source = cross ? memory_buffer() : u;
    if (m_config.qk_norm == QkNorm::None) {
        if (cross) {
            m_backend->linear_backward(grad_u, grad_ptr(index.cross_q_weight), grad_ptr(index.cross_q_bias),
                                       grads, u, entry_ptr(index.cross_q_weight), n, d, d, accumulate_u);
            m_backend->linear_backward(grad_memory, grad_ptr(index.cross_kv_weight),
                                       grad_ptr(index.cross_kv_bias), grads + nd, kv_source,
                                       entry_ptr(index.cross_kv_weight), n, d, 2 * d, true);
        } else {
            m_backend->linear_backward(grad_u, grad_ptr(index.qkv_weight), grad_ptr(index.qkv_bias), grads, u,
                                       entry_ptr(index.qkv_weight), n, d, 3 * d, accumulate_u);
        }
        return;
    }
    const auto parts = projection_parts(index, cross, d);
    const int rows = n * m_config.heads;
    const int head_dim = d / m_config.heads;
    const int gains[2] = {cross ? index.cross_q_norm : index.q_norm,
                          cross ? index.cross_k_norm : index.k_norm};
    for (int part = 0; part < 3; ++part) {
        const float* grad_out = grads + part * nd;
        if (part < 2) {  // through the norm to the raw projection's output
            m_backend->norm_backward(qk_norm_type(m_config.qk_norm), scratch, grad_ptr(gains[part]), nullptr,
                                     nullptr, grad_out, acts.qkv + part * nd,
                                     acts.qk_stats + 2 * static_cast<size_t>(part) * rows,
                                     entry_ptr(gains[part]), {}, rows, head_dim, false);
            grad_out = scratch;
        }
        const ProjectionPart& p = parts[part];
        const bool from_u = part == 0 || !cross;
        const size_t row_offset = static_cast<size_t>(p.first_row) * d;
        m_backend->linear_backward(from_u ? grad_u : grad_memory, grad_ptr(p.weight) + row_offset,
                                   rows_from(grad_ptr(p.bias), p.first_row), grad_out, from_u ? u : kv_source,
                                   entry_ptr(p.weight) + row_offset, n, d, d,
                                   part == 0 ? accumulate_u : true);
    }
}

}  // namespace normlab
