// LayerNorm Scaling (model.residual=lns, Sun et al. 2025): block l's input norms' outputs x 1/sqrt(l).
// Checked against its definition: the same model with plain residuals whose input norms' gains and biases
// are divided by sqrt(l) computes the same loss and gradients (the gains' scaled by the chain rule);
// placements without input norms are refused; the scheme switches on live.
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

constexpr int kVocab = 11;

ModelConfig lns_config(NormPlacement placement, NormType type, int encoder_layers = 0) {
    ModelConfig config = testing::tiny_model_config(3);
    config.norm_placement = placement;
    config.norm_type = type;
    config.encoder_layers = encoder_layers;
    config.mix_post_fraction = 0.34;  // Mix-LN: block 0 Post-LN (no input norm), blocks 1, 2 Pre-LN
    config.activation = Activation::Gelu;
    config.residual = Residual::Lns;
    return config;
}

// The input norms' parameter entries of every block with input norms, each with its block's 1/sqrt(l).
struct ScaledEntry {
    int entry;
    float factor;
};
std::vector<ScaledEntry> input_norm_entries(const Model& model, const ModelConfig& config) {
    std::vector<ScaledEntry> out;
    const ParamLayout& layout = model.layout();
    auto add_stack = [&](const std::vector<BlockIndex>& blocks) {
        for (size_t b = 0; b < blocks.size(); ++b) {
            const bool post = config.norm_placement == NormPlacement::Mix &&
                              b < static_cast<size_t>(std::floor(config.mix_post_fraction * blocks.size()));
            if (post) continue;
            const float factor = static_cast<float>(1.0 / std::sqrt(static_cast<double>(b + 1)));
            for (const NormIndex* norm : {&blocks[b].norm1, &blocks[b].norm2, &blocks[b].norm_cross})
                for (int entry : {norm->weight, norm->bias})  // DyT's alpha scales its input: kept
                    if (entry >= 0 && model.active(entry)) out.push_back({entry, factor});
        }
    };
    add_stack(layout.blocks);
    add_stack(layout.encoder_blocks);
    return out;
}

template <class B>
void expect_scaled_norms_match(const ModelConfig& config, const std::string& label) {
    B backend_lns(1), backend_plain(1);
    ModelConfig plain_config = config;
    plain_config.residual = Residual::Plain;
    Model lns(config, kVocab, backend_lns), plain(plain_config, kVocab, backend_plain);
    lns.initialize(4);
    testing::perturb_parameters(lns, 5);
    for (size_t i = 0; i < lns.layout().entries.size(); ++i)
        plain.write_entry(static_cast<int>(i), lns.read_entry(static_cast<int>(i)));
    const std::vector<ScaledEntry> scaled = input_norm_entries(plain, config);
    ASSERT_FALSE(scaled.empty()) << label;
    for (const ScaledEntry& s : scaled) {
        std::vector<float> values = plain.read_entry(s.entry);
        for (float& v : values) v *= s.factor;
        plain.write_entry(s.entry, values);
    }
    const Batch batch = testing::small_batch(kVocab, 3, 8, 6);
    const double loss_lns = lns.forward_backward(batch, {.backward = true}).loss;
    const double loss_plain = plain.forward_backward(batch, {.backward = true}).loss;
    EXPECT_NEAR(loss_lns, loss_plain, 1e-5 * std::abs(loss_plain)) << label;
    for (size_t i = 0; i < lns.layout().entries.size(); ++i) {
        const int entry = static_cast<int>(i);
        if (!lns.active(entry)) continue;
        std::vector<float> expected = plain.read_entry(entry, true);
        for (const ScaledEntry& s : scaled)  // L_lns(g) = L_plain(g / sqrt l): dL/dg = dL_plain / sqrt l
            if (s.entry == entry)
                for (float& v : expected) v *= s.factor;
        const std::vector<float> actual = lns.read_entry(entry, true);
        double worst = 0.0, largest = 1e-6;
        for (size_t j = 0; j < actual.size(); ++j) {
            worst = std::max(worst, static_cast<double>(std::abs(actual[j] - expected[j])));
            largest = std::max(largest, static_cast<double>(std::abs(expected[j])));
        }
        EXPECT_LT(worst / largest, 1e-4) << label << ": " << lns.layout().entries[i].name;
    }
}

TEST(LayerNormScaling, IsPlainWithInputNormsDividedBySqrtOfTheBlockIndex) {
    for (NormType type : {NormType::LayerNorm, NormType::RmsNorm, NormType::DyT})
        for (NormPlacement placement : {NormPlacement::Pre, NormPlacement::Peri, NormPlacement::Mix}) {
            const std::string label = to_string(placement) + "/" + to_string(type);
            expect_scaled_norms_match<CpuReferenceBackend>(lns_config(placement, type), "reference " + label);
            expect_scaled_norms_match<CpuBackend>(lns_config(placement, type), "fast " + label);
        }
    // an encoder-decoder: each stack counts its blocks from 1; the cross-attention norm is an input norm
    expect_scaled_norms_match<CpuBackend>(lns_config(NormPlacement::Pre, NormType::LayerNorm, 2),
                                          "encoder-decoder");
}

TEST(LayerNormScaling, PlacementsWithoutInputNormsAreRefused) {
    for (NormPlacement placement : {NormPlacement::Post, NormPlacement::None}) {
        Config config;
        config.model.norm_placement = placement;
        config.model.residual = Residual::Lns;
        try {
            validate(config);
            ADD_FAILURE() << to_string(placement) << " was accepted";
        } catch (const InputError& error) {
            EXPECT_NE(std::string(error.what()).find("has no input norms"), std::string::npos)
                << error.what();
        }
    }
}

// Switched on live, the next step trains the scaled model: its loss is the scaled model's.
TEST(LayerNormScaling, SwitchesOnLive) {
    Config config = testing::small_model_config(16, 3, 8, 4, 4);
    config.model.norm_placement = NormPlacement::Pre;
    Trainer trainer(config);
    trainer.step();
    Trainer expected(config);
    expected.step();
    trainer.apply(parse_live_change("model.residual=lns"));
    EXPECT_EQ(trainer.config().model.residual, Residual::Lns);
    const double with_lns = trainer.step().record.loss;
    const double without = expected.step().record.loss;
    EXPECT_GT(std::abs(with_lns - without), 1e-4) << "the scaled norms change the second step's loss";
    EXPECT_THROW(trainer.apply(parse_live_change("model.norm_placement=post")), InputError);
}

}  // namespace
}  // namespace normlab
