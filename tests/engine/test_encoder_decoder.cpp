// The encoder-decoder option (model.encoder_layers): config validation, the layout's checkpoint names,
// a decoder-only model left exactly as it was, the memory that hides the scored targets, training on
// the copy task's source, checkpoints, and the telemetry and probe fields it adds.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/analysis/probe.h"
#include "engine/core/errors.h"
#include "engine/io/checkpoint.h"
#include "engine/io/records_json.h"
#include "engine/model/constants.h"
#include "engine/train/trainer.h"
#include "tests/support/temp_folder.h"

namespace normlab {
namespace {

Config encdec_config(int encoder_layers, TaskKind task = TaskKind::Copy) {
    Config config;
    config.model.d_model = 32;
    config.model.heads = 2;
    config.model.d_ff = 64;
    config.model.layers = 2;
    config.model.encoder_layers = encoder_layers;
    config.model.seq_len = 17;
    config.data.task = task;
    config.data.symbols = 8;
    config.train.steps = 200;
    config.train.lr = 3e-3;
    config.telemetry.val_every = 0;
    config.threads = 1;
    return config;
}

TEST(EncoderDecoderConfig, OutOfRangeEncoderLayersSayWhatToSet) {
    for (const int bad : {-1, 10001}) {
        Config config = encdec_config(bad);
        try {
            validate(config);
            FAIL() << "model.encoder_layers = " << bad << " was accepted";
        } catch (const InputError& error) {
            const std::string message = error.what();
            EXPECT_NE(message.find("model.encoder_layers"), std::string::npos) << message;
            EXPECT_NE(message.find("0 for the decoder-only model"), std::string::npos) << message;
        }
    }
    EXPECT_EQ(Config{}.model.encoder_layers, 0) << "decoder-only by default";
}

TEST(EncoderDecoderConfig, EncoderLayersIsNotALiveKey) {
    Trainer trainer(encdec_config(0));
    EXPECT_THROW(trainer.apply({"model.encoder_layers", "2"}), InputError);
}

TEST(EncoderDecoderLayout, CheckpointNamesAndShapes) {
    const Config config = encdec_config(3);
    const ParamLayout layout = build_layout(config.model, 10);
    const int d = config.model.d_model;
    auto shape_of = [&](const std::string& name) {
        const int entry = layout.find(name);
        EXPECT_GE(entry, 0) << name;
        return entry >= 0 ? layout.entries[entry].shape : std::vector<int64_t>{};
    };
    EXPECT_EQ(shape_of("blocks.1.cross_attn.q.weight"), (std::vector<int64_t>{d, d}));
    EXPECT_EQ(shape_of("blocks.1.cross_attn.kv.weight"), (std::vector<int64_t>{2 * d, d}));
    EXPECT_EQ(shape_of("blocks.1.cross_attn.kv.bias"), (std::vector<int64_t>{2 * d}));
    EXPECT_EQ(shape_of("blocks.1.cross_attn.out.weight"), (std::vector<int64_t>{d, d}));
    EXPECT_EQ(shape_of("blocks.0.norm_cross.weight"), (std::vector<int64_t>{d}));
    EXPECT_EQ(shape_of("blocks.0.norm_cross_out.weight"), (std::vector<int64_t>{d}));
    EXPECT_EQ(shape_of("blocks.0.cross_attn.admin_omega"), (std::vector<int64_t>{1}));
    EXPECT_EQ(shape_of("encoder.blocks.2.attn.qkv.weight"), (std::vector<int64_t>{3 * d, d}));
    EXPECT_EQ(shape_of("encoder.blocks.2.ffn.fc2.weight"), (std::vector<int64_t>{d, config.model.d_ff}));
    EXPECT_EQ(shape_of("encoder.final_norm.weight"), (std::vector<int64_t>{d}));
    ASSERT_EQ(layout.encoder_blocks.size(), 3u);
    const ParamEntry& encoder_entry = layout.entries[layout.encoder_blocks[2].fc1_weight];
    EXPECT_EQ(encoder_entry.block, -1) << "encoder entries are not a decoder block's";
    EXPECT_EQ(encoder_entry.encoder_block, 2);
    EXPECT_EQ(layout.entries[layout.blocks[1].cross_q_weight].block, 1);

    const ParamLayout decoder_only = build_layout(encdec_config(0).model, 10);
    for (const ParamEntry& entry : decoder_only.entries) {
        EXPECT_EQ(entry.name.find("cross"), std::string::npos) << entry.name;
        EXPECT_EQ(entry.name.find("encoder"), std::string::npos) << entry.name;
    }
    // the decoder-only entries come first, in the same order and places, but for DenseFormer's weights and
    // Attention Residuals' queries, which close every table (their values, the identity and zeros, do not
    // depend on the seed)
    ASSERT_GT(layout.entries.size(), decoder_only.entries.size());
    for (size_t i = 0; i < decoder_only.entries.size(); ++i) {
        const ParamRole role = decoder_only.entries[i].role;
        if (role == ParamRole::DenseWeight || role == ParamRole::AttnResQuery) {
            EXPECT_GE(layout.find(decoder_only.entries[i].name), 0) << decoder_only.entries[i].name;
            continue;
        }
        EXPECT_EQ(layout.entries[i].name, decoder_only.entries[i].name);
        EXPECT_EQ(layout.entries[i].offset, decoder_only.entries[i].offset);
    }
}

TEST(EncoderDecoderLayout, TheoryModeHasNoCrossAttentionOutputAndZeroQueriesAndKeys) {
    Config config = encdec_config(2);
    config.model.theory_mode = true;
    Trainer trainer(config);
    Model& model = trainer.model();
    const ParamLayout& layout = model.layout();
    EXPECT_FALSE(model.active(layout.blocks[0].cross_out_weight));
    for (float v : model.read_entry(layout.blocks[0].cross_q_weight)) ASSERT_EQ(v, 0.0f);
    const std::vector<float> kv = model.read_entry(layout.blocks[0].cross_kv_weight);
    const size_t half = kv.size() / 2;
    double value_squares = 0.0;
    for (size_t i = 0; i < kv.size(); ++i) {
        if (i < half)
            ASSERT_EQ(kv[i], 0.0f) << "W_K = 0";
        else
            value_squares += static_cast<double>(kv[i]) * kv[i];
    }
    EXPECT_GT(value_squares, 0.0) << "W_V is drawn";
}

TEST(EncoderDecoderLayout, DeepNormUsesDeepNetsEncoderDecoderConstants) {
    // Wang et al. 2022, N = 6 encoder and M = 6 decoder blocks
    EXPECT_NEAR(deepnorm_encoder_alpha(6, 6), 0.81 * std::pow(6.0 * 6 * 6 * 6 * 6, 1.0 / 16), 1e-12);
    EXPECT_NEAR(deepnorm_decoder_alpha(6), std::pow(18.0, 0.25), 1e-12);
    EXPECT_NEAR(deepnorm_decoder_beta(6), std::pow(72.0, -0.25), 1e-12);
    ModelConfig model = encdec_config(6).model;
    model.layers = 6;
    EXPECT_DOUBLE_EQ(effective_deepnorm_alpha(model, true), deepnorm_encoder_alpha(6, 6));
    EXPECT_DOUBLE_EQ(effective_deepnorm_beta(model, false), deepnorm_decoder_beta(6));
    model.encoder_layers = 0;
    EXPECT_DOUBLE_EQ(effective_deepnorm_alpha(model), deepnorm_alpha(6)) << "decoder-only unchanged";
    EXPECT_EQ(residual_sublayers(encdec_config(3).model), 2 * 3 + 3 * 2);
}

TEST(EncoderDecoderModel, DecoderWeightsAreDrawnAsWithoutTheEncoder) {
    Trainer with(encdec_config(2)), without(encdec_config(0));
    const ParamLayout& layout = without.model().layout();
    for (size_t i = 0; i < layout.entries.size(); ++i) {
        // Admin's closed-form omega depends on the number of sub-layers, which the encoder changes, and so
        // does the shape of Attention Residuals' queries (zeros): one row per sub-layer of the block
        const ParamRole role = layout.entries[i].role;
        if (role == ParamRole::AdminOmega || role == ParamRole::AttnResQuery) continue;
        ASSERT_EQ(with.model().read_entry(with.model().layout().find(layout.entries[i].name)),
                  without.model().read_entry(static_cast<int>(i)))
            << layout.entries[i].name;
    }
}

TEST(EncoderDecoderModel, TargetsTheMemoryHoldsAreNotScored) {
    // text: the memory is the first half of the window (positions 0..3 of 8), so positions 0..2, whose
    // targets are tokens 1..3, are not scored; the decoder-only model scores every position.
    Config config = encdec_config(1, TaskKind::Text);
    config.model.seq_len = 8;
    Trainer encdec(config);
    Batch batch;
    encdec.task().make_batch(Split::Train, 0, 4, 8, batch);
    EXPECT_EQ(batch.source_len, 4);
    EXPECT_EQ(encdec.model().forward_backward(batch, {.backward = false}).scored, 4 * (8 - 3));
    config.model.encoder_layers = 0;
    Trainer decoder_only(config);
    EXPECT_EQ(decoder_only.model().forward_backward(batch, {.backward = false}).scored, 4 * 8);
}

TEST(EncoderDecoderModel, TheMemoryDoesNotSeeBeyondTheSource) {
    // Changing tokens after the source leaves the memory unchanged: nothing the decoder predicts leaks.
    Trainer trainer(encdec_config(2));
    Batch batch;
    trainer.task().make_batch(Split::Train, 0, 2, 17, batch);
    ASSERT_EQ(batch.source_len, 9);  // x (8 symbols) and SEP
    trainer.model().forward_backward(batch, {.backward = false});
    const std::vector<float> memory = trainer.model().read_memory();
    for (int row = 0; row < batch.batch; ++row) {
        for (int t = batch.source_len; t < batch.seq; ++t)
            batch.inputs[static_cast<size_t>(row) * batch.seq + t] = 0;
    }
    trainer.model().forward_backward(batch, {.backward = false});
    const std::vector<float> changed = trainer.model().read_memory();
    const size_t d = static_cast<size_t>(trainer.config().model.d_model);
    for (int row = 0; row < batch.batch; ++row) {
        for (int t = 0; t < batch.source_len; ++t) {
            const size_t at = (static_cast<size_t>(row) * batch.seq + t) * d;
            for (size_t c = 0; c < d; ++c)
                ASSERT_EQ(memory[at + c], changed[at + c]) << "row " << row << " t " << t;
        }
    }
}

TEST(EncoderDecoderModel, LearnsTheCopyTaskFromTheSource) {
    Config config = encdec_config(2);
    config.model.norm_placement = NormPlacement::Pre;
    Trainer trainer(config);
    double first = 0.0, last = 0.0;
    for (int step = 1; step <= 200; ++step) {
        const StepOutcome& outcome = trainer.step();
        if (step == 1) first = outcome.record.loss;
        last = outcome.record.loss;
    }
    double accuracy = 0.0;
    trainer.evaluate(Split::Validation, 4, &accuracy);
    EXPECT_LT(last, 0.5 * first) << "loss " << first << " -> " << last;
    EXPECT_GT(accuracy, 0.5) << "copying needs the encoder's memory of the source";
}

TEST(EncoderDecoderModel, CheckpointResumeContinuesExactly) {
    const Config config = encdec_config(2);
    auto losses = [](Trainer& trainer, int steps) {
        std::vector<double> out;
        for (int i = 0; i < steps; ++i) out.push_back(trainer.step().record.loss);
        return out;
    };
    Trainer straight(config);
    const std::vector<double> reference = losses(straight, 10);
    Trainer first_half(config);
    losses(first_half, 5);
    const testing::TestFolder folder;
    const std::string path = folder / "encdec_resume.safetensors";
    save_checkpoint(first_half, path);
    auto resumed = load_checkpoint(path, {});
    const std::vector<double> tail = losses(*resumed, 5);
    for (int i = 0; i < 5; ++i) EXPECT_EQ(tail[i], reference[5 + i]) << "step " << 6 + i;
}

TEST(EncoderDecoderTelemetry, MetricsAndProbeAddCrossAttentionAndEncoderBlocks) {
    Config config = encdec_config(3);
    Trainer trainer(config);
    const StepOutcome& outcome = trainer.step();
    ASSERT_EQ(outcome.record.layers.size(), 2u);
    ASSERT_EQ(outcome.record.encoder_layers.size(), 3u);
    const nlohmann::json record = to_json(outcome.record);
    ASSERT_EQ(record["layers"].size(), 2u);
    EXPECT_GT(record["layers"][0]["grad"]["w_cross_kv"].get<double>(), 0.0);
    EXPECT_GT(record["layers"][0]["resid_cross"].get<double>(), 0.0);
    EXPECT_TRUE(record["layers"][1]["dependency"].contains("cross"));
    ASSERT_EQ(record["encoder_layers"].size(), 3u);
    EXPECT_GT(record["encoder_layers"][0]["grad"]["w_2"].get<double>(), 0.0);
    EXPECT_GT(record["encoder_layers"][2]["update_ratio"].get<double>(), 0.0);

    Trainer fresh(config);
    const ProbeResult probe = probe_at_init(fresh, 2);
    const OutputChange change = output_change_after_one_step(fresh);
    const nlohmann::json json = to_json(probe, &change);
    ASSERT_EQ(json["blocks"].size(), 2u);
    ASSERT_EQ(json["encoder"].size(), 3u);
    EXPECT_GT(json["blocks"][1]["grad"]["w_cross_q"]["norm_of_mean"].get<double>(), 0.0);
    EXPECT_GT(json["encoder"][0]["grad"]["w_1"]["mean_norm"].get<double>(), 0.0);
    EXPECT_GT(json["encoder"][2]["output_change"].get<double>(), 0.0);

    Trainer decoder_only(encdec_config(0));
    const nlohmann::json plain = to_json(decoder_only.step().record);
    EXPECT_FALSE(plain.contains("encoder_layers"));
    EXPECT_FALSE(plain["layers"][0].contains("resid_cross"));
    EXPECT_FALSE(plain["layers"][0]["grad"].contains("w_cross_q"));
}

}  // namespace
}  // namespace normlab
