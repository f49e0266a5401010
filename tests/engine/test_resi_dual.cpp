// ResiDual (model.residual=resi_dual, Xie et al. 2023): a Post-LN stack plus a dual stream, the stack's
// input and every branch unnormalised, whose final norm is added to the stack's output. Checked against
// its definition with the branches zeroed (the output is then PostLN-stack(x) + LN(x)) in both stacks;
// placements that are not Post-LN throughout are refused; it switches on and off live and costs the
// dual streams and one gradient. Gradients: test_model_gradients.cpp; PyTorch: tests/parity.
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

// Every branch of every block outputs 0 (output projections and FFN outputs zero): the dual stream
// stays the embeddings.
void zero_branches(Model& model, const std::vector<BlockIndex>& blocks) {
    for (const BlockIndex& block : blocks)
        for (int entry : {block.out_weight, block.out_bias, block.fc2_weight, block.fc2_bias})
            model.write_entry(entry, std::vector<float>(model.read_entry(entry).size(), 0.0f));
}

void expect_output_plus_normed_input(const std::vector<float>& actual, const std::vector<float>& last_block,
                                     const std::vector<double>& input, int d) {
    const std::vector<double> normed = testing::unit_layer_norm(input, d);  // the final norm at init
    ASSERT_EQ(actual.size(), normed.size());
    for (size_t i = 0; i < normed.size(); ++i) ASSERT_NEAR(actual[i], last_block[i] + normed[i], 1e-4) << i;
}

TEST(ResiDual, WithTheBranchesZeroedTheOutputIsTheStackPlusItsNormedInput) {
    ModelConfig config = testing::tiny_model_config(3);
    config.norm_placement = NormPlacement::Post;
    config.residual = Residual::ResiDual;
    CpuReferenceBackend backend(1);
    Model model(config, kVocab, backend);
    model.initialize(5);
    zero_branches(model, model.layout().blocks);
    const Batch batch = testing::small_batch(kVocab, 2, 8, 4);
    model.forward_backward(batch, {.backward = false});
    expect_output_plus_normed_input(model.read_head_input(), model.read_block_output(config.layers - 1),
                                    testing::embeddings(model, batch), config.d_model);
}

TEST(ResiDual, TheEncodersMemoryIsItsStackPlusItsNormedInput) {
    Config config = testing::tiny_copy_encoder_decoder(2);
    config.model.norm_placement = NormPlacement::Post;
    config.model.residual = Residual::ResiDual;
    CpuReferenceBackend backend(1);
    Model model(config.model, kVocab, backend);
    model.initialize(6);
    zero_branches(model, model.layout().encoder_blocks);
    const Batch batch = testing::small_batch(kVocab, 2, 17, 7);
    model.forward_backward(batch, {.backward = false});
    expect_output_plus_normed_input(model.read_memory(), model.read_encoder_block_output(1),
                                    testing::embeddings(model, batch), config.model.d_model);
}

TEST(ResiDual, PlacementsThatAreNotPostLnThroughoutAreRefused) {
    for (NormPlacement placement :
         {NormPlacement::Pre, NormPlacement::Peri, NormPlacement::None, NormPlacement::Mix}) {
        Config config;
        config.model.norm_placement = placement;
        config.model.residual = Residual::ResiDual;
        try {
            validate(config);
            ADD_FAILURE() << to_string(placement) << " was accepted";
        } catch (const InputError& error) {
            EXPECT_NE(std::string(error.what()).find("is not Post-LN throughout"), std::string::npos)
                << error.what();
        }
    }
}

// Switched on live the dual streams are made and the final norm starts at unit gain: the next step
// trains the ResiDual model (its loss leaves the plain twin's); while on, Pre-LN is refused; switched off
// again, training goes on.
TEST(ResiDual, SwitchesOnAndOffLive) {
    Config config = testing::small_model_config(16, 3, 8, 4, 6);
    config.model.norm_placement = NormPlacement::Post;
    Trainer plain(config), switched(config);
    plain.step();
    switched.step();
    switched.apply(parse_live_change("model.residual=resi_dual"));
    const double with_dual = switched.step().record.loss;
    const double without = plain.step().record.loss;
    EXPECT_TRUE(std::isfinite(with_dual));
    EXPECT_GT(std::abs(with_dual - without), 1e-4);
    EXPECT_THROW(switched.apply(parse_live_change("model.norm_placement=pre")), InputError);
    switched.apply(parse_live_change("model.residual=plain"));
    EXPECT_TRUE(std::isfinite(switched.step().record.loss));
    EXPECT_NO_THROW(switched.apply(parse_live_change("model.norm_placement=pre")));
}

TEST(ResiDual, CostsItsDualStreamsAndOneGradient) {
    ModelConfig config = testing::tiny_model_config(2);
    config.norm_placement = NormPlacement::Post;
    const size_t stream = static_cast<size_t>(3 * 8 * config.d_model) * sizeof(float);
    for (int encoder_layers : {0, 2}) {
        config.encoder_layers = encoder_layers;
        config.residual = Residual::Plain;
        const size_t plain = estimate_training_bytes(config, kVocab, 3, 8, NumberFormat::Fp32);
        config.residual = Residual::ResiDual;
        const size_t dual = estimate_training_bytes(config, kVocab, 3, 8, NumberFormat::Fp32);
        EXPECT_EQ(dual - plain, (encoder_layers > 0 ? 3 : 2) * stream) << encoder_layers;
    }
}

}  // namespace
}  // namespace normlab
