// The FFN sub-layer's branch, forward and backward: the MLP fc2(activation(fc1 u)), or a gated FFN
// (model.ffn swiglu / geglu) fc2(act(gate u) * fc1 u) with fc1 as the up projection and both of width
// d_ff (docs/model.md#architecture-keys). Biases are null pointers when the model has none.
#include "engine/model/model.h"

namespace normlab {

void Model::forward_feed_forward(const BlockIndex& index, SublayerActivations& acts, const float* u, int n) {
    const int d = m_config.d_model;
    const int d_ff = m_config.d_ff;
    const size_t hidden = static_cast<size_t>(n) * d_ff;
    const MatmulInput input = matmul_input(acts, u);
    m_matmuls.forward(acts.hidden_pre, u, entry_ptr(index.fc1_weight), entry_ptr(index.fc1_bias), n, d, d_ff,
                      input);
    if (m_config.ffn == FeedForward::Mlp) {
        m_backend->activation_forward(m_config.activation, acts.hidden, acts.hidden_pre, hidden);
    } else {
        m_matmuls.forward(acts.gate, u, entry_ptr(index.gate_weight), entry_ptr(index.gate_bias), n, d, d_ff,
                          input);
        m_backend->gated_forward(m_config.ffn, acts.hidden, acts.gate, acts.hidden_pre, hidden);
    }
    m_matmuls.round_activation(acts.hidden, hidden);  // read by fc2 alone
    m_matmuls.forward(acts.branch, acts.hidden, entry_ptr(index.fc2_weight), entry_ptr(index.fc2_bias), n,
                      d_ff, d, MatmulInput::Rounded);
}

void Model::backward_feed_forward(const BlockIndex& index, const SublayerActivations& acts,
                                  const float* grad_branch, const float* u, float* grad_u, bool accumulate_u,
                                  int n) {
    const int d = m_config.d_model;
    const int d_ff = m_config.d_ff;
    const size_t hidden = static_cast<size_t>(n) * d_ff;
    float* grad_hidden = m_scratch[kGradHidden];
    m_matmuls.backward(grad_hidden, grad_ptr(index.fc2_weight), grad_ptr(index.fc2_bias), grad_branch,
                       acts.hidden, entry_ptr(index.fc2_weight), n, d_ff, d, false, MatmulInput::Rounded);
    const MatmulInput input = matmul_input(acts, u);
    if (m_config.ffn == FeedForward::Mlp) {
        m_backend->activation_backward(m_config.activation, grad_hidden, grad_hidden, acts.hidden_pre,
                                       hidden);
    } else {  // dL/d(up) in place of dL/dh, dL/d(gate) apart; the gate's share of dL/du first
        float* grad_gate = m_scratch[kGradGate];
        m_backend->gated_backward(m_config.ffn, grad_gate, grad_hidden, grad_hidden, acts.gate,
                                  acts.hidden_pre, hidden);
        m_matmuls.backward(grad_u, grad_ptr(index.gate_weight), grad_ptr(index.gate_bias), grad_gate, u,
                           entry_ptr(index.gate_weight), n, d, d_ff, accumulate_u, input);
        accumulate_u = true;
    }
    m_matmuls.backward(grad_u, grad_ptr(index.fc1_weight), grad_ptr(index.fc1_bias), grad_hidden, u,
                       entry_ptr(index.fc1_weight), n, d, d_ff, accumulate_u, input);
}

}  // namespace normlab
