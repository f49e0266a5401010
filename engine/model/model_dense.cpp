// DenseFormer (model.residual=denseformer, Pagliardini et al. 2024): after block i of a stack, the next
// block reads X_i = sum_j alpha_ij B_j over the outputs dense_sources(i) names (B_0 the stack's input, B_j
// block j's output), alpha learned and starting at the identity. Built from the backend's residual sum,
// so every backend has it; dL/dB_j gathers over the averages that read B_j.
#include <vector>

#include "engine/model/model.h"

namespace normlab {

bool Model::ends_dense_block(const SublayerStep& step) const {
    return m_config.residual == Residual::DenseFormer && step.kind == kFeedForwardSublayer;
}

float* Model::dense_average(const SublayerStep& step) const {
    const std::vector<float*>& averages = step.encoder ? m_dense.encoder_averages : m_dense.averages;
    return averages[static_cast<size_t>(step.block)];
}

const float* Model::stack_output(const SublayerStep& step) const {
    return ends_dense_block(step) ? dense_average(step) : sublayer_output(step);
}

const float* Model::dense_source(const SublayerStep& step, int output) const {
    if (output == 0) return m_embedded;
    const SublayerSlots slots(m_config);
    const int block = output - 1;
    return sublayer_output(plan_step(step.encoder ? slots.of_encoder(kFeedForwardSublayer, block)
                                                  : slots.of(kFeedForwardSublayer, block)));
}

// The outputs the block's average reads are dense_sources(block, k): first (block + 1) % k, then every
// k-th up to the block's own, block + 1; walked here without building the list (no allocation a step).
void Model::dense_forward(const SublayerStep& step, size_t nd) {
    const int dilation = m_config.denseformer_dilation;
    const int own = step.block + 1;
    const int first = dense_first_source(step.block, dilation);
    const float* weights = entry_ptr(block_index(step).dense_weights);
    float* average = dense_average(step);
    const float* oldest = dense_source(step, first);
    if (first == own) {  // alpha B
        m_backend->residual_forward(average, oldest, oldest, {1.0f, weights}, {0.0f, nullptr}, nd);
        return;
    }
    m_backend->residual_forward(average, oldest, dense_source(step, first + dilation), {1.0f, weights},
                                {1.0f, weights + 1}, nd);
    int term = 2;
    for (int output = first + 2 * dilation; output <= own; output += dilation, ++term) {
        m_backend->residual_forward(average, average, dense_source(step, output), {1.0f, nullptr},
                                    {1.0f, weights + term}, nd);
    }
}

void Model::dense_backward(const SublayerStep& step, size_t nd) {
    const int dilation = m_config.denseformer_dilation;
    const int entry = block_index(step).dense_weights;
    const float* weights = entry_ptr(entry);
    float* weight_grads = grad_ptr(entry);
    float* grad_average = m_scratch[kGradResidual];
    int term = 0;
    for (int output = dense_first_source(step.block, dilation); output <= step.block + 1;
         output += dilation, ++term) {
        // dL/dalpha_t += <dL/dX, B_t>;  dL/dB_t += alpha_t dL/dX
        const float* source = dense_source(step, output);
        m_backend->residual_backward(m_scratch[kGradTemp], m_scratch[kGradBranch], weight_grads + term,
                                     nullptr, grad_average, source, source, {1.0f, weights + term},
                                     {0.0f, nullptr}, nd);
        m_backend->add(m_dense.output_grads[static_cast<size_t>(output)], m_scratch[kGradTemp], nd);
    }
    m_backend->copy(grad_average, m_dense.output_grads[static_cast<size_t>(step.block) + 1], nd);
}

void Model::begin_dense_backward(size_t nd) {
    if (m_config.residual != Residual::DenseFormer) return;
    for (float* grad : m_dense.output_grads) m_backend->fill(grad, 0.0f, nd);
}

void Model::end_dense_backward(size_t nd) {
    if (m_config.residual != Residual::DenseFormer) return;
    m_backend->add(m_scratch[kGradResidual], m_dense.output_grads[0], nd);
}

}  // namespace normlab
