// Attention Residuals (model.residual=attn_res, Kimi Team 2026): each sub-layer reads a softmax-weighted
// average of the embeddings and the earlier sub-layers' branches. Checked: its checkpoint names, the
// average against its formula (branches zeroed, a query set by hand), the placements and stacks it is
// refused for, switching it live, its memory. Gradients: test_model_gradients.cpp; PyTorch: tests/parity.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/config/config.h"
#include "engine/core/errors.h"
#include "engine/model/model.h"
#include "engine/train/live_changes.h"
#include "engine/train/trainer.h"
#include "tests/engine/model_test_support.h"

namespace normlab {
namespace {

constexpr int kVocab = 9;

TEST(AttnRes, EachBlockHasAQueryPerSubLayerAndTheyCloseTheTable) {
    ModelConfig config = testing::tiny_model_config(3);
    config.encoder_layers = 2;
    const ParamLayout layout = build_layout(config, kVocab);
    const ParamEntry& last = layout.entries[static_cast<size_t>(layout.blocks[2].attn_res_queries)];
    EXPECT_EQ(last.name, "blocks.2.attn_res.queries");
    EXPECT_EQ(last.shape, (std::vector<int64_t>{3, config.d_model}));  // attention, cross-attention, FFN
    const ParamEntry& encoder =
        layout.entries[static_cast<size_t>(layout.encoder_blocks[1].attn_res_queries)];
    EXPECT_EQ(encoder.name, "encoder.blocks.1.attn_res.queries");
    EXPECT_EQ(encoder.shape, (std::vector<int64_t>{2, config.d_model}));
    EXPECT_EQ(static_cast<size_t>(layout.encoder_blocks[1].attn_res_queries) + 1, layout.entries.size())
        << "the queries close the table, so no other entry's index (and seed) moves";
    EXPECT_EQ(layout.blocks[0].attn_res_queries, layout.encoder_blocks[1].dense_weights + 1);
}

// No norms and every branch zero (output projections and FFN outputs zeroed): the sources are the
// embeddings e and zeros, whose keys are 0. With the last FFN's query w, the head reads
// e * exp(z) / (exp(z) + 2 L) for each row, z = w . e / rms(e); with w = 0, e / (2 L + 1).
TEST(AttnRes, WithTheBranchesZeroedTheHeadReadsTheEmbeddingsShare) {
    ModelConfig config = testing::tiny_model_config(3);
    config.norm_placement = NormPlacement::None;
    config.residual = Residual::AttnRes;
    CpuReferenceBackend backend(1);
    Model model(config, kVocab, backend);
    model.initialize(5);
    for (const BlockIndex& block : model.layout().blocks)
        for (int entry : {block.out_weight, block.out_bias, block.fc2_weight, block.fc2_bias})
            model.write_entry(entry, std::vector<float>(model.read_entry(entry).size(), 0.0f));
    const Batch batch = testing::small_batch(kVocab, 2, 8, 4);
    const int d = config.d_model, others = 2 * config.layers;
    for (const bool with_query : {false, true}) {
        std::vector<float> queries(static_cast<size_t>(2 * d), 0.0f);
        if (with_query)
            for (int c = 0; c < d; ++c)
                queries[static_cast<size_t>(d + c)] = 0.3f * static_cast<float>(c % 5) - 0.5f;
        model.write_entry(model.layout().blocks[2].attn_res_queries, queries);
        model.forward_backward(batch, {.backward = false});
        const std::vector<double> e = testing::embeddings(model, batch);
        const std::vector<float> head = model.read_head_input();
        for (size_t row = 0; row < e.size() / static_cast<size_t>(d); ++row) {
            double squares = 0.0, dot = 0.0;
            for (int c = 0; c < d; ++c) {
                const double value = e[row * d + c];
                squares += value * value;
                dot += queries[static_cast<size_t>(d + c)] * value;
            }
            const double z = dot / std::sqrt(squares / d + config.norm_eps);
            const double share = std::exp(z) / (std::exp(z) + others);
            for (int c = 0; c < d; ++c)
                ASSERT_NEAR(head[row * d + c], share * e[row * d + c], 1e-5) << with_query << " row " << row;
        }
    }
}

TEST(AttnRes, PostLnMixLnAndEncoderDecodersAreRefused) {
    for (NormPlacement placement : {NormPlacement::Post, NormPlacement::Mix}) {
        Config config;
        config.model.norm_placement = placement;
        config.model.residual = Residual::AttnRes;
        try {
            validate(config);
            ADD_FAILURE() << to_string(placement) << " was accepted";
        } catch (const InputError& error) {
            EXPECT_NE(std::string(error.what()).find("set model.norm_placement=pre"), std::string::npos)
                << error.what();
        }
    }
    Config config;
    config.model.norm_placement = NormPlacement::Pre;
    config.model.residual = Residual::AttnRes;
    EXPECT_NO_THROW(validate(config));
    config.model.encoder_layers = 2;
    try {
        validate(config);
        ADD_FAILURE() << "an encoder-decoder was accepted";
    } catch (const InputError& error) {
        EXPECT_NE(std::string(error.what()).find("model.encoder_layers=0"), std::string::npos)
            << error.what();
    }
}

// Switched on live its buffers are made and training goes on from the same weights (its head input
// leaves the plain twin's: sums became averages); while on, Post-LN is refused; switched off, training
// goes on.
TEST(AttnRes, SwitchesOnAndOffLive) {
    Config config = testing::small_model_config(16, 3, 8, 4, 8);
    config.model.norm_placement = NormPlacement::Pre;
    Trainer plain(config), switched(config);
    for (int t = 0; t < 3; ++t) EXPECT_EQ(switched.step().record.loss, plain.step().record.loss);
    switched.apply(parse_live_change("model.residual=attn_res"));
    for (int t = 0; t < 2; ++t) {
        const double averaged = switched.step().record.loss, summed = plain.step().record.loss;
        EXPECT_TRUE(std::isfinite(averaged));
        EXPECT_NE(averaged, summed);
    }
    EXPECT_NE(switched.model().read_head_input(), plain.model().read_head_input());
    EXPECT_THROW(switched.apply(parse_live_change("model.norm_placement=post")), InputError);
    switched.apply(parse_live_change("model.residual=plain"));
    EXPECT_TRUE(std::isfinite(switched.step().record.loss));
}

// Sources 2L + 1 (values, keys and their gradients [n, d] each, key statistics [2n], one average's weight
// gradients [n]), every average's weights (after slot j: j + 2 sources), a ones vector and a gain gradient.
TEST(AttnRes, CostsItsSourcesKeysWeightsAndTheirGradients) {
    ModelConfig config = testing::tiny_model_config(3);
    config.norm_placement = NormPlacement::Pre;
    const size_t n = 3 * 8, d = static_cast<size_t>(config.d_model), sources = 7, averages = 6;
    const size_t plain = estimate_training_bytes(config, kVocab, 3, 8, NumberFormat::Fp32);
    config.residual = Residual::AttnRes;
    const size_t averaged = estimate_training_bytes(config, kVocab, 3, 8, NumberFormat::Fp32);
    const size_t weights = (2 + 3 + 4 + 5 + 6 + 7) * n;
    EXPECT_EQ(averaged - plain, (4 * sources * n * d + 3 * sources * n + weights + 2 * d) * sizeof(float));
    EXPECT_EQ(weights, averages * (averages + 3) / 2 * n);
}

}  // namespace
}  // namespace normlab
