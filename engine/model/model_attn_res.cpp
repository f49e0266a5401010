// Attention Residuals (model.residual=attn_res, Kimi Team 2026, arXiv 2603.15031): sub-layer l reads
// h_l = sum_i softmax_i(w . RMSNorm(v_i)) v_i over source 0, the stack's input, and sources 1..l - 1, the
// earlier sub-layers' branches, with one learned pseudo-query w (zero at init: a plain average) per
// average. Built from the backend's RMSNorm, a one-column product for the scores and its depth softmax and
// depth mix ops; the scores stay fp32 under emulated precision.
#include "engine/model/model.h"

namespace normlab {

namespace {
// Where the weights of the average after slot j start: sum over k < j of (k + 2) rows of n.
size_t weights_offset(int slot, size_t n) {
    const auto j = static_cast<size_t>(slot);
    return (j * (j + 3) / 2) * n;
}
}  // namespace

void Model::begin_attn_res(int n) {
    if (!attn_res()) return;
    const size_t d = static_cast<size_t>(m_config.d_model);
    m_backend->fill(m_attn_res.ones, 1.0f, d);
    m_backend->copy(m_attn_res.values, m_embedded, static_cast<size_t>(n) * d);
    m_backend->norm_forward(NormType::RmsNorm, m_attn_res.keys, m_attn_res.key_stats, m_attn_res.values,
                            m_attn_res.ones, nullptr, {1.0f, nullptr}, n, m_config.d_model,
                            static_cast<float>(m_config.norm_eps));
}

void Model::attn_res_forward(const SublayerStep& step, const float* f, int n) {
    const int d = m_config.d_model;
    const size_t nd = static_cast<size_t>(n) * d;
    const int source = step.slot + 1, sources = step.slot + 2;
    float* value = m_attn_res.values + static_cast<size_t>(source) * nd;
    m_backend->copy(value, f, nd);
    const ScaleRef scale = branch_scale(step);  // a constant here (ReZero is another model.residual)
    if (!is_one(scale)) m_backend->scale(value, scale.constant, nd);
    m_backend->norm_forward(NormType::RmsNorm, m_attn_res.keys + static_cast<size_t>(source) * nd,
                            m_attn_res.key_stats + 2 * static_cast<size_t>(source) * n, value,
                            m_attn_res.ones, nullptr, {1.0f, nullptr}, n, d,
                            static_cast<float>(m_config.norm_eps));
    float* weights = m_attn_res.weights + weights_offset(step.slot, static_cast<size_t>(n));
    const float* query = entry_ptr(block_index(step).attn_res_queries) + static_cast<size_t>(step.kind) * d;
    m_backend->linear_forward(weights, m_attn_res.keys, query, nullptr, sources * n, d, 1);  // the scores
    m_backend->depth_softmax_forward(weights, weights, sources, n);
    m_backend->depth_mix_forward(m_sublayers[step.slot].sum, weights, m_attn_res.values, sources, n, d);
}

const float* Model::attn_res_backward(const SublayerStep& step, int n) {
    const int d = m_config.d_model;
    const size_t nd = static_cast<size_t>(n) * d;
    const int source = step.slot + 1, sources = step.slot + 2;
    float* grad_residual = m_scratch[kGradResidual];
    const float* weights = m_attn_res.weights + weights_offset(step.slot, static_cast<size_t>(n));
    float* weight_grads = m_attn_res.weight_grads;
    m_backend->depth_mix_backward(m_attn_res.value_grads, weight_grads, grad_residual, weights,
                                  m_attn_res.values, sources, n, d);
    m_backend->depth_softmax_backward(weight_grads, weight_grads, weights, sources, n);
    const int queries = block_index(step).attn_res_queries;
    const size_t row = static_cast<size_t>(step.kind) * d;
    m_backend->linear_backward(m_attn_res.key_grads, grad_ptr(queries) + row, nullptr, weight_grads,
                               m_attn_res.keys, entry_ptr(queries) + row, sources * n, d, 1, true);
    // every average that reads this sub-layer's branch is behind: its key's gradient is whole
    float* value_grad = m_attn_res.value_grads + static_cast<size_t>(source) * nd;
    m_backend->norm_backward(NormType::RmsNorm, value_grad, m_attn_res.unused_gain_grad, nullptr, nullptr,
                             m_attn_res.key_grads + static_cast<size_t>(source) * nd,
                             m_attn_res.values + static_cast<size_t>(source) * nd,
                             m_attn_res.key_stats + 2 * static_cast<size_t>(source) * n, m_attn_res.ones,
                             {1.0f, nullptr}, n, d, true);
    m_backend->fill(grad_residual, 0.0f, nd);
    const ScaleRef scale = branch_scale(step);
    if (is_one(scale)) return value_grad;
    float* grad_branch = m_scratch[kGradBranch];
    m_backend->copy(grad_branch, value_grad, nd);
    m_backend->scale(grad_branch, scale.constant, nd);
    return grad_branch;
}

void Model::begin_attn_res_backward(int n) {
    if (!attn_res()) return;
    const size_t all =
        (2 * static_cast<size_t>(m_config.layers) + 1) * static_cast<size_t>(n) * m_config.d_model;
    m_backend->fill(m_attn_res.value_grads, 0.0f, all);
    m_backend->fill(m_attn_res.key_grads, 0.0f, all);
    // what the keys' gain-free norm ops add up and nothing reads: kept from growing over a long run
    m_backend->fill(m_attn_res.unused_gain_grad, 0.0f, static_cast<size_t>(m_config.d_model));
}

void Model::end_attn_res_backward(int n) {
    if (!attn_res()) return;
    const size_t nd = static_cast<size_t>(n) * m_config.d_model;
    m_backend->norm_backward(NormType::RmsNorm, m_attn_res.value_grads, m_attn_res.unused_gain_grad, nullptr,
                             nullptr, m_attn_res.key_grads, m_attn_res.values, m_attn_res.key_stats,
                             m_attn_res.ones, {1.0f, nullptr}, n, m_config.d_model, true);
    m_backend->add(m_scratch[kGradResidual], m_attn_res.value_grads, nd);
}

}  // namespace normlab
