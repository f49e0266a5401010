// Trainer behaviour: bit-for-bit determinism, checkpoint round trips (50 + resume 50 = 100, RAdam with a
// live warmup), live changes applied at the asked step or rejected as events, divergence as a result
// (from the loss or from the gradients alone), telemetry cadence, the memory check and the summary.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <tuple>

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/core/errors.h"
#include "engine/io/checkpoint.h"
#include "engine/io/records_json.h"
#include "engine/io/safetensors.h"
#include "engine/train/optimizer.h"
#include "engine/train/trainer.h"
#include "tests/engine/model_test_support.h"
#include "tests/support/temp_folder.h"

namespace normlab {
namespace {

Config tiny_config() {
    Config config = testing::small_model_config(16, 2, 16, 4, 100);
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
    const testing::TestFolder folder;
    const std::string path = folder / "resume.safetensors";
    save_checkpoint(first_half, path);
    auto resumed = load_checkpoint(path, {});
    EXPECT_EQ(resumed->steps_done(), 50);
    const auto tail = losses(*resumed, 50);
    ASSERT_EQ(tail.size(), 50u);
    for (int i = 0; i < 50; ++i) EXPECT_EQ(head[i], reference[i]) << "step " << i + 1;
    for (int i = 0; i < 50; ++i) EXPECT_EQ(tail[i], reference[50 + i]) << "step " << 51 + i;
    EXPECT_TRUE(resumed->finished());
}

// A checkpoint keeps the trailing losses loss-spike detection looks back on: the resumed run judges its
// first steps against them as the straight run does (a fork once missed a spike at its first step),
// with the same spike events after the resume.
TEST(Trainer, ResumeKeepsTheLossesSpikeDetectionLooksBackOn) {
    Config config = tiny_config();
    config.telemetry.spike_window = 8;
    config.telemetry.spike_z = 0.5;  // low: the tiny run's ordinary wobbles count, so there are events
    Trainer straight(config);
    std::vector<std::string> straight_spikes;
    for (int i = 0; i < 60; ++i)
        for (const Event& event : straight.step().events)
            if (event.kind == "loss_spike" && event.step > 30) straight_spikes.push_back(event.message);
    Trainer first_half(config);
    for (int i = 0; i < 30; ++i) first_half.step();
    const testing::TestFolder folder;
    const std::string path = folder / "spikes.safetensors";
    save_checkpoint(first_half, path);
    auto resumed = load_checkpoint(path, {});
    EXPECT_EQ(resumed->loss_spikes().recent(), first_half.loss_spikes().recent());
    EXPECT_EQ(resumed->loss_spikes().recent().size(), 8u);
    std::vector<std::string> resumed_spikes;
    for (int i = 0; i < 30; ++i)
        for (const Event& event : resumed->step().events)
            if (event.kind == "loss_spike") resumed_spikes.push_back(event.message);
    EXPECT_FALSE(straight_spikes.empty());
    EXPECT_EQ(resumed_spikes, straight_spikes);
}

// The share of a block's coordinates with sqrt(v) < eps, counted here from the downloaded second moment:
// the record's at 1 and 2 threads, strictly between 0 and 1 at this eps, absent under SGD.
TEST(Trainer, AdamEpsFractionIsTheShareOfSecondMomentsBelowEpsSquared) {
    for (const int threads : {1, 2}) {
        Config config = tiny_config();
        config.threads = threads;
        config.train.eps = 3e-4;
        Trainer trainer(config);
        for (int i = 0; i < 2; ++i) trainer.step();
        const StepRecord record = trainer.step().record;
        ASSERT_FALSE(record.layers.empty());
        const ParamLayout& layout = trainer.model().layout();
        std::vector<float> v(layout.total);
        trainer.model().backend().download(v.data(), trainer.optimizer().second_moment(), v.size());
        for (size_t b = 0; b < record.layers.size(); ++b) {
            double below = 0.0, count = 0.0;
            for (size_t i = 0; i < layout.entries.size(); ++i) {
                const ParamEntry& entry = layout.entries[i];
                if (entry.block != static_cast<int>(b) || !trainer.model().active(static_cast<int>(i)))
                    continue;
                for (size_t j = 0; j < entry.count; ++j) below += std::sqrt(v[entry.offset + j]) < 3e-4f;
                count += static_cast<double>(entry.count);
            }
            // sqrt(v) < eps here, v < eps^2 in the engine: a value on the boundary may round either way
            EXPECT_NEAR(record.layers[b].adam_eps_fraction, below / count, 1.5 / count) << "block " << b;
            EXPECT_GT(record.layers[b].adam_eps_fraction, 0.0);
            EXPECT_LT(record.layers[b].adam_eps_fraction, 1.0);
        }
    }
    Config sgd = tiny_config();
    sgd.train.optimizer = OptimizerKind::Sgd;
    Trainer trainer(sgd);
    EXPECT_FALSE(recorded(trainer.step().record.layers.at(0).adam_eps_fraction));
}

// Adam's epsilon and beta2 are live: set before step 3 they give exactly the run that had them from step
// 3 on, i.e. the moments carry on and only the next updates change; a large eps damps those updates.
TEST(Trainer, AdamEpsAndBeta2ChangeLiveWithTheMomentsKept) {
    Config config = tiny_config();
    Trainer plain(config), changed(config);
    changed.post({"train.eps", "10", 3});
    changed.post({"train.beta2", "0.9", 3});
    for (int step = 1; step <= 2; ++step) EXPECT_EQ(changed.step().record.loss, plain.step().record.loss);
    const int weight = changed.model().layout().find("blocks.0.ffn.fc1.weight");
    const std::vector<float> before = changed.model().read_entry(weight);
    const StepOutcome outcome = changed.step();
    ASSERT_EQ(outcome.events.size(), 2u);
    EXPECT_EQ(outcome.events[0].kind, "change");
    EXPECT_EQ(changed.config().train.eps, 10.0);
    EXPECT_EQ(changed.config().train.beta2, 0.9);
    const std::vector<float> plain_before = plain.model().read_entry(weight);
    plain.step();
    double damped = 0.0, undamped = 0.0;
    const std::vector<float> after = changed.model().read_entry(weight),
                             plain_after = plain.model().read_entry(weight);
    for (size_t i = 0; i < after.size(); ++i) {
        damped = std::max(damped, std::fabs(double(after[i]) - before[i]));
        undamped = std::max(undamped, std::fabs(double(plain_after[i]) - plain_before[i]));
    }
    EXPECT_LT(damped, undamped / 10);  // sqrt(v-hat) of these gradients is far below 10
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
    StepRecord last;
    while (!trainer.finished()) {
        const auto outcome = trainer.step();
        events.insert(events.end(), outcome.events.begin(), outcome.events.end());
        last = outcome.record;
    }
    EXPECT_EQ(trainer.status(), RunStatus::Diverged);
    EXPECT_GT(trainer.diverged_at(), 1);
    EXPECT_LT(trainer.diverged_at(), 100);
    EXPECT_GE(trainer.first_bad_layer(), 0);
    ASSERT_FALSE(events.empty());
    EXPECT_EQ(events.back().kind, "diverged");
    EXPECT_EQ(events.back().step, trainer.diverged_at());
    // The diverging step's record carries every block, and the first bad block's values are not finite.
    ASSERT_EQ(last.step, trainer.diverged_at());
    ASSERT_EQ(static_cast<int>(last.layers.size()), config.model.layers);
    const LayerTelemetry& bad = last.layers[std::min(trainer.first_bad_layer(), config.model.layers - 1)];
    EXPECT_TRUE(!std::isfinite(bad.resid) || !std::isfinite(bad.grad.w_2) || !std::isfinite(bad.grad.w_qkv));
}

// train.diverge_loss: a loss above diverge_loss x max(ln vocabulary, first loss) ends the run as
// diverged, with the bound in the event; 0 leaves only non-finite values to end it (later).
TEST(Trainer, LossAboveTheBoundEndsTheRunEarlierThanNonFiniteValues) {
    Config config = tiny_config();
    config.model.norm_placement = NormPlacement::None;
    config.train.optimizer = OptimizerKind::Sgd;
    config.train.lr = 50.0;
    config.train.steps = 200;
    const auto run = [](Config c) {
        Trainer trainer(c);
        std::vector<Event> events;
        double first = 0.0, last = 0.0;
        while (!trainer.finished()) {
            const StepOutcome& outcome = trainer.step();
            if (outcome.record.step == 1) first = outcome.record.loss;
            last = outcome.record.loss;
            events.insert(events.end(), outcome.events.begin(), outcome.events.end());
        }
        return std::tuple{trainer.status(), trainer.diverged_at(), first, last, events};
    };
    const auto [status, at, first, last, events] = run(config);
    ASSERT_EQ(status, RunStatus::Diverged);
    const double bound = 3.0 * std::max(std::log(256.0), first);
    EXPECT_GT(last, bound);
    EXPECT_TRUE(std::isfinite(last));
    ASSERT_FALSE(events.empty());
    EXPECT_NE(events.back().message.find("train.diverge_loss"), std::string::npos) << events.back().message;
    config.train.diverge_loss = 0.0;
    const auto [status_off, at_off, first_off, last_off, events_off] = run(config);
    EXPECT_EQ(first_off, first);
    EXPECT_TRUE(status_off == RunStatus::Completed || at_off > at) << at_off << " vs " << at;
    for (const Event& event : events_off)
        EXPECT_EQ(event.message.find("train.diverge_loss"), std::string::npos);
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

TEST(Trainer, TelemetryEveryNStillReportsScalarsAndValidationEveryStep) {
    Config config = tiny_config();
    config.train.steps = 10;
    config.telemetry.every = 4;
    config.telemetry.val_every = 3;
    Trainer trainer(config);
    for (int64_t t = 1; t <= 10; ++t) {
        const StepOutcome outcome = trainer.step();
        EXPECT_EQ(outcome.record.step, t);
        EXPECT_TRUE(std::isfinite(outcome.record.loss));
        EXPECT_NEAR(outcome.record.loss, std::log(256.0), 1.5) << "step " << t;
        EXPECT_DOUBLE_EQ(outcome.record.lr, 3e-3) << "step " << t;
        EXPECT_GT(outcome.record.grad_norm, 0.0) << "step " << t;
        const bool layers_due = t == 1 || t % 4 == 0;
        EXPECT_EQ(outcome.logged, layers_due) << "step " << t;
        EXPECT_EQ(outcome.record.layers.size(), layers_due ? 2u : 0u) << "step " << t;
        const bool validation_due = t % 3 == 0 || t == 10;
        ASSERT_EQ(outcome.record.val_loss.has_value(), validation_due) << "step " << t;
        if (validation_due) {
            EXPECT_NEAR(*outcome.record.val_loss, std::log(256.0), 1.5) << "step " << t;
            EXPECT_EQ(trainer.last_val_loss(), outcome.record.val_loss);
        }
    }
    EXPECT_EQ(trainer.status(), RunStatus::Completed);
}

TEST(Trainer, PostedNonLiveKeyIsRejectedWithTheLiveKeysNotApplied) {
    Trainer trainer(tiny_config());
    trainer.post({"model.layers", "3", -1});
    StepOutcome outcome;
    ASSERT_NO_THROW(outcome = trainer.step());
    ASSERT_EQ(outcome.events.size(), 1u);
    const Event& event = outcome.events[0];
    EXPECT_EQ(event.kind, "rejected_change");
    EXPECT_EQ(event.step, 1);
    EXPECT_EQ(event.key, "model.layers");
    EXPECT_EQ(event.value, "3");
    EXPECT_NE(event.message.find("'model.layers' cannot change during a run; live keys are: train.lr, "),
              std::string::npos)
        << event.message;
    EXPECT_NE(event.message.find("reinit_deepnorm_beta"), std::string::npos) << event.message;
    EXPECT_EQ(trainer.config().model.layers, 2);
    EXPECT_EQ(trainer.model().layout().blocks.size(), 2u);
    EXPECT_EQ(trainer.steps_done(), 1);
    EXPECT_EQ(trainer.status(), RunStatus::Running);
    try {
        trainer.apply({"train.seed", "7", -1});
        ADD_FAILURE() << "apply accepted a key that is not live";
    } catch (const InputError& error) {
        EXPECT_NE(std::string(error.what()).find("'train.seed' cannot change during a run"),
                  std::string::npos);
    }
    EXPECT_EQ(trainer.config().train.seed, 1u);
}

TEST(FirstBadGradient, HeadAndFinalNormArePositionLayersBlocksFromTheTop) {
    CpuBackend backend(1);
    ModelConfig config;
    config.d_model = 8;
    config.heads = 2;
    config.d_ff = 8;
    config.layers = 3;
    config.norm_placement = NormPlacement::Pre;
    Model model(config, 16, backend);
    const ParamLayout& layout = model.layout();
    const double inf = std::numeric_limits<double>::infinity();
    const double nan = std::numeric_limits<double>::quiet_NaN();
    auto position_with = [&](const std::vector<std::pair<std::string, double>>& bad) {
        std::vector<double> squares(layout.entries.size(), 1.0);
        for (const auto& [name, value] : bad) {
            const int entry = layout.find(name);
            EXPECT_GE(entry, 0) << name;
            squares[entry] = value;
        }
        return first_bad_gradient_position(model, squares);
    };
    EXPECT_EQ(position_with({}), -1);
    EXPECT_EQ(position_with({{"head.weight", inf}}), 3) << "the head is the index after the last block";
    EXPECT_EQ(position_with({{"final_norm.weight", nan}}), 3);
    EXPECT_EQ(position_with({{"blocks.0.ffn.fc2.weight", inf}, {"blocks.1.attn.qkv.bias", nan}}), 1);
    EXPECT_EQ(position_with({{"blocks.2.norm1.weight", inf}, {"head.weight", inf}}), 3);
    EXPECT_EQ(position_with({{"wte.weight", inf}, {"wpe.weight", nan}}), -1);
    EXPECT_EQ(position_with({{"wte.weight", inf}, {"blocks.0.attn.out.weight", inf}}), 0);
    EXPECT_EQ(position_with({{"blocks.2.norm1_out.weight", inf}}), -1) << "inactive under Pre-LN";
}

TEST(Trainer, DivergenceFromTheGradientsAloneNamesTheFirstBadBlock) {
    // Zero embeddings (and zero biases) keep the whole residual stream at 0, so every LayerNorm sees a
    // constant row: the forward pass and the loss (log 256) stay finite, while each norm's backward
    // multiplies the gradient by 1/sqrt(eps) = 1e15 until it overflows a few blocks down.
    Config config = tiny_config();
    config.model.layers = 4;
    config.model.norm_placement = NormPlacement::Pre;
    config.model.norm_eps = 1e-30;
    Trainer trainer(config);
    Model& model = trainer.model();
    const ParamLayout& layout = model.layout();
    for (int entry : {layout.wte, layout.wpe}) {
        model.write_entry(entry, std::vector<float>(layout.entries[entry].count, 0.0f));
    }
    const StepOutcome outcome = trainer.step();
    EXPECT_NEAR(outcome.record.loss, std::log(256.0), 1e-5) << "the forward pass stays finite";
    EXPECT_FALSE(std::isfinite(outcome.record.grad_norm));
    EXPECT_EQ(trainer.status(), RunStatus::Diverged);
    EXPECT_EQ(trainer.diverged_at(), 1);

    std::vector<double> squares(layout.entries.size(), 0.0);
    for (size_t i = 0; i < layout.entries.size(); ++i) {
        if (!model.active(static_cast<int>(i))) continue;
        for (float g : model.read_entry(static_cast<int>(i), true)) squares[i] += double(g) * g;
    }
    const int expected = first_bad_gradient_position(model, squares);
    EXPECT_GE(expected, 0);
    EXPECT_LT(expected, 4);
    EXPECT_EQ(trainer.first_bad_layer(), expected);
    for (size_t i = 0; i < layout.entries.size(); ++i) {
        if (layout.entries[i].block > expected && model.active(static_cast<int>(i))) {
            EXPECT_TRUE(std::isfinite(squares[i]))
                << layout.entries[i].name << " is above the first bad block";
        }
    }
    ASSERT_EQ(outcome.events.size(), 1u);
    EXPECT_EQ(outcome.events[0].kind, "diverged");
    EXPECT_EQ(outcome.events[0].block, expected);
    EXPECT_NE(
        outcome.events[0].message.find("non-finite gradient, first in block " + std::to_string(expected)),
        std::string::npos)
        << outcome.events[0].message;
}

TEST(Trainer, ResumeWithRAdamAndALiveWarmupContinuesExactly) {
    Config config = tiny_config();
    config.train.optimizer = OptimizerKind::RAdam;
    config.train.beta2 = 0.999;
    config.train.steps = 40;
    const LiveChange warmup{"train.warmup_steps", "30", 5};  // switched on live: ramps from step 5
    Trainer straight(config);
    straight.post(warmup);
    const auto reference = losses(straight, 40);
    ASSERT_EQ(reference.size(), 40u);

    Trainer first_half(config);
    first_half.post(warmup);
    losses(first_half, 20);
    EXPECT_EQ(first_half.schedule_origin(), 4);
    const testing::TestFolder folder;
    const std::string path = folder / "radam_warmup.safetensors";
    save_checkpoint(first_half, path);
    auto resumed = load_checkpoint(path, {});
    EXPECT_EQ(resumed->steps_done(), 20);
    EXPECT_EQ(resumed->schedule_origin(), 4);
    EXPECT_EQ(resumed->config().train.warmup_steps, 30);
    // step 21 is (21 - 4) / 30 of the way up the ramp (from step 0 it would be 21 / 30)
    EXPECT_DOUBLE_EQ(resumed->current_lr(), 3e-3 * 17.0 / 30.0);
    const auto tail = losses(*resumed, 20);
    ASSERT_EQ(tail.size(), 20u);
    for (int i = 0; i < 20; ++i) EXPECT_EQ(tail[i], reference[20 + i]) << "step " << 21 + i;
}

TEST(Trainer, MemoryIsCheckedBeforeTheBatchAndActivationsAreAllocated) {
    Config config = tiny_config();
    config.data.task = TaskKind::Copy;
    config.model.seq_len = 4096;
    config.train.batch_size = 65536;
    try {
        Trainer trainer(config);
        ADD_FAILURE() << "a batch of 65536 x 4096 tokens cannot fit; the constructor must say so";
    } catch (const ResourceError& error) {
        const std::string message = error.what();
        EXPECT_NE(message.find("activations for batch 65536 x seq 4096"), std::string::npos) << message;
        EXPECT_NE(message.find("MiB"), std::string::npos) << message;
        EXPECT_NE(message.find("train.batch_size"), std::string::npos) << message;
    }
    const ModelConfig model = tiny_config().model;
    EXPECT_GT(estimate_training_bytes(model, 256, 4, 16), build_layout(model, 256).total * 5 * sizeof(float));
    EXPECT_GT(estimate_training_bytes(model, 256, 8, 16), estimate_training_bytes(model, 256, 4, 16));
}

TEST(RunSummary, FinalLossIsNullUntilAStepRan) {
    Trainer trainer(tiny_config());
    nlohmann::json summary = summary_json(trainer, 0.0);
    EXPECT_TRUE(summary["final_loss"].is_null()) << summary.dump();
    EXPECT_EQ(summary["steps"], 0);
    const double loss = trainer.step().record.loss;
    summary = summary_json(trainer, 1.0);
    ASSERT_TRUE(summary["final_loss"].is_number()) << summary.dump();
    EXPECT_DOUBLE_EQ(summary["final_loss"].get<double>(), loss);

    const testing::TestFolder folder;
    const std::string path = folder / "summary.safetensors";
    save_checkpoint(trainer, path);
    auto resumed = load_checkpoint(path, {});
    EXPECT_TRUE(summary_json(*resumed, 0.0, 1)["final_loss"].is_null()) << "a resumed run that took no step";
}

// Rewrites a checkpoint with one metadata value replaced.
void rewrite_metadata(const std::string& path, const std::string& key, const std::string& value) {
    SafetensorsFile file = read_safetensors(path);
    file.metadata[key] = value;
    std::vector<TensorRef> tensors;
    for (const auto& [name, tensor] : file.tensors)
        tensors.push_back({name, tensor.shape, tensor.data.data()});
    write_safetensors(path, tensors, file.metadata);
}

TEST(Checkpoint, ProgressMetadataMustBeAStepCount) {
    Trainer trainer(tiny_config());
    losses(trainer, 2);
    const testing::TestFolder folder;
    const std::string path = folder / "metadata.safetensors";
    const struct {
        std::string key, value, expected;
    } cases[] = {
        {"normlab_step", "12abc", "metadata normlab_step is '12abc', not a step count"},
        {"normlab_step", "-3", "metadata normlab_step is '-3', not a step count"},
        {"normlab_step", "", "metadata normlab_step is '', not a step count"},
        {"normlab_schedule_origin", "x", "metadata normlab_schedule_origin is 'x', not a step count"},
        {"normlab_schedule_origin", "5", "normlab_schedule_origin (5) is after normlab_step (2)"},
    };
    for (const auto& c : cases) {
        save_checkpoint(trainer, path);
        rewrite_metadata(path, c.key, c.value);
        try {
            load_checkpoint(path, {});
            ADD_FAILURE() << c.key << " = '" << c.value << "' was accepted";
        } catch (const InputError& error) {
            const std::string message = error.what();
            EXPECT_NE(message.find("checkpoint '" + path + "'"), std::string::npos) << message;
            EXPECT_NE(message.find(c.expected), std::string::npos) << message;
        }
    }
    save_checkpoint(trainer, path);
    EXPECT_EQ(load_checkpoint(path, {})->steps_done(), 2);
}

TEST(Optimizer, IndependentWeightDecayFollowsTheScheduleNotTheLearningRate) {
    // With zero gradients AdamW's step is the decay alone: theta *= 1 - lr_t x decay, where decay is
    // weight_decay (lr_coupled) or weight_decay / train.lr (independent: weight_decay x lr_t / lr).
    for (const WeightDecayMode mode : {WeightDecayMode::LrCoupled, WeightDecayMode::Independent}) {
        ModelConfig model_config;
        model_config.d_model = 16;
        model_config.d_ff = 32;
        model_config.layers = 1;
        CpuBackend backend(1);
        Model model(model_config, 256, backend);
        model.initialize(1);
        Optimizer optimizer(model);
        TrainConfig train;
        train.optimizer = OptimizerKind::AdamW;
        train.lr = 1e-3;
        train.weight_decay = 0.1;
        train.weight_decay_mode = mode;
        const int matrix = model.layout().find("blocks.0.ffn.fc1.weight");
        const int gain = model.layout().find("blocks.0.norm1.weight");
        const std::vector<float> before = model.read_entry(matrix), gain_before = model.read_entry(gain);
        const double lr_t = 0.25e-3;  // a quarter into a warmup, say
        optimizer.update(train, 1, lr_t, 1.0);
        const double factor = 1.0 - lr_t * (mode == WeightDecayMode::Independent ? 0.1 / 1e-3 : 0.1);
        const std::vector<float> after = model.read_entry(matrix);
        for (size_t i = 0; i < before.size(); i += 97)
            EXPECT_NEAR(after[i], before[i] * factor, 1e-6 * std::fabs(before[i])) << to_string(mode);
        EXPECT_EQ(model.read_entry(gain), gain_before) << "gains are not decayed";
    }
}

}  // namespace
}  // namespace normlab

namespace normlab {
namespace {

double sum_of_squares(const std::vector<float>& values, double* count = nullptr) {
    double total = 0.0;
    for (float v : values) total += static_cast<double>(v) * v;
    if (count) *count += static_cast<double>(values.size());
    return total;
}

// The run-level gradient norms and each block's optimizer state against the buffers they summarise:
// the gradients of the step just taken, the optimizer's last update and Adam's second moment.
TEST(TrainerTelemetry, EmbeddingHeadAndOptimizerStateMatchTheBuffers) {
    Config config = testing::small_model_config(16, 2, 16, 4, 10);
    config.train.clip_grad_norm = 0.5;  // the record holds the gradient before clipping
    config.threads = 1;
    Trainer trainer(config);
    trainer.step();
    const StepRecord record = trainer.step().record;
    ASSERT_TRUE(record.telemetry.has_value());
    Model& model = trainer.model();
    const ParamLayout& layout = model.layout();
    const double embedding = sum_of_squares(model.read_entry(layout.wte, true)) +
                             sum_of_squares(model.read_entry(layout.wpe, true));
    EXPECT_NEAR(record.telemetry->grad_embedding, std::sqrt(embedding), 1e-6 * std::sqrt(embedding));
    const double head = std::sqrt(sum_of_squares(model.read_entry(layout.head, true)));
    EXPECT_NEAR(record.telemetry->grad_head, head, 1e-6 * head);
    EXPECT_GT(head, 0.0);

    Optimizer& optimizer = trainer.optimizer();
    for (int block = 0; block < 2; ++block) {
        double update_squares = 0.0, second_moment = 0.0, count = 0.0;
        for (size_t i = 0; i < layout.entries.size(); ++i) {
            const ParamEntry& entry = layout.entries[i];
            if (entry.block != block || !model.active(static_cast<int>(i))) continue;
            std::vector<float> update(entry.count), v(entry.count);
            model.backend().download(update.data(), optimizer.last_update() + entry.offset, entry.count);
            model.backend().download(v.data(), optimizer.second_moment() + entry.offset, entry.count);
            update_squares += sum_of_squares(update, &count);
            for (float value : v) second_moment += value;
        }
        const LayerTelemetry& layer = record.layers[block];
        EXPECT_NEAR(layer.update_rms, std::sqrt(update_squares / count), 1e-6 * layer.update_rms) << block;
        EXPECT_NEAR(layer.adam_grad_rms, std::sqrt(second_moment / count), 1e-6 * layer.adam_grad_rms)
            << block;
        EXPECT_GT(layer.adam_grad_rms, 0.0);
    }
}

}  // namespace
}  // namespace normlab
