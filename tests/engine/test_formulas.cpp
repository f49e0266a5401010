// Closed-form figures from theory.md: DeepNorm and Admin constants, warmup / Noam / inverse-sqrt
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

TEST(Formulas, LossSpikeDetectorFlagsOnlyOutliers) {
    LossSpikeDetector detector(10, 6.0);
    for (int i = 0; i < 30; ++i) EXPECT_EQ(detector.observe(2.0 + 0.01 * (i % 3)), 0.0) << i;
    EXPECT_GT(detector.observe(3.0), 6.0);
    EXPECT_EQ(detector.observe(2.01), 0.0);
}

}  // namespace
}  // namespace normlab
