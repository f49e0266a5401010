// B2T connection (model.residual=b2t, Takase et al. 2022): a Post-LN block's input added to its last sum
// before its last norm. Checked against its definition with everything but the skip switched off (zero
// attention and FFN outputs: the block computes LN2(LN1(x) + x)); placements without Post-LN blocks
// are refused; it switches on and off live (its gradient buffer comes and goes) and costs one [n, d]
// buffer. Gradients: test_model_gradients.cpp; PyTorch: tests/parity/torch_parity.py.
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

TEST(B2tConnection, APostLnBlockAddsItsInputBeforeItsLastNorm) {
    ModelConfig config = testing::tiny_model_config(2);
    config.norm_placement = NormPlacement::Post;
    config.residual = Residual::B2t;
    CpuReferenceBackend backend(1);
    Model model(config, kVocab, backend);
    model.initialize(3);
    for (const BlockIndex& block : model.layout().blocks)  // every branch outputs 0: the skips remain
        for (int entry : {block.out_weight, block.out_bias, block.fc2_weight, block.fc2_bias})
            model.write_entry(entry, std::vector<float>(model.read_entry(entry).size(), 0.0f));
    const Batch batch = testing::small_batch(kVocab, 2, 8, 4);
    model.forward_backward(batch, {.backward = false});
    const int d = config.d_model;
    std::vector<double> x = testing::embeddings(model, batch);
    for (int b = 0; b < config.layers; ++b) {
        const std::vector<double> first = testing::unit_layer_norm(x, d);  // x' = LN1(x + 0)
        std::vector<double> sum(x.size());
        for (size_t i = 0; i < x.size(); ++i) sum[i] = first[i] + x[i];  // x' + FFN(x') + x, FFN = 0
        const std::vector<double> expected = testing::unit_layer_norm(sum, d);
        const std::vector<float> actual = model.read_block_output(b);
        for (size_t i = 0; i < expected.size(); ++i)
            ASSERT_NEAR(actual[i], expected[i], 1e-4) << b << " " << i;
        x = expected;
    }
}

TEST(B2tConnection, PlacementsWithoutPostLnBlocksAreRefused) {
    for (NormPlacement placement : {NormPlacement::Pre, NormPlacement::Peri, NormPlacement::None}) {
        Config config;
        config.model.norm_placement = placement;
        config.model.residual = Residual::B2t;
        try {
            validate(config);
            ADD_FAILURE() << to_string(placement) << " was accepted";
        } catch (const InputError& error) {
            EXPECT_NE(std::string(error.what()).find("has no Post-LN blocks"), std::string::npos)
                << error.what();
        }
    }
}

// Switched on live its buffer is made and the next step trains the B2T model (its loss leaves the plain
// twin's); while on, a placement without Post-LN blocks is refused; switched off again, training goes on.
TEST(B2tConnection, SwitchesOnAndOffLive) {
    Config config = testing::small_model_config(16, 3, 8, 4, 6);
    config.model.norm_placement = NormPlacement::Post;
    Trainer plain(config), switched(config);
    plain.step();
    switched.step();
    switched.apply(parse_live_change("model.residual=b2t"));
    const double with_b2t = switched.step().record.loss;
    const double without = plain.step().record.loss;
    EXPECT_TRUE(std::isfinite(with_b2t));
    EXPECT_GT(std::abs(with_b2t - without), 1e-4);
    EXPECT_THROW(switched.apply(parse_live_change("model.norm_placement=pre")), InputError);  // no Post-LN
    switched.apply(parse_live_change("model.residual=plain"));
    EXPECT_TRUE(std::isfinite(switched.step().record.loss));
    EXPECT_NO_THROW(switched.apply(parse_live_change("model.norm_placement=pre")));
}

TEST(B2tConnection, CostsOneGradientBufferOfTheStream) {
    ModelConfig config = testing::tiny_model_config(2);
    config.norm_placement = NormPlacement::Post;
    const size_t plain = estimate_training_bytes(config, kVocab, 3, 8, NumberFormat::Fp32);
    config.residual = Residual::B2t;
    const size_t b2t = estimate_training_bytes(config, kVocab, 3, 8, NumberFormat::Fp32);
    EXPECT_EQ(b2t - plain, static_cast<size_t>(3 * 8 * config.d_model) * sizeof(float));
}

}  // namespace
}  // namespace normlab
