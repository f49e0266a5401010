// Trainer behaviour: bit-for-bit determinism, checkpoint round trip (50 + resume 50 = 100), live
// changes applied at the asked step, divergence as a result, and optimizer updates against formulas.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "engine/io/checkpoint.h"
#include "engine/train/trainer.h"

namespace normlab {
namespace {

Config tiny_config() {
    Config config;
    config.model.d_model = 16;
    config.model.heads = 2;
    config.model.d_ff = 32;
    config.model.layers = 2;
    config.model.seq_len = 16;
    config.train.batch_size = 4;
    config.train.steps = 100;
    config.train.lr = 3e-3;
    config.telemetry.val_every = 25;
    config.threads = 2;
    return config;
}

std::vector<double> losses(Trainer& trainer, int steps) {
    std::vector<double> out;
    for (int i = 0; i < steps && !trainer.finished(); ++i) out.push_back(trainer.step().record.loss);
    return out;
}

std::string temp_path(const std::string& name) {
    return (std::filesystem::temp_directory_path() /
            ("normlab_test_" + std::to_string(::getpid()) + "_" + name))
        .string();
}

TEST(Trainer, SameConfigSameLossCurveBitForBit) {
    Config config = tiny_config();
    config.model.norm_placement = NormPlacement::Post;
    Trainer first(config), second(config);
    const auto a = losses(first, 30);
    const auto b = losses(second, 30);
    ASSERT_EQ(a.size(), 30u);
    for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], b[i]) << "step " << i + 1;
    EXPECT_LT(a.back(), a.front()) << "the tiny model should learn something in 30 steps";
}

TEST(Trainer, CheckpointResumeContinuesExactly) {
    const Config config = tiny_config();
    Trainer straight(config);
    const auto reference = losses(straight, 100);

    Trainer first_half(config);
    const auto head = losses(first_half, 50);
    const std::string path = temp_path("resume.safetensors");
    save_checkpoint(first_half, path);
    auto resumed = load_checkpoint(path, {});
    EXPECT_EQ(resumed->steps_done(), 50);
    const auto tail = losses(*resumed, 50);
    std::filesystem::remove(path);
    ASSERT_EQ(tail.size(), 50u);
    for (int i = 0; i < 50; ++i) EXPECT_EQ(head[i], reference[i]) << "step " << i + 1;
    for (int i = 0; i < 50; ++i) EXPECT_EQ(tail[i], reference[50 + i]) << "step " << 51 + i;
    EXPECT_TRUE(resumed->finished());
}

TEST(Trainer, LiveChangeIsAppliedAtTheAskedStep) {
    Config config = tiny_config();
    config.model.norm_placement = NormPlacement::Pre;
    Trainer plain(config), changed(config);
    changed.post({"model.norm_placement", "peri", 6});
    changed.post({"train.lr", "1e-4", 6});
    const int out_gain = changed.model().layout().find("blocks.0.norm1_out.weight");
    ASSERT_GE(out_gain, 0);
    EXPECT_FALSE(changed.model().active(out_gain));
    for (int step = 1; step <= 8; ++step) {
        const StepOutcome expected = plain.step();
        const StepOutcome got = changed.step();
        if (step < 6) {
            EXPECT_EQ(got.record.loss, expected.record.loss) << "step " << step;
            EXPECT_TRUE(got.events.empty());
        } else if (step == 6) {
            ASSERT_EQ(got.events.size(), 2u);
            EXPECT_EQ(got.events[0].step, 6);
            EXPECT_EQ(got.events[0].key, "model.norm_placement");
            EXPECT_EQ(got.events[1].key, "train.lr");
            EXPECT_DOUBLE_EQ(got.record.lr, 1e-4);
            EXPECT_TRUE(changed.model().active(out_gain));
            // Peri-LN's new output norms start at gain 1 (the step's update moved them by at most lr)
            for (float g : changed.model().read_entry(out_gain)) EXPECT_NEAR(g, 1.0f, 2e-4f);
            EXPECT_NE(got.record.loss, expected.record.loss);
        }
    }
    EXPECT_EQ(changed.config().model.norm_placement, NormPlacement::Peri);
}

TEST(Trainer, BadLiveValueIsRejectedNotFatal) {
    Trainer trainer(tiny_config());
    trainer.post({"train.lr", "-1", -1});
    const StepOutcome outcome = trainer.step();
    ASSERT_EQ(outcome.events.size(), 1u);
    EXPECT_EQ(outcome.events[0].kind, "rejected_change");
    EXPECT_NE(outcome.events[0].message.find("train.lr"), std::string::npos);
    EXPECT_EQ(trainer.status(), RunStatus::Running);
}

TEST(Trainer, DivergenceIsAResultWithStepAndBlock) {
    Config config = tiny_config();
    config.model.norm_placement = NormPlacement::None;
    config.train.optimizer = OptimizerKind::Sgd;
    config.train.lr = 1e8;
    Trainer trainer(config);
    std::vector<Event> events;
    while (!trainer.finished()) {
        const auto outcome = trainer.step();
        events.insert(events.end(), outcome.events.begin(), outcome.events.end());
    }
    EXPECT_EQ(trainer.status(), RunStatus::Diverged);
    EXPECT_GT(trainer.diverged_at(), 1);
    EXPECT_LT(trainer.diverged_at(), 100);
    EXPECT_GE(trainer.first_bad_layer(), 0);
    ASSERT_FALSE(events.empty());
    EXPECT_EQ(events.back().kind, "diverged");
    EXPECT_EQ(events.back().step, trainer.diverged_at());
}

TEST(Trainer, TelemetryHasEveryBlockAndSensibleValues) {
    Config config = tiny_config();
    config.model.norm_placement = NormPlacement::Post;
    Trainer trainer(config);
    const StepOutcome outcome = trainer.step();
    ASSERT_TRUE(outcome.logged);
    ASSERT_EQ(outcome.record.layers.size(), 2u);
    for (const auto& layer : outcome.record.layers) {
        EXPECT_GT(layer.resid, 0.0);
        EXPECT_GT(layer.grad.w_qkv, 0.0);
        EXPECT_GT(layer.grad.w_2, 0.0);
        EXPECT_GT(layer.update_ratio, 0.0);
        EXPECT_LT(layer.update_ratio, 1.0);
        // causal attention over 16 positions: mean entropy between 0 and the uniform average
        EXPECT_GT(layer.attn_entropy, 0.0);
        EXPECT_LT(layer.attn_entropy, std::log(16.0));
    }
    EXPECT_GT(outcome.record.grad_norm, outcome.record.layers[0].grad.w_qkv);
    EXPECT_NEAR(outcome.record.loss, std::log(256.0), 1.0);
}

TEST(Trainer, ReinitialiseWithDeepNormBetaRedrawsOnlyV) {
    Config config = tiny_config();
    config.model.norm_placement = NormPlacement::Post;
    Trainer trainer(config);
    losses(trainer, 3);
    const int qkv = trainer.model().layout().find("blocks.1.attn.qkv.weight");
    const auto before = trainer.model().read_entry(qkv);
    trainer.apply({"reinit_deepnorm_beta", "", -1});
    const auto after = trainer.model().read_entry(qkv);
    const size_t third = before.size() / 3;
    for (size_t i = 0; i < 2 * third; ++i) ASSERT_EQ(before[i], after[i]) << "Q and K keep their values";
    double v_squares = 0.0;
    for (size_t i = 2 * third; i < after.size(); ++i) v_squares += after[i] * after[i];
    // Xavier normal scaled by beta = (8 * 2)^(-1/4) = 0.5: variance (1/d) * 0.25 per entry
    EXPECT_NEAR(v_squares / third, 0.25 / 16.0, 0.25 / 16.0 * 0.2);
}

}  // namespace
}  // namespace normlab
