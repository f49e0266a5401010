// Optimizer: per-step host scalars (bias corrections, RAdam rectification) and one backend update per
// active tensor, so inactive wiring (e.g. Peri-LN norms under Pre-LN) is neither moved nor decayed.
#include "engine/train/optimizer.h"

#include <cmath>

#include "engine/train/schedule.h"

namespace normlab {

Optimizer::Optimizer(Model& model) : m_model(model) {
    const size_t total = model.layout().total;
    m_first = model.backend().allocate(total);
    m_second = model.backend().allocate(total);
    m_update = model.backend().allocate(total);
}

Optimizer::~Optimizer() {
    m_model.backend().release(m_first);
    m_model.backend().release(m_second);
    m_model.backend().release(m_update);
}

void Optimizer::update(const TrainConfig& train, int64_t step, double lr, double grad_scale) {
    OptimizerStep s;
    s.kind = train.optimizer;
    s.lr = static_cast<float>(lr);
    s.grad_scale = static_cast<float>(grad_scale);
    s.beta1 = static_cast<float>(train.beta1);
    s.beta2 = static_cast<float>(train.beta2);
    s.eps = static_cast<float>(train.eps);
    s.momentum = static_cast<float>(train.momentum);
    s.bias_correction1 = static_cast<float>(1.0 - std::pow(train.beta1, static_cast<double>(step)));
    s.bias_correction2 = static_cast<float>(1.0 - std::pow(train.beta2, static_cast<double>(step)));
    if (train.optimizer == OptimizerKind::RAdam)
        s.radam_rect = static_cast<float>(radam_rectification(train.beta2, step));

    const ParamLayout& layout = m_model.layout();
    Backend& backend = m_model.backend();
    for (size_t i = 0; i < layout.entries.size(); ++i) {
        if (!m_model.active(static_cast<int>(i))) continue;
        const ParamEntry& entry = layout.entries[i];
        s.weight_decay = entry.role == ParamRole::Matrix ? static_cast<float>(train.weight_decay) : 0.0f;
        backend.optimizer_update(s, m_model.params() + entry.offset, m_model.grads() + entry.offset,
                                 m_first + entry.offset, m_second + entry.offset, m_update + entry.offset,
                                 entry.count);
    }
}

void Optimizer::reset_entries(const std::vector<int>& entries) {
    Backend& backend = m_model.backend();
    for (int index : entries) {
        const ParamEntry& entry = m_model.layout().entries[index];
        backend.fill(m_first + entry.offset, 0.0f, entry.count);
        backend.fill(m_second + entry.offset, 0.0f, entry.count);
        backend.fill(m_update + entry.offset, 0.0f, entry.count);
    }
}

void Optimizer::stage_move(BackendTransfer& transfer) {
    const size_t total = m_model.layout().total;
    transfer.copy(m_first, total);
    transfer.copy(m_second, total);
    transfer.copy(m_update, total);
}

}  // namespace normlab
