// model.parametrization (engine/model/parametrization.h): SP exactly at the base width and depth, every
// multiplier against its formula, the init and the first Adam and SGD steps it implies measured on a
// model, the refused combinations, and muP's coordinate check (engine/analysis/coord_check.h) telling
// SP from muP over widths and seeds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/analysis/coord_check.h"
#include "engine/core/errors.h"
#include "engine/io/hf_config.h"
#include "engine/model/parametrization.h"
#include "engine/train/trainer.h"
#include "tests/engine/model_test_support.h"

namespace normlab {
namespace {

std::vector<double> losses(const Config& config, int steps) {
    Trainer trainer(config);
    std::vector<double> out;
    for (int i = 0; i < steps; ++i) out.push_back(trainer.step().record.loss);
    return out;
}

double rms(const std::vector<float>& values) {
    double total = 0.0;
    for (float v : values) total += static_cast<double>(v) * v;
    return std::sqrt(total / static_cast<double>(values.size()));
}

double largest_change(const std::vector<float>& before, const std::vector<float>& after) {
    double largest = 0.0;
    for (size_t i = 0; i < before.size(); ++i)
        largest = std::max(largest, std::fabs(double(after[i]) - before[i]));
    return largest;
}

TEST(Parametrization, MupAndCompletePAtTheirBaseAreSpBitForBit) {
    Config sp = testing::small_model_config(32, 2, 16, 4, 8);
    sp.model.init = InitScheme::Gpt2;  // the init whose hidden std muP scales
    const std::vector<double> expected = losses(sp, 8);
    Config mup = sp;
    mup.model.parametrization = Parametrization::Mup;  // base_width 0: d_model
    EXPECT_EQ(losses(mup, 8), expected);
    mup.model.base_width = 32;
    EXPECT_EQ(losses(mup, 8), expected);
    Config completep = mup;
    completep.model.parametrization = Parametrization::CompleteP;
    completep.model.base_depth = 2;
    EXPECT_EQ(losses(completep, 8), expected);
    Config wider = mup;
    wider.model.base_width = 16;  // m = 2: not SP any more
    EXPECT_NE(losses(wider, 8), expected);
}

TEST(Parametrization, MultipliersFollowTheirFormulas) {
    ModelConfig model = testing::tiny_model_config(4);  // d 16, 2 heads of 8
    model.parametrization = Parametrization::Mup;
    model.base_width = 4;  // m = 4
    EXPECT_DOUBLE_EQ(width_ratio(model), 4.0);
    EXPECT_DOUBLE_EQ(output_multiplier(model), 0.25);
    EXPECT_FLOAT_EQ(attention_logit_scale(model), static_cast<float>(1.0 / std::sqrt(8.0) / 2.0));
    EXPECT_DOUBLE_EQ(branch_multiplier(model), 1.0);
    EXPECT_EQ(embedding_init_width(model), 4);
    model.init = InitScheme::Gpt2;
    EXPECT_DOUBLE_EQ(hidden_init_gain(model), 0.5);
    model.init = InitScheme::XavierNormal;
    EXPECT_DOUBLE_EQ(hidden_init_gain(model), 1.0);

    const ParamLayout layout = build_layout(model, 11);
    const int hidden = layout.find("blocks.0.ffn.fc1.weight"), head = layout.head,
              bias = layout.find("blocks.0.ffn.fc1.bias");
    ASSERT_GE(hidden, 0);
    ASSERT_GE(bias, 0);
    EXPECT_EQ(width_class(layout, hidden), WidthClass::Hidden);
    EXPECT_EQ(width_class(layout, head), WidthClass::VectorLike);
    EXPECT_EQ(width_class(layout, layout.wte), WidthClass::VectorLike);
    const OptimizerMultipliers adam_hidden =
        optimizer_multipliers(model, OptimizerKind::AdamW, layout, hidden);
    EXPECT_DOUBLE_EQ(adam_hidden.lr, 0.25);
    EXPECT_DOUBLE_EQ(adam_hidden.weight_decay, 4.0);
    EXPECT_DOUBLE_EQ(optimizer_multipliers(model, OptimizerKind::Adam, layout, head).lr, 1.0);
    EXPECT_DOUBLE_EQ(optimizer_multipliers(model, OptimizerKind::Sgd, layout, hidden).lr, 1.0);
    const OptimizerMultipliers sgd_bias = optimizer_multipliers(model, OptimizerKind::Sgd, layout, bias);
    EXPECT_DOUBLE_EQ(sgd_bias.lr, 4.0);
    EXPECT_DOUBLE_EQ(sgd_bias.weight_decay, 0.25);

    model.parametrization = Parametrization::CompleteP;
    model.base_depth = 1;
    EXPECT_DOUBLE_EQ(branch_multiplier(model), 0.25);
    model.parametrization = Parametrization::Sp;
    EXPECT_DOUBLE_EQ(width_ratio(model), 1.0);
    EXPECT_DOUBLE_EQ(optimizer_multipliers(model, OptimizerKind::Adam, layout, hidden).lr, 1.0);
}

// GPT-2's init: hidden matrices at 0.02 / sqrt(m); the embedding stays at 0.02 (SP's draw either way).
TEST(Parametrization, GptTwoInitOfHiddenMatricesShrinksWithWidth) {
    Config config = testing::small_model_config(64, 1, 8, 2, 1);
    config.model.init = InitScheme::Gpt2;
    config.model.parametrization = Parametrization::Mup;
    config.model.base_width = 16;  // m = 4
    Trainer trainer(config);
    Model& model = trainer.model();
    EXPECT_NEAR(rms(model.read_entry(model.layout().find("blocks.0.ffn.fc1.weight"))), 0.01, 0.0005);
    EXPECT_NEAR(rms(model.read_entry(model.layout().wte)), 0.02, 0.001);
}

// Adam's first step moves each coordinate by about lr (m / sqrt(v) = sign(g)): hidden matrices by lr / m,
// the embedding by lr. SGD with m = 4 moves a bias 4 times as far as SP does.
TEST(Parametrization, FirstOptimizerStepsScaleAsTheTableSays) {
    Config config = testing::small_model_config(32, 1, 8, 2, 2);
    config.train.lr = 1e-2;
    config.model.parametrization = Parametrization::Mup;
    config.model.base_width = 8;  // m = 4
    Trainer trainer(config);
    Model& model = trainer.model();
    const int hidden = model.layout().find("blocks.0.attn.out.weight");
    const std::vector<float> hidden_before = model.read_entry(hidden),
                             wte_before = model.read_entry(model.layout().wte);
    trainer.step();
    EXPECT_NEAR(largest_change(hidden_before, model.read_entry(hidden)), 1e-2 / 4, 1e-4);
    EXPECT_NEAR(largest_change(wte_before, model.read_entry(model.layout().wte)), 1e-2, 1e-4);

    // SGD without momentum: update = -lr x multiplier x gradient, read back from the model
    auto bias_lr_multiplier = [](Parametrization parametrization) {
        Config sgd = testing::small_model_config(32, 1, 8, 2, 1);
        sgd.train.optimizer = OptimizerKind::Sgd;
        sgd.train.momentum = 0.0;
        sgd.train.lr = 1e-2;
        sgd.model.parametrization = parametrization;
        sgd.model.base_width = 8;
        Trainer trainer(sgd);
        const int bias = trainer.model().layout().find("blocks.0.ffn.fc2.bias");
        const std::vector<float> before = trainer.model().read_entry(bias);
        trainer.step();
        const std::vector<float> after = trainer.model().read_entry(bias);
        const std::vector<float> grad = trainer.model().read_entry(bias, true);
        double ratio = 0.0;
        for (size_t i = 0; i < grad.size(); ++i)
            ratio = std::max(ratio,
                             std::fabs(double(before[i]) - after[i]) / (1e-2 * std::fabs(double(grad[i]))));
        return ratio;
    };
    EXPECT_NEAR(bias_lr_multiplier(Parametrization::Sp), 1.0, 1e-3);
    EXPECT_NEAR(bias_lr_multiplier(Parametrization::Mup), 4.0, 4e-3);
}

TEST(Parametrization, RefusesWhatItIsNotDefinedFor) {
    Config config;
    config.model.parametrization = Parametrization::CompleteP;
    config.model.norm_placement = NormPlacement::Post;
    EXPECT_THROW(validate(config), InputError);
    config.model.norm_placement = NormPlacement::Pre;
    config.model.residual = Residual::ReZero;
    EXPECT_THROW(validate(config), InputError);
    config.model.residual = Residual::Plain;
    config.model.encoder_layers = 1;
    EXPECT_THROW(validate(config), InputError);
    config.model.encoder_layers = 0;
    EXPECT_NO_THROW(validate(config));
    config.model.parametrization = Parametrization::Mup;
    config.model.norm_placement = NormPlacement::Post;  // muP itself is defined for every wiring
    EXPECT_NO_THROW(validate(config));

    ModelConfig llama;
    llama.norm_type = NormType::RmsNorm;
    llama.position = Position::Rope;
    llama.ffn = FeedForward::SwiGlu;
    llama.parametrization = Parametrization::Mup;
    EXPECT_NO_THROW(hf_family_of(llama));  // at its base width muP is SP
    llama.base_width = 32;
    EXPECT_THROW(hf_family_of(llama), InputError);
}

// The coordinate check, 3 seeds: after 4 Adam steps the residual stream's RMS grows with width under SP
// (exponent 0.2 or more over widths 32-256) and stays flat under muP (within +-0.1).
TEST(CoordCheck, TellsSpFromMupOverWidths) {
    Config config = testing::small_model_config(32, 2, 16, 8, 4);
    config.train.lr = 1e-2;
    CoordCheckSettings settings{{32, 64, 128, 256}, 4, 3};
    const CoordCheckResult sp = coord_check(config, settings);
    config.model.parametrization = Parametrization::Mup;
    const CoordCheckResult mup = coord_check(config, settings);
    ASSERT_EQ(sp.values.size(), kCoordQuantities.size());
    EXPECT_EQ(mup.base_width, 32);
    const double sp_growth = sp.exponents[0].back(), mup_growth = mup.exponents[0].back();
    EXPECT_GE(sp_growth, 0.2);
    EXPECT_LT(std::fabs(mup_growth), 0.1);
    // at step 1 (the initialisation, before any update) neither grows with width
    EXPECT_LT(std::fabs(sp.exponents[0].front()), 0.1);
    EXPECT_LT(std::fabs(mup.exponents[0].front()), 0.1);
    EXPECT_THROW(coord_check(config, {{32}, 4, 1}), InputError);
    EXPECT_THROW(coord_check(config, {{32, 33}, 4, 1}), InputError);  // 2 heads do not divide 33
}

}  // namespace
}  // namespace normlab
