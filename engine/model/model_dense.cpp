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

void Model::dense_forward(const SublayerStep& step, size_t nd) {
    const std::vector<int> sources = dense_sources(step.block, m_config.denseformer_dilation);
    const float* weights = entry_ptr(block_index(step).dense_weights);
    float* average = dense_average(step);
    const float* first = dense_source(step, sources[0]);
    if (sources.size() == 1) {  // alpha B
        m_backend->residual_forward(average, first, first, {1.0f, weights}, {0.0f, nullptr}, nd);
        return;
    }
    m_backend->residual_forward(average, first, dense_source(step, sources[1]), {1.0f, weights},
                                {1.0f, weights + 1}, nd);
    for (size_t t = 2; t < sources.size(); ++t) {
        m_backend->residual_forward(average, average, dense_source(step, sources[t]), {1.0f, nullptr},
                                    {1.0f, weights + t}, nd);
    }
}

void Model::dense_backward(const SublayerStep& step, size_t nd) {
    const std::vector<int> sources = dense_sources(step.block, m_config.denseformer_dilation);
    const int entry = block_index(step).dense_weights;
    const float* weights = entry_ptr(entry);
    float* weight_grads = grad_ptr(entry);
    float* grad_average = m_scratch[kGradResidual];
    for (size_t t = 0; t < sources.size(); ++t) {
        // dL/dalpha_t += <dL/dX, B_t>;  dL/dB_t += alpha_t dL/dX
        const float* source = dense_source(step, sources[t]);
        m_backend->residual_backward(m_scratch[kGradTemp], m_scratch[kGradBranch], weight_grads + t, nullptr,
                                     grad_average, source, source, {1.0f, weights + t}, {0.0f, nullptr}, nd);
        m_backend->add(m_dense.output_grads[static_cast<size_t>(sources[t])], m_scratch[kGradTemp], nd);
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
