// Optimizer: per-step host scalars (bias corrections, RAdam rectification) and one backend update over
// the active tensors, so inactive wiring (e.g. Peri-LN norms under Pre-LN) is neither moved nor decayed.
#include "engine/train/optimizer.h"

#include <algorithm>
#include <cmath>

#include "engine/model/parametrization.h"
#include "engine/train/schedule.h"

namespace normlab {

Optimizer::Optimizer(Model& model) : m_model(model) {
    const size_t total = model.layout().total;
    const size_t entries = model.layout().entries.size();
    m_active.reserve(entries);
    m_slices.reserve(entries);
    m_weight_decays.reserve(entries);
    m_param_squares.resize(entries);
    m_update_squares.resize(entries);
    m_first = model.backend().allocate(total);
    m_second = model.backend().allocate(total);
    m_update = model.backend().allocate(total);
}

Optimizer::~Optimizer() {
    m_model.backend().release(m_first);
    m_model.backend().release(m_second);
    m_model.backend().release(m_update);
}

void Optimizer::update(const TrainConfig& train, int64_t step, double lr, double grad_scale,
                       double* param_squares, double* update_squares) {
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
    const ModelConfig& model = m_model.config();
    m_active.clear();
    // The kernels decay AdamW's weights by lr_t x decay: `independent` makes that weight_decay x lr_t /
    // train.lr (validate() allows it for AdamW only; a zero peak lr makes no update to decay).
    const double decay = train.weight_decay_mode == WeightDecayMode::Independent && train.lr > 0.0
                             ? train.weight_decay / train.lr
                             : train.weight_decay;
    for (size_t i = 0; i < layout.entries.size(); ++i) {
        if (!m_model.active(static_cast<int>(i))) continue;
        const OptimizerMultipliers multipliers =
            optimizer_multipliers(model, train.optimizer, layout, static_cast<int>(i));
        const bool decayed = layout.entries[i].role == ParamRole::Matrix;
        m_active.push_back({multipliers.lr, static_cast<int>(i),
                            decayed ? static_cast<float>(decay * multipliers.weight_decay) : 0.0f});
    }
    // by multiplier, then layout order (std::sort allocates nothing; the pair is unique)
    std::sort(m_active.begin(), m_active.end(), [](const ActiveEntry& a, const ActiveEntry& b) {
        return a.lr_multiplier != b.lr_multiplier ? a.lr_multiplier < b.lr_multiplier : a.entry < b.entry;
    });
    const bool telemetry = param_squares && update_squares;
    for (size_t begin = 0; begin < m_active.size();) {
        size_t end = begin;
        m_slices.clear();
        m_weight_decays.clear();
        for (; end < m_active.size() && m_active[end].lr_multiplier == m_active[begin].lr_multiplier; ++end) {
            const ParamEntry& entry = layout.entries[static_cast<size_t>(m_active[end].entry)];
            m_slices.push_back({entry.offset, entry.count});
            m_weight_decays.push_back(m_active[end].weight_decay);
        }
        OptimizerStep group = s;
        group.lr = static_cast<float>(lr * m_active[begin].lr_multiplier);
        Backend::UpdateSquares squares;
        if (telemetry) squares = {m_param_squares.data() + begin, m_update_squares.data() + begin};
        m_model.backend().optimizer_update_slices(group, m_slices, m_weight_decays.data(), m_model.params(),
                                                  m_model.grads(), m_first, m_second, m_update, squares);
        begin = end;
    }
    if (!telemetry) return;
    std::fill(param_squares, param_squares + layout.entries.size(), 0.0);
    std::fill(update_squares, update_squares + layout.entries.size(), 0.0);
    for (size_t a = 0; a < m_active.size(); ++a) {
        param_squares[m_active[a].entry] = m_param_squares[a];
        update_squares[m_active[a].entry] = m_update_squares[a];
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
