// Closed-form figures from docs/science.md: DeepNorm and Admin constants, warmup / Noam / inverse-sqrt
// schedules, RAdam's rectification, and single optimizer steps against their update rules.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/model/constants.h"
#include "engine/train/loss_spikes.h"
#include "engine/train/schedule.h"

namespace normlab {
namespace {

TEST(Formulas, DeepNormConstantsMatchTheWorkedValues) {
    EXPECT_NEAR(deepnorm_alpha(6), 1.861, 1e-3);
    EXPECT_NEAR(deepnorm_beta(6), 0.380, 1e-3);
    EXPECT_NEAR(deepnorm_alpha(12), 2.213, 1e-3);
    EXPECT_NEAR(deepnorm_beta(12), 0.320, 1e-3);
    EXPECT_NEAR(deepnorm_alpha(100), 3.761, 1e-3);
    EXPECT_NEAR(deepnorm_beta(100), 0.188, 1e-3);
    ModelConfig model;
    model.layers = 6;
    model.deepnorm_alpha = 1.5;
    EXPECT_DOUBLE_EQ(effective_deepnorm_alpha(model), 1.5);
    EXPECT_NEAR(effective_deepnorm_beta(model), 0.380, 1e-3);
}

TEST(Formulas, AdminClosedFormOmega) {
    EXPECT_NEAR(admin_closed_omega(12), 2.017, 1e-3);
    EXPECT_NEAR(admin_closed_omega(24), 2.601, 1e-3);
}

TEST(Formulas, LinearWarmupThenSchedules) {
    TrainConfig train;
    train.lr = 1e-3;
    train.warmup_steps = 100;
    train.steps = 1100;
    EXPECT_DOUBLE_EQ(learning_rate(train, 64, 1), 1e-5);
    EXPECT_DOUBLE_EQ(learning_rate(train, 64, 50), 5e-4);
    EXPECT_DOUBLE_EQ(learning_rate(train, 64, 100), 1e-3);
    EXPECT_DOUBLE_EQ(learning_rate(train, 64, 700), 1e-3);
    train.schedule = ScheduleKind::Linear;
    EXPECT_NEAR(learning_rate(train, 64, 600), 0.5e-3, 1e-12);
    EXPECT_NEAR(learning_rate(train, 64, 1100), 0.0, 1e-12);
    train.schedule = ScheduleKind::Cosine;
    EXPECT_NEAR(learning_rate(train, 64, 600), 0.5e-3, 1e-12);
    train.schedule = ScheduleKind::InverseSqrt;
    EXPECT_NEAR(learning_rate(train, 64, 400), 1e-3 * std::sqrt(100.0 / 400.0), 1e-12);
}

TEST(Formulas, NoamPeaksAtWarmup) {
    TrainConfig train;
    train.schedule = ScheduleKind::Noam;
    train.lr = 1.0;
    train.warmup_steps = 400;
    const double peak = std::pow(512.0, -0.5) * std::pow(400.0, -0.5);
    EXPECT_NEAR(learning_rate(train, 512, 400), peak, 1e-12);
    EXPECT_LT(learning_rate(train, 512, 399), peak);
    EXPECT_LT(learning_rate(train, 512, 401), peak);
    EXPECT_NEAR(learning_rate(train, 512, 1600), std::pow(512.0, -0.5) / 40.0, 1e-12);
}

TEST(Formulas, RAdamRectification) {
    const double beta2 = 0.999;
    EXPECT_EQ(radam_rectification(beta2, 1), 0.0);  // rho_1 = 1 <= 4: momentum step
    EXPECT_EQ(radam_rectification(beta2, 4), 0.0);
    const int t = 100;
    const double rho_inf = 2.0 / (1.0 - beta2) - 1.0;
    const double rho_t = rho_inf - 2.0 * t * std::pow(beta2, t) / (1.0 - std::pow(beta2, t));
    const double expected =
        std::sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t));
    EXPECT_NEAR(radam_rectification(beta2, t), expected, 1e-12);
    EXPECT_NEAR(radam_rectification(beta2, 1000000), 1.0, 1e-3);
}

TEST(Formulas, OptimizerStepsFollowTheirRules) {
    CpuBackend backend(1);
    float param = 2.0f, grad = 0.5f, m = 0.0f, v = 0.0f, update = 0.0f;
    OptimizerStep step;
    step.lr = 0.1f;
    step.beta1 = 0.9f;
    step.beta2 = 0.98f;
    step.eps = 1e-8f;
    step.bias_correction1 = 1.0f - 0.9f;
    step.bias_correction2 = 1.0f - 0.98f;
    backend.optimizer_update(step, &param, &grad, &m, &v, &update, 1);
    EXPECT_NEAR(update, -0.1f, 1e-6f);  // Adam's first step is -lr * sign(g)
    EXPECT_NEAR(param, 1.9f, 1e-6f);

    param = 2.0f, m = 0.0f, v = 0.0f;
    step.kind = OptimizerKind::AdamW;
    step.weight_decay = 0.5f;
    backend.optimizer_update(step, &param, &grad, &m, &v, &update, 1);
    EXPECT_NEAR(update, -0.1f - 0.1f * 0.5f * 2.0f, 1e-6f);

    param = 2.0f, m = 1.0f;
    step.kind = OptimizerKind::Sgd;
    step.weight_decay = 0.0f;
    step.momentum = 0.9f;
    backend.optimizer_update(step, &param, &grad, &m, &v, &update, 1);
    EXPECT_NEAR(m, 0.9f + 0.5f, 1e-6f);
    EXPECT_NEAR(update, -0.1f * 1.4f, 1e-6f);

    param = 2.0f, m = 0.0f, v = 0.0f;
    step.kind = OptimizerKind::RAdam;
    step.radam_rect = 0.0f;  // untractable variance: plain momentum step with bias-corrected m
    backend.optimizer_update(step, &param, &grad, &m, &v, &update, 1);
    EXPECT_NEAR(update, -0.1f * 0.5f, 1e-6f);
}

// Double-precision reference of one Adam-family step on a single parameter.
struct AdamReference {
    double param, m = 0.0, v = 0.0;
    double step(OptimizerKind kind, double grad, int t, double lr, double beta1, double beta2, double eps,
                double weight_decay, double rect = 1.0) {
        const double g = kind == OptimizerKind::AdamW ? grad : grad + weight_decay * param;
        m = beta1 * m + (1.0 - beta1) * g;
        v = beta2 * v + (1.0 - beta2) * g * g;
        const double m_hat = m / (1.0 - std::pow(beta1, t));
        const double v_hat = v / (1.0 - std::pow(beta2, t));
        double delta = -lr * rect * m_hat / (std::sqrt(v_hat) + eps);
        if (kind == OptimizerKind::AdamW) delta -= lr * weight_decay * param;
        param += delta;
        return delta;
    }
};

TEST(Formulas, AdamL2DecayGoesThroughTheMomentsAdamWDecaysTheWeightDirectly) {
    CpuBackend backend(1);
    const double lr = 0.1, beta1 = 0.9, beta2 = 0.98, eps = 1e-8, decay = 0.3;
    const double grads[] = {0.5, -0.2, 0.05};
    double final_param[2] = {0.0, 0.0};
    for (OptimizerKind kind : {OptimizerKind::Adam, OptimizerKind::AdamW}) {
        AdamReference reference{2.0};
        float param = 2.0f, m = 0.0f, v = 0.0f, update = 0.0f;
        for (int t = 1; t <= 3; ++t) {
            OptimizerStep step;
            step.kind = kind;
            step.lr = static_cast<float>(lr);
            step.beta1 = static_cast<float>(beta1);
            step.beta2 = static_cast<float>(beta2);
            step.eps = static_cast<float>(eps);
            step.weight_decay = static_cast<float>(decay);
            step.bias_correction1 = static_cast<float>(1.0 - std::pow(beta1, t));
            step.bias_correction2 = static_cast<float>(1.0 - std::pow(beta2, t));
            float grad = static_cast<float>(grads[t - 1]);
            const double expected = reference.step(kind, grads[t - 1], t, lr, beta1, beta2, eps, decay);
            backend.optimizer_update(step, &param, &grad, &m, &v, &update, 1);
            EXPECT_NEAR(update, expected, 1e-6) << to_string(kind) << " step " << t;
            EXPECT_NEAR(m, reference.m, 1e-6) << to_string(kind) << " step " << t;
            EXPECT_NEAR(v, reference.v, 1e-7) << to_string(kind) << " step " << t;
        }
        final_param[kind == OptimizerKind::AdamW] = param;
    }
    // The first step alone shows the difference: Adam's L2 term enters m (0.1 * (0.5 + 0.3 * 2) = 0.11)
    // and is normalised away (update -lr), AdamW adds -lr * decay * param = -0.06 on top.
    EXPECT_GT(std::fabs(final_param[0] - final_param[1]), 0.05);
}

TEST(Formulas, RAdamStepOnceTheRectificationIsActive) {
    CpuBackend backend(1);
    const double lr = 0.01, beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
    EXPECT_EQ(radam_rectification(beta2, 4), 0.0) << "rho_4 <= 4: still a momentum step";
    EXPECT_GT(radam_rectification(beta2, 5), 0.0) << "rho_5 > 4: rectified adaptive steps from here";
    AdamReference reference{1.5};
    float param = 1.5f, m = 0.0f, v = 0.0f, update = 0.0f;
    for (int t = 1; t <= 12; ++t) {
        const double grad = 0.3 * std::cos(t);
        const double rect = radam_rectification(beta2, t);
        OptimizerStep step;
        step.kind = OptimizerKind::RAdam;
        step.lr = static_cast<float>(lr);
        step.beta1 = static_cast<float>(beta1);
        step.beta2 = static_cast<float>(beta2);
        step.eps = static_cast<float>(eps);
        step.bias_correction1 = static_cast<float>(1.0 - std::pow(beta1, t));
        step.bias_correction2 = static_cast<float>(1.0 - std::pow(beta2, t));
        step.radam_rect = static_cast<float>(rect);
        float g = static_cast<float>(grad);
        backend.optimizer_update(step, &param, &g, &m, &v, &update, 1);
        double expected;
        if (rect > 0.0) {
            expected = reference.step(OptimizerKind::RAdam, grad, t, lr, beta1, beta2, eps, 0.0, rect);
        } else {
            reference.step(OptimizerKind::RAdam, grad, t, 0.0, beta1, beta2, eps, 0.0);  // moments only
            expected = -lr * reference.m / (1.0 - std::pow(beta1, t));
            reference.param += expected;
        }
        EXPECT_NEAR(update, expected, 1e-7) << "step " << t << " rect " << rect;
        EXPECT_NEAR(param, reference.param, 1e-6) << "step " << t;
    }
    const double rect12 = radam_rectification(beta2, 12);
    EXPECT_GT(rect12, 0.0);
    EXPECT_LT(rect12, 0.2) << "early rectification damps the adaptive step";
}

TEST(Formulas, LossSpikeDetectorFlagsOnlyOutliers) {
    LossSpikeDetector detector(10, 6.0);
    for (int i = 0; i < 30; ++i) EXPECT_EQ(detector.observe(2.0 + 0.01 * (i % 3)), 0.0) << i;
    EXPECT_GT(detector.observe(3.0), 6.0);
    EXPECT_EQ(detector.observe(2.01), 0.0);
}

}  // namespace
}  // namespace normlab
