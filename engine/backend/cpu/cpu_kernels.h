// Per-element maths shared by the reference and the fast CPU ops (activations, optimizer updates), so
// both paths compute the very same formula and differ only in how they split the work.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "engine/backend/backend.h"

namespace normlab {

inline constexpr float kInvSqrt2 = 0.70710678118654752f;
inline constexpr float kInvSqrt2Pi = 0.39894228040143268f;

// ReLU or exact-erf GELU. `kind` may be a std::integral_constant, so a loop over one kind vectorises.
template <class Kind>
inline float activation_value(Kind kind, float x) {
    return kind == Activation::Relu ? (x > 0.0f ? x : 0.0f) : 0.5f * x * (1.0f + std::erf(x * kInvSqrt2));
}

template <class Kind>
inline float activation_slope(Kind kind, float x) {
    if (kind == Activation::Relu) return x > 0.0f ? 1.0f : 0.0f;
    return 0.5f * (1.0f + std::erf(x * kInvSqrt2)) + x * kInvSqrt2Pi * std::exp(-0.5f * x * x);
}

// One parameter's optimizer update (SGD with momentum, Adam with L2 decay, AdamW, RAdam): advances the
// moments m and v and returns the change to add to the parameter. Kind, when given, must equal
// step.kind; as a compile-time constant it lets a loop over one optimizer vectorise.
template <OptimizerKind Kind>
inline float optimizer_delta(const OptimizerStep& step, float param, float grad, float& m, float& v) {
    constexpr bool decoupled = Kind == OptimizerKind::AdamW;
    const float g = grad * step.grad_scale + (decoupled ? 0.0f : step.weight_decay) * param;
    if constexpr (Kind == OptimizerKind::Sgd) {
        m = step.momentum * m + g;
        return -step.lr * m;
    }
    m = step.beta1 * m + (1.0f - step.beta1) * g;
    v = step.beta2 * v + (1.0f - step.beta2) * g * g;
    const float m_hat = m / step.bias_correction1;
    float delta;
    if (Kind == OptimizerKind::RAdam && step.radam_rect <= 0.0f) {
        delta = -step.lr * m_hat;
    } else {
        const float v_hat = v / step.bias_correction2;
        const float rect = Kind == OptimizerKind::RAdam ? step.radam_rect : 1.0f;
        delta = -step.lr * rect * m_hat / (std::sqrt(v_hat) + step.eps);
    }
    if (decoupled) delta -= step.lr * step.weight_decay * param;
    return delta;
}

inline float optimizer_delta(const OptimizerStep& step, float param, float grad, float& m, float& v) {
    switch (step.kind) {
        case OptimizerKind::Sgd:
            return optimizer_delta<OptimizerKind::Sgd>(step, param, grad, m, v);
        case OptimizerKind::AdamW:
            return optimizer_delta<OptimizerKind::AdamW>(step, param, grad, m, v);
        case OptimizerKind::RAdam:
            return optimizer_delta<OptimizerKind::RAdam>(step, param, grad, m, v);
        case OptimizerKind::Adam:
            break;
    }
    return optimizer_delta<OptimizerKind::Adam>(step, param, grad, m, v);
}

// One row of the embedding: out = token_row + position_row.
inline void embedding_row(float* out, const float* token_row, const float* position_row, int d) {
    for (int i = 0; i < d; ++i) out[i] = token_row[i] + position_row[i];
}

// One row of LayerNorm / RMSNorm / DyT: y = norm(x) with double accumulators; stats gets (mean, rstd).
inline void norm_forward_row(NormType type, float* out, float* stats, const float* in, const float* w,
                             const float* b, float dyt_alpha, int d, float eps) {
    if (type == NormType::DyT) {
        for (int i = 0; i < d; ++i) out[i] = w[i] * std::tanh(dyt_alpha * in[i]) + b[i];
        return;
    }
    double mean = 0.0;
    if (type == NormType::LayerNorm) {
        for (int i = 0; i < d; ++i) mean += in[i];
        mean /= d;
    }
    double second_moment = 0.0;
    for (int i = 0; i < d; ++i) second_moment += (in[i] - mean) * (in[i] - mean);
    const double rstd = 1.0 / std::sqrt(second_moment / d + eps);
    stats[0] = static_cast<float>(mean);
    stats[1] = static_cast<float>(rstd);
    for (int i = 0; i < d; ++i) {
        const float normalized = static_cast<float>((in[i] - mean) * rstd);
        out[i] = type == NormType::LayerNorm ? w[i] * normalized + b[i] : w[i] * normalized;
    }
}

// One row of a norm's backward pass: writes (or adds to) grad_in, adds the gain gradient to partial[0, d),
// the bias gradient to partial[d, 2d) when has_bias, and returns DyT's alpha-gradient term (else 0).
inline double norm_backward_row(NormType type, float* grad_in, double* partial, const float* grad_out,
                                const float* in, const float* stats, const float* w, float dyt_alpha, int d,
                                bool has_bias, bool accumulate) {
    if (type == NormType::DyT) {
        double alpha_sum = 0.0;
        for (int i = 0; i < d; ++i) {
            const float t = std::tanh(dyt_alpha * in[i]);
            partial[i] += grad_out[i] * t;
            if (has_bias) partial[d + i] += grad_out[i];
            const float dpre = grad_out[i] * w[i] * (1.0f - t * t);
            alpha_sum += static_cast<double>(dpre) * in[i];
            const float value = dpre * dyt_alpha;
            grad_in[i] = accumulate ? grad_in[i] + value : value;
        }
        return alpha_sum;
    }
    const double mean = stats[0];
    const double rstd = stats[1];
    double mean_dxhat = 0.0;
    double mean_dxhat_xhat = 0.0;
    for (int i = 0; i < d; ++i) {
        const double xhat = (in[i] - mean) * rstd;
        const double dxhat = static_cast<double>(grad_out[i]) * w[i];
        partial[i] += grad_out[i] * xhat;
        if (has_bias) partial[d + i] += grad_out[i];
        mean_dxhat += dxhat;
        mean_dxhat_xhat += dxhat * xhat;
    }
    mean_dxhat = type == NormType::LayerNorm ? mean_dxhat / d : 0.0;
    mean_dxhat_xhat /= d;
    for (int i = 0; i < d; ++i) {
        const double xhat = (in[i] - mean) * rstd;
        const double dxhat = static_cast<double>(grad_out[i]) * w[i];
        const float value = static_cast<float>(rstd * (dxhat - mean_dxhat - xhat * mean_dxhat_xhat));
        grad_in[i] = accumulate ? grad_in[i] + value : value;
    }
    return 0.0;
}

// One row of softmax cross-entropy (target >= 0): returns the loss, sets `correct` when the argmax is
// the target, and writes (softmax - onehot) * inverse_scored to grad when it is not null.
inline double cross_entropy_row(float* grad, const float* in, int target, int vocab, float inverse_scored,
                                bool& correct) {
    int best = 0;
    for (int j = 1; j < vocab; ++j) best = in[j] > in[best] ? j : best;
    const float row_max = in[best];
    double total = 0.0;
    for (int j = 0; j < vocab; ++j) total += std::exp(static_cast<double>(in[j] - row_max));
    const double log_total = std::log(total);
    const double loss = log_total - (in[target] - row_max);
    correct = best == target;
    if (grad) {
        for (int j = 0; j < vocab; ++j) {
            const float probability = static_cast<float>(std::exp(in[j] - row_max - log_total));
            grad[j] = (probability - (j == target ? 1.0f : 0.0f)) * inverse_scored;
        }
    }
    return loss;
}

}  // namespace normlab
