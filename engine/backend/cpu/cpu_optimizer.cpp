// Optimizer updates on the CPU: SGD with momentum, Adam (L2 decay), AdamW (decoupled decay) and RAdam.
// The update is written to `update` (for the update/parameter telemetry) and then added to the parameter.
#include <cmath>

#include "engine/backend/cpu/cpu_backend.h"

namespace normlab {

void CpuBackend::optimizer_update(const OptimizerStep& step, float* param, const float* grad, float* m,
                                  float* v, float* update, size_t count) {
    const bool decoupled = step.kind == OptimizerKind::AdamW;
    const float l2 = decoupled ? 0.0f : step.weight_decay;
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < count; ++i) {
        const float g = grad[i] * step.grad_scale + l2 * param[i];
        float delta;
        if (step.kind == OptimizerKind::Sgd) {
            m[i] = step.momentum * m[i] + g;
            delta = -step.lr * m[i];
        } else {
            m[i] = step.beta1 * m[i] + (1.0f - step.beta1) * g;
            v[i] = step.beta2 * v[i] + (1.0f - step.beta2) * g * g;
            const float m_hat = m[i] / step.bias_correction1;
            if (step.kind == OptimizerKind::RAdam && step.radam_rect <= 0.0f) {
                delta = -step.lr * m_hat;
            } else {
                const float v_hat = v[i] / step.bias_correction2;
                const float rect = step.kind == OptimizerKind::RAdam ? step.radam_rect : 1.0f;
                delta = -step.lr * rect * m_hat / (std::sqrt(v_hat) + step.eps);
            }
            if (decoupled) delta -= step.lr * step.weight_decay * param[i];
        }
        update[i] = delta;
        param[i] += delta;
    }
}

}  // namespace normlab
