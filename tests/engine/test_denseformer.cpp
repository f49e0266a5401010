// DenseFormer (model.residual=denseformer, Pagliardini et al. 2024): each block's successor reads a
// learned average of the embeddings and the earlier blocks' outputs. Checked: which outputs an average
// reads (the dilation rule) and its checkpoint names; at init it is the plain model, bit for bit; with
// weights set by hand the head reads sum_j alpha_j B_j; switched on live it changes nothing until the
// weights move; its memory. Gradients: test_model_gradients.cpp; PyTorch: tests/parity.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/config/config.h"
#include "engine/model/model.h"
#include "engine/train/live_changes.h"
#include "engine/train/trainer.h"
#include "tests/engine/model_test_support.h"

namespace normlab {
namespace {

constexpr int kVocab = 9;

TEST(DenseFormer, AnAverageReadsEveryKthOutputBackFromItsBlocksOwn) {
    EXPECT_EQ(dense_sources(0, 1), (std::vector<int>{0, 1}));
    EXPECT_EQ(dense_sources(5, 1), (std::vector<int>{0, 1, 2, 3, 4, 5, 6}));
    EXPECT_EQ(dense_sources(5, 2), (std::vector<int>{0, 2, 4, 6}));
    EXPECT_EQ(dense_sources(4, 2), (std::vector<int>{1, 3, 5}));
    EXPECT_EQ(dense_sources(0, 4), (std::vector<int>{1}));
    EXPECT_EQ(dense_sources(6, 4), (std::vector<int>{3, 7}));
    ModelConfig config = testing::tiny_model_config(3);
    config.encoder_layers = 2;
    config.denseformer_dilation = 2;
    const ParamLayout layout = build_layout(config, kVocab);
    const ParamEntry& last = layout.entries[static_cast<size_t>(layout.blocks[2].dense_weights)];
    EXPECT_EQ(last.name, "blocks.2.dwa");
    EXPECT_EQ(last.shape, (std::vector<int64_t>{2}));  // outputs 1 and 3
    EXPECT_EQ(layout.entries[static_cast<size_t>(layout.encoder_blocks[1].dense_weights)].name,
              "encoder.blocks.1.dwa");
    EXPECT_EQ(layout.blocks[2].dense_weights + 1, layout.encoder_blocks[0].dense_weights);
    EXPECT_EQ(layout.encoder_blocks[1].dense_weights + 1, layout.blocks[0].attn_res_queries)
        << "the weights close the table but for Attention Residuals' queries (zeros, which no seed draws), "
           "so no other entry's index (and seed) moves";
}

// Starting at the identity, a DenseFormer model computes what the plain model does: the same loss and
// the same gradient of every shared tensor, bit for bit; only the average weights gain a gradient.
TEST(DenseFormer, AtInitItIsThePlainModelBitForBit) {
    for (NormPlacement placement : {NormPlacement::Pre, NormPlacement::Post}) {
        ModelConfig config = testing::tiny_model_config(3);
        config.norm_placement = placement;
        CpuBackend backend(2);
        Model plain(config, kVocab, backend);
        config.residual = Residual::DenseFormer;
        Model dense(config, kVocab, backend);
        plain.initialize(4);
        dense.initialize(4);
        const Batch batch = testing::small_batch(kVocab, 2, 8, 3);
        const double plain_loss = plain.forward_backward(batch, {.backward = true}).loss;
        EXPECT_EQ(dense.forward_backward(batch, {.backward = true}).loss, plain_loss);
        for (size_t i = 0; i < plain.layout().entries.size(); ++i) {
            if (plain.layout().entries[i].role == ParamRole::DenseWeight) continue;
            ASSERT_EQ(dense.read_entry(static_cast<int>(i), true),
                      plain.read_entry(static_cast<int>(i), true))
                << plain.layout().entries[i].name;
        }
        double weight_grad = 0.0;
        for (float g : dense.read_entry(dense.layout().blocks[1].dense_weights, true))
            weight_grad += std::abs(g);
        EXPECT_GT(weight_grad, 0.0);
    }
}

// Post-LN without a final norm: the head reads the last block's average itself.
TEST(DenseFormer, TheHeadReadsTheWeightedSumOfTheOutputs) {
    ModelConfig config = testing::tiny_model_config(3);
    config.norm_placement = NormPlacement::Post;
    config.residual = Residual::DenseFormer;
    CpuReferenceBackend backend(1);
    Model model(config, kVocab, backend);
    model.initialize(8);
    const std::vector<float> alpha{0.5f, -1.0f, 2.0f, 0.25f};  // outputs 0..3
    model.write_entry(model.layout().blocks[2].dense_weights, alpha);
    const Batch batch = testing::small_batch(kVocab, 2, 8, 6);
    model.forward_backward(batch, {.backward = false});
    std::vector<std::vector<double>> outputs{testing::embeddings(model, batch)};
    for (int block = 0; block < 3; ++block)
        outputs.push_back(testing::to_double(model.read_block_output(block)));
    const std::vector<float> head = model.read_head_input();
    for (size_t i = 0; i < head.size(); ++i) {
        double expected = 0.0;
        for (size_t j = 0; j < alpha.size(); ++j) expected += alpha[j] * outputs[j][i];
        ASSERT_NEAR(head[i], expected, 1e-4) << i;
    }
}

// Switched on live at step 3 the weights start at the identity: step 3's loss is the plain twin's; by
// step 5 the weights have moved and the losses part; switched off, training goes on.
TEST(DenseFormer, SwitchedOnLiveItChangesNothingUntilItsWeightsMove) {
    Config config = testing::small_model_config(16, 3, 8, 4, 8);
    Trainer plain(config), switched(config);
    for (int t = 0; t < 2; ++t) EXPECT_EQ(switched.step().record.loss, plain.step().record.loss);
    switched.apply(parse_live_change("model.residual=denseformer"));
    EXPECT_EQ(switched.step().record.loss, plain.step().record.loss);
    switched.step();
    plain.step();
    EXPECT_NE(switched.step().record.loss, plain.step().record.loss);
    switched.apply(parse_live_change("model.residual=plain"));
    EXPECT_TRUE(std::isfinite(switched.step().record.loss));
}

TEST(DenseFormer, CostsAnAverageAndAnOutputGradientPerBlock) {
    ModelConfig config = testing::tiny_model_config(3);
    const size_t stream = static_cast<size_t>(3 * 8 * config.d_model) * sizeof(float);
    for (int encoder_layers : {0, 2}) {
        config.encoder_layers = encoder_layers;
        config.residual = Residual::Plain;
        const size_t plain = estimate_training_bytes(config, kVocab, 3, 8, NumberFormat::Fp32);
        config.residual = Residual::DenseFormer;
        const size_t dense = estimate_training_bytes(config, kVocab, 3, 8, NumberFormat::Fp32);
        // the averages of both stacks and the gradients of outputs 0..3 (the weights are in every layout)
        EXPECT_EQ(dense - plain, (3 + static_cast<size_t>(encoder_layers) + 4) * stream) << encoder_layers;
    }
}

}  // namespace
}  // namespace normlab
