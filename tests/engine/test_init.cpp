// Initialisation statistics: Xavier normal / uniform and GPT-2 scales, theory mode's W_Q = W_K = 0 and
// unit-variance inputs, DeepNorm's beta on V / output / FFN only, and the active set per wiring.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/config/config.h"
#include "engine/core/errors.h"
#include "engine/model/constants.h"
#include "engine/model/model.h"

namespace normlab {
namespace {

double mean_square(const std::vector<float>& values, size_t begin = 0, size_t end = 0) {
    end = end == 0 ? values.size() : end;
    double total = 0.0;
    for (size_t i = begin; i < end; ++i) total += static_cast<double>(values[i]) * values[i];
    return total / static_cast<double>(end - begin);
}

ModelConfig wide_config() {
    ModelConfig config;
    config.d_model = 128;
    config.d_ff = 512;
    config.heads = 4;
    config.layers = 4;
    return config;
}

TEST(Init, XavierNormalVariances) {
    CpuBackend backend(1);
    Model model(wide_config(), 256, backend);
    model.initialize(1);
    const auto& layout = model.layout();
    const auto fc1 = model.read_entry(layout.find("blocks.0.ffn.fc1.weight"));
    EXPECT_NEAR(mean_square(fc1), 2.0 / (128 + 512), 0.05 * 2.0 / 640);
    const auto qkv = model.read_entry(layout.find("blocks.2.attn.qkv.weight"));
    for (int part = 0; part < 3; ++part) {  // each of q, k, v as its own d x d matrix
        EXPECT_NEAR(mean_square(qkv, part * qkv.size() / 3, (part + 1) * qkv.size() / 3), 1.0 / 128,
                    0.05 / 128);
    }
    for (float b : model.read_entry(layout.find("blocks.0.attn.qkv.bias"))) ASSERT_EQ(b, 0.0f);
    for (float g : model.read_entry(layout.find("blocks.0.norm1.weight"))) ASSERT_EQ(g, 1.0f);
}

TEST(Init, XavierUniformBoundAndGpt2Scale) {
    CpuBackend backend(1);
    ModelConfig config = wide_config();
    config.init = InitScheme::XavierUniform;
    Model uniform(config, 256, backend);
    uniform.initialize(2);
    const auto fc2 = uniform.read_entry(uniform.layout().find("blocks.1.ffn.fc2.weight"));
    const double bound = std::sqrt(6.0 / (128 + 512));
    EXPECT_LE(*std::max_element(fc2.begin(), fc2.end()), bound);
    EXPECT_GE(*std::min_element(fc2.begin(), fc2.end()), -bound);
    EXPECT_NEAR(mean_square(fc2), bound * bound / 3.0, 0.05 * bound * bound / 3.0);

    config.init = InitScheme::Gpt2;
    Model gpt2(config, 256, backend);
    gpt2.initialize(3);
    EXPECT_NEAR(std::sqrt(mean_square(gpt2.read_entry(gpt2.layout().find("blocks.0.ffn.fc1.weight")))), 0.02,
                0.001);
    EXPECT_NEAR(std::sqrt(mean_square(gpt2.read_entry(gpt2.layout().find("blocks.0.ffn.fc2.weight")))),
                0.02 / std::sqrt(8.0), 0.0005);
}

TEST(Init, TheoryModeModel) {
    CpuBackend backend(1);
    ModelConfig config = wide_config();
    config.theory_mode = true;
    config.heads = 4;  // forced to one head
    Model model(config, 256, backend);
    model.initialize(4);
    EXPECT_EQ(model.config().heads, 1);
    EXPECT_EQ(model.config().d_ff, 128);
    const auto qkv = model.read_entry(model.layout().find("blocks.0.attn.qkv.weight"));
    EXPECT_EQ(mean_square(qkv, 0, 2 * qkv.size() / 3), 0.0) << "W_Q = W_K = 0";
    EXPECT_NEAR(mean_square(qkv, 2 * qkv.size() / 3, qkv.size()), 1.0 / 128, 0.1 / 128);
    EXPECT_FALSE(model.active(model.layout().find("blocks.0.attn.out.weight"))) << "no output projection";
    // token + position embeddings: unit variance per coordinate in total
    const double token = mean_square(model.read_entry(model.layout().wte));
    const double position = mean_square(model.read_entry(model.layout().wpe));
    EXPECT_NEAR(token + position, 1.0, 0.1);
}

TEST(Init, DeepNormBetaScalesValueOutputAndFeedForwardOnly) {
    CpuBackend backend(1);
    ModelConfig config = wide_config();
    config.norm_placement = NormPlacement::Post;
    Model plain(config, 256, backend);
    plain.initialize(5);
    config.residual = Residual::DeepNorm;
    Model deep(config, 256, backend);
    deep.initialize(5);
    const double beta = deepnorm_beta(4);
    for (const char* name :
         {"blocks.3.attn.out.weight", "blocks.3.ffn.fc1.weight", "blocks.3.ffn.fc2.weight"}) {
        const int entry = plain.layout().find(name);
        EXPECT_NEAR(std::sqrt(mean_square(deep.read_entry(entry)) / mean_square(plain.read_entry(entry))),
                    beta, 1e-5)
            << name;
    }
    const int qkv = plain.layout().find("blocks.3.attn.qkv.weight");
    const auto a = plain.read_entry(qkv), b = deep.read_entry(qkv);
    const size_t third = a.size() / 3;
    EXPECT_DOUBLE_EQ(mean_square(a, 0, 2 * third), mean_square(b, 0, 2 * third)) << "Q and K untouched";
    EXPECT_NEAR(std::sqrt(mean_square(b, 2 * third, a.size()) / mean_square(a, 2 * third, a.size())), beta,
                1e-5);
}

TEST(Init, ActiveTensorsFollowTheWiring) {
    CpuBackend backend(1);
    ModelConfig config = wide_config();
    Model model(config, 256, backend);
    const auto& layout = model.layout();
    auto active = [&](const char* name) { return model.active(layout.find(name)); };
    EXPECT_TRUE(active("final_norm.weight"));
    EXPECT_FALSE(active("blocks.0.norm1_out.weight"));
    config.norm_placement = NormPlacement::Post;
    config.norm_type = NormType::RmsNorm;
    model.set_wiring(config);
    EXPECT_FALSE(active("final_norm.weight")) << "Post-LN has no final norm";
    EXPECT_FALSE(active("blocks.0.norm1.bias")) << "RMSNorm has no bias";
    config.norm_placement = NormPlacement::Peri;
    config.norm_type = NormType::DyT;
    config.residual = Residual::Admin;
    const auto activated = model.set_wiring(config);
    EXPECT_TRUE(active("blocks.0.norm2_out.alpha"));
    EXPECT_TRUE(active("blocks.0.admin_omega"));
    EXPECT_NEAR(model.read_entry(layout.find("blocks.1.admin_omega"))[1], admin_closed_omega(8), 1e-6);
    EXPECT_FLOAT_EQ(model.read_entry(layout.find("blocks.0.norm2_out.alpha"))[0], 0.5f);
    EXPECT_FALSE(activated.empty());
}

TEST(Init, DytAlphaStartsAtTheConfiguredValue) {
    // model.dyt_alpha sets every DyT norm's alpha (the DyT paper: 0.5 by default, 1.0 for LLMs).
    for (const double alpha : {0.5, 1.0, 0.25}) {
        ModelConfig config = wide_config();
        config.norm_type = NormType::DyT;
        config.norm_placement = NormPlacement::Peri;
        config.dyt_alpha = alpha;
        CpuBackend backend(1);
        Model model(config, 256, backend);
        model.initialize(1);
        for (const char* name : {"blocks.0.norm1.alpha", "blocks.1.norm2_out.alpha", "final_norm.alpha"})
            EXPECT_FLOAT_EQ(model.read_entry(model.layout().find(name))[0], static_cast<float>(alpha))
                << name;
    }
    Config bad;
    bad.model.dyt_alpha = 0.0;
    EXPECT_THROW(validate(bad), InputError);
}

}  // namespace
}  // namespace normlab
