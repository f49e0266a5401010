// Mix-LN (model.norm_placement=mix): which blocks are Post-LN, which norms exist, and its two limits
// (fraction 0 is Pre-LN, fraction 1 is Post-LN, loss for loss on the same parameters). Its gradients are
// in test_model_gradients.cpp, its PyTorch parity in tests/parity.
#include <gtest/gtest.h>

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/model/model.h"
#include "tests/engine/model_test_support.h"

namespace normlab {
namespace {

ModelConfig mix_config(double fraction, int layers = 4) {
    ModelConfig config = testing::tiny_model_config(layers);
    config.norm_placement = NormPlacement::Mix;
    config.mix_post_fraction = fraction;
    return config;
}

TEST(MixLn, TheFirstFloorFractionOfTheBlocksArePostLn) {
    const ModelConfig quarter = mix_config(0.25, 12);
    for (int block = 0; block < 12; ++block)
        EXPECT_EQ(block_placement(quarter, block, false),
                  block < 3 ? NormPlacement::Post : NormPlacement::Pre);
    EXPECT_TRUE(has_final_norm(quarter, false));
    EXPECT_EQ(block_placement(mix_config(0.25, 3), 0, false), NormPlacement::Pre);  // floor(0.75) = 0
    EXPECT_FALSE(has_final_norm(mix_config(1.0), false));                           // every block Post-LN
    ModelConfig encoder_decoder = mix_config(0.5, 2);
    encoder_decoder.encoder_layers = 4;  // per stack: encoder blocks 0-1 Post-LN, decoder block 0
    EXPECT_EQ(block_placement(encoder_decoder, 1, true), NormPlacement::Post);
    EXPECT_EQ(block_placement(encoder_decoder, 2, true), NormPlacement::Pre);
    EXPECT_EQ(block_placement(encoder_decoder, 1, false), NormPlacement::Pre);
}

// The loss of the same parameters wired as Mix-LN at `fraction` and as `placement`.
void expect_same_loss(double fraction, NormPlacement placement) {
    const int vocab = 9;
    const Batch batch = testing::small_batch(vocab, 2, 8, 3);
    CpuBackend backend(1);
    ModelConfig plain = mix_config(fraction);
    plain.norm_placement = placement;
    Model mix(mix_config(fraction), vocab, backend), reference(plain, vocab, backend);
    for (Model* model : {&mix, &reference}) {
        model->initialize(4);
        testing::perturb_parameters(*model, 5);
    }
    EXPECT_EQ(mix.forward_backward(batch, {.backward = true, .attention_stats = true}).loss,
              reference.forward_backward(batch, {.backward = true, .attention_stats = true}).loss)
        << "fraction " << fraction;
}

TEST(MixLn, FractionZeroIsPreLnAndOneIsPostLn) {
    expect_same_loss(0.0, NormPlacement::Pre);
    expect_same_loss(1.0, NormPlacement::Post);
}

// Switching to Mix-LN live rewires block by block: the first blocks' outputs become Post-LN's.
TEST(MixLn, LiveSwitchFromPreLnChangesOnlyTheLossNotTheParameters) {
    const int vocab = 9;
    const Batch batch = testing::small_batch(vocab, 2, 8, 6);
    CpuBackend backend(1);
    ModelConfig pre = mix_config(0.5);
    pre.norm_placement = NormPlacement::Pre;
    Model model(pre, vocab, backend);
    model.initialize(7);
    testing::perturb_parameters(model, 8);
    const double pre_loss = model.forward_backward(batch, {.backward = true, .attention_stats = true}).loss;
    ModelConfig wiring = model.config();
    wiring.norm_placement = NormPlacement::Mix;
    EXPECT_TRUE(model.set_wiring(wiring).empty());  // Mix-LN uses no tensor Pre-LN lacks
    const double mix_loss = model.forward_backward(batch, {.backward = true, .attention_stats = true}).loss;
    EXPECT_NE(mix_loss, pre_loss);
    Model fresh(model.config(), vocab, backend);
    for (size_t i = 0; i < model.layout().entries.size(); ++i)
        fresh.write_entry(static_cast<int>(i), model.read_entry(static_cast<int>(i)));
    EXPECT_EQ(fresh.forward_backward(batch, {.backward = true, .attention_stats = true}).loss, mix_loss);
}

}  // namespace
}  // namespace normlab
