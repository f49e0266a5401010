// Per-element maths shared by every backend: activations, optimizer updates, and the element terms of
// the norms and of softmax cross-entropy. The CPU ops (cpu_kernels.h) and the CUDA kernels call these
// very functions, so both evaluate the same formula and differ only in how they split the work.
#pragma once
#include <cmath>

#include "engine/backend/backend.h"
#include "engine/core/host_device.h"

namespace normlab {

inline constexpr float kInvSqrt2 = 0.70710678118654752f;
inline constexpr float kInvSqrt2Pi = 0.39894228040143268f;

inline constexpr float kSqrt2OverPi = 0.79788456080286536f;
inline constexpr float kGeluTanhCubic = 0.044715f;

// ReLU, exact-erf GELU, or GPT-2's tanh approximation 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
// (PyTorch's gelu(approximate="tanh"), Hugging Face's gelu_new). `kind` may be a
// std::integral_constant, so a loop over one kind vectorises.
template <class Kind>
NORMLAB_HOST_DEVICE inline float activation_value(Kind kind, float x) {
    if (kind == Activation::Relu) return x > 0.0f ? x : 0.0f;
    if (kind == Activation::GeluTanh)
        return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * (x + kGeluTanhCubic * x * x * x)));
    return 0.5f * x * (1.0f + std::erf(x * kInvSqrt2));
}

template <class Kind>
NORMLAB_HOST_DEVICE inline float activation_slope(Kind kind, float x) {
    if (kind == Activation::Relu) return x > 0.0f ? 1.0f : 0.0f;
    if (kind == Activation::GeluTanh) {
        const float t = std::tanh(kSqrt2OverPi * (x + kGeluTanhCubic * x * x * x));
        return 0.5f * (1.0f + t) +
               0.5f * x * (1.0f - t * t) * kSqrt2OverPi * (1.0f + 3.0f * kGeluTanhCubic * x * x);
    }
    return 0.5f * (1.0f + std::erf(x * kInvSqrt2)) + x * kInvSqrt2Pi * std::exp(-0.5f * x * x);
}

// The gated FFN's activation of the gate: SiLU g sigmoid(g) for SwiGLU, exact-erf GELU for GeGLU.
NORMLAB_HOST_DEVICE inline float gate_value(FeedForward kind, float g) {
    if (kind == FeedForward::GeGlu) return activation_value(Activation::Gelu, g);
    return g / (1.0f + std::exp(-g));
}

NORMLAB_HOST_DEVICE inline float gate_slope(FeedForward kind, float g) {
    if (kind == FeedForward::GeGlu) return activation_slope(Activation::Gelu, g);
    const float sigmoid = 1.0f / (1.0f + std::exp(-g));
    return sigmoid * (1.0f + g * (1.0f - sigmoid));
}

// One element of the gated product's backward: dgate and dup from dh (read before either is written,
// so dup may alias dh).
NORMLAB_HOST_DEVICE inline void gated_grads(FeedForward kind, float dh, float g, float u, float& dgate,
                                            float& dup) {
    dgate = dh * u * gate_slope(kind, g);
    dup = dh * gate_value(kind, g);
}

// RoPE's angle for dimension pair i (< head_dim / 2) at `position`, in double: theta^(-2i / head_dim) x
// position, negated for the inverse turn.
NORMLAB_HOST_DEVICE inline double rope_angle(int position, int pair, int head_dim, float theta,
                                             bool inverse) {
    const double angle =
        position * std::pow(static_cast<double>(theta), -2.0 * pair / static_cast<double>(head_dim));
    return inverse ? -angle : angle;
}

// Turns the pair (x[pair], x[pair + half]) of one head vector by `angle` (rotate_half's pairing).
NORMLAB_HOST_DEVICE inline void rope_turn(float* head, int pair, int half, double angle) {
    const double c = std::cos(angle), s = std::sin(angle);
    const double a = head[pair], b = head[pair + half];
    head[pair] = static_cast<float>(a * c - b * s);
    head[pair + half] = static_cast<float>(b * c + a * s);
}

// One parameter's optimizer update (SGD with momentum, Adam with L2 decay, AdamW, RAdam): advances the
// moments m and v and returns the change to add to the parameter. Kind, when given, must equal
// step.kind; as a compile-time constant it lets a loop over one optimizer vectorise.
template <OptimizerKind Kind>
NORMLAB_HOST_DEVICE inline float optimizer_delta(const OptimizerStep& step, float param, float grad, float& m,
                                                 float& v) {
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

NORMLAB_HOST_DEVICE inline float optimizer_delta(const OptimizerStep& step, float param, float grad, float& m,
                                                 float& v) {
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

// DyT's output for one element: w tanh(alpha x) + b.
NORMLAB_HOST_DEVICE inline float dyt_value(float x, float w, float b, float alpha) {
    return w * std::tanh(alpha * x) + b;
}

// LayerNorm's or RMSNorm's output for one element from the row's mean (0 for RMSNorm) and rstd.
NORMLAB_HOST_DEVICE inline float norm_value(NormType type, float x, double mean, double rstd, float w,
                                            float b) {
    const float normalized = static_cast<float>((x - mean) * rstd);
    return type == NormType::LayerNorm ? w * normalized + b : w * normalized;
}

// LayerNorm's or RMSNorm's input gradient for one element, from the row means of dxhat (0 for
// RMSNorm) and of dxhat * xhat.
NORMLAB_HOST_DEVICE inline float norm_input_grad(double rstd, double dxhat, double xhat, double mean_dxhat,
                                                 double mean_dxhat_xhat) {
    return static_cast<float>(rstd * (dxhat - mean_dxhat - xhat * mean_dxhat_xhat));
}
// The same in float arithmetic (the CPU ops: twice the elements per vector step; the row means still
// come from double sums).
NORMLAB_HOST_DEVICE inline float norm_input_grad(float rstd, float dxhat, float xhat, float mean_dxhat,
                                                 float mean_dxhat_xhat) {
    return rstd * (dxhat - mean_dxhat - xhat * mean_dxhat_xhat);
}

// DyT's backward for one element: the gradient before the gain's tanh slope is applied
// (dpre = dy w (1 - t^2), t = tanh(alpha x)); the input gradient is dpre alpha, alpha's term dpre x.
NORMLAB_HOST_DEVICE inline float dyt_pre_grad(float grad_out, float w, float t) {
    return grad_out * w * (1.0f - t * t);
}

// Feature norms (BatchNorm, PowerNorm) per feature c, once a pass has its column sums
// (docs/model.md#batchnorm-and-powernorm). Whether the forward pass needs the batch's statistics: its mean
// and centred variance (BatchNorm, to normalise), or its quadratic mean (PowerNorm, to move psi^2).
NORMLAB_HOST_DEVICE inline bool needs_batch_statistics(NormType type, FeatureStatistics mode) {
    if (type == NormType::BatchNorm) return mode != FeatureStatistics::Running;
    return mode == FeatureStatistics::BatchUpdating;
}

// A running statistic moved the momentum's fraction of the way to the batch's.
NORMLAB_HOST_DEVICE inline float moved_towards(float running, double batch, float momentum) {
    return static_cast<float>(running + momentum * (batch - running));
}

// The forward pass's statistics of feature c into state.mean / state.rstd, from the batch's mean and
// variance (BatchNorm: centred, biased; PowerNorm: the quadratic mean), read only where
// needs_batch_statistics; then, updating, the running ones moved (BatchNorm's variance unbiased, n / (n -
// 1), as PyTorch's). PowerNorm normalises with psi^2 as it was before this step (Algorithm 1).
NORMLAB_HOST_DEVICE inline void feature_forward_column(NormType type, const FeatureNormState& state,
                                                       FeatureStatistics mode, int c, double batch_mean,
                                                       double batch_var, int n) {
    const bool batch_norm = type == NormType::BatchNorm;
    const bool running = mode == FeatureStatistics::Running || !batch_norm;
    const double mean = batch_norm ? (running ? state.running_mean[c] : batch_mean) : 0.0;
    const double var = running ? state.running_var[c] : batch_var;
    state.mean[c] = static_cast<float>(mean);
    state.rstd[c] = static_cast<float>(1.0 / std::sqrt(var + state.eps));
    if (mode != FeatureStatistics::BatchUpdating) return;
    if (batch_norm) {
        state.running_mean[c] = moved_towards(state.running_mean[c], batch_mean, state.momentum);
        const double unbiased = n > 1 ? batch_var * n / (n - 1) : batch_var;
        state.running_var[c] = moved_towards(state.running_var[c], unbiased, state.momentum);
    } else {
        state.running_var[c] = moved_towards(state.running_var[c], batch_var, state.momentum);
    }
}

// The backward pass's per-feature terms of dx = rstd (w dy - shift - xhat slope) (norm_input_grad) from
// the column sums of dy, dy xhat and xhat^2 over the n rows: BatchNorm on batch statistics, shift =
// mean g and slope = mean g xhat (g = w dy); PowerNorm, slope = nu, and updating, nu moved to nu (1 - m
// Gamma) + m Lambda, Gamma = mean xhat^2, Lambda = mean (g - nu xhat) xhat; running statistics, 0 and 0.
NORMLAB_HOST_DEVICE inline void feature_backward_column(NormType type, const FeatureNormState& state,
                                                        FeatureStatistics mode, int c, float w, double sum_dy,
                                                        double sum_dy_xhat, double sum_xhat2, int n,
                                                        float& shift, float& slope) {
    shift = 0.0f;
    slope = 0.0f;
    if (mode == FeatureStatistics::Running) return;
    const double mean_g_xhat = w * sum_dy_xhat / n;
    if (type == NormType::BatchNorm) {
        shift = static_cast<float>(w * sum_dy / n);
        slope = static_cast<float>(mean_g_xhat);
        return;
    }
    const float nu = state.nu[c];
    slope = nu;
    if (mode != FeatureStatistics::BatchUpdating) return;
    const double gamma = sum_xhat2 / n;
    const double lambda = mean_g_xhat - nu * gamma;
    state.nu[c] = static_cast<float>(nu * (1.0 - state.momentum * gamma) + state.momentum * lambda);
}

// Softmax cross-entropy's gradient for one logit, with z-loss's: (softmax * softmax_scale - onehot) *
// inverse_scored, where softmax_scale = 1 + 2 z_loss log Z (d/dlogit of z_loss (log Z)^2 is
// 2 z_loss log Z softmax; 1 without z-loss).
NORMLAB_HOST_DEVICE inline float cross_entropy_grad(float logit, float row_max, double log_total,
                                                    bool is_target, float inverse_scored,
                                                    float softmax_scale) {
    const float probability = static_cast<float>(std::exp(logit - row_max - log_total));
    return (probability * softmax_scale - (is_target ? 1.0f : 0.0f)) * inverse_scored;
}

// z-loss's factor on a row's softmax in the gradient (see cross_entropy_grad).
NORMLAB_HOST_DEVICE inline float z_loss_softmax_scale(float z_loss, double log_z) {
    return static_cast<float>(1.0 + 2.0 * static_cast<double>(z_loss) * log_z);
}

}  // namespace normlab
