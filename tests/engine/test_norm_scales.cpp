// The per-norm scale telemetry (Model::measure_norm_scales): the mean and coefficient of variation over
// tokens of a norm's per-token scale 1/std, against direct computation on the first block's input.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/model/model.h"
#include "tests/engine/model_test_support.h"

namespace normlab {
namespace {

ModelConfig scale_config(NormPlacement placement, NormType type) {
    ModelConfig config = testing::tiny_model_config();
    config.norm_placement = placement;
    config.norm_type = type;
    return config;
}

// Pre-LN's first norm reads the embeddings, wte[token] + wpe[position]: its scale per token is
// 1 / sqrt(var + eps) (LayerNorm) or 1 / sqrt(mean square + eps) (RMSNorm).
TEST(NormScales, FirstPreLnNormMatchesTheEmbeddingsStatistics) {
    for (NormType type : {NormType::LayerNorm, NormType::RmsNorm}) {
        CpuBackend backend(1);
        const int vocab = 9, d = 16;
        Model model(scale_config(NormPlacement::Pre, type), vocab, backend);
        model.initialize(2);
        testing::perturb_parameters(model, 3);
        const Batch batch = testing::small_batch(vocab, 3, 8, 4);
        const ForwardStats& stats = model.forward_backward(batch, false, true);
        const std::vector<float> wte = model.read_entry(model.layout().wte);
        const std::vector<float> wpe = model.read_entry(model.layout().wpe);
        double sum = 0.0, squares = 0.0;
        const int rows = batch.batch * batch.seq;
        for (int row = 0; row < rows; ++row) {
            double mean = 0.0, second = 0.0;
            for (int i = 0; i < d; ++i) {
                const double x = wte[batch.inputs[row] * d + i] + wpe[(row % batch.seq) * d + i];
                mean += x / d;
                second += x * x / d;
            }
            const double variance = type == NormType::LayerNorm ? second - mean * mean : second;
            const double scale = 1.0 / std::sqrt(variance + 1e-5);
            sum += scale;
            squares += scale * scale;
        }
        const double mean = sum / rows;
        const double cv = std::sqrt(squares / rows - mean * mean) / mean;
        EXPECT_NEAR(stats.norm_scale_mean[0], mean, 1e-4 * mean) << to_string(type);
        EXPECT_NEAR(stats.norm_scale_cv[0], cv, 1e-3 * cv + 1e-6) << to_string(type);
        EXPECT_GT(cv, 0.01);                       // the tokens' scales do differ
        EXPECT_GT(stats.norm_scale_mean[3], 0.0);  // block 1's FFN norm is measured too
    }
}

// Post-LN measures the norm after each sum; DyT and no norm have no per-token scale (0).
TEST(NormScales, PostLnIsMeasuredDytAndNoNormAreZero) {
    const int vocab = 9;
    const Batch batch = testing::small_batch(vocab, 2, 8, 5);
    for (const auto& [placement, type, measured] :
         {std::tuple{NormPlacement::Post, NormType::LayerNorm, true},
          std::tuple{NormPlacement::Pre, NormType::DyT, false},
          std::tuple{NormPlacement::None, NormType::LayerNorm, false}}) {
        CpuBackend backend(1);
        Model model(scale_config(placement, type), vocab, backend);
        model.initialize(6);
        const ForwardStats& stats = model.forward_backward(batch, false, true);
        ASSERT_EQ(stats.norm_scale_mean.size(), 4u);
        for (size_t slot = 0; slot < 4; ++slot) {
            if (measured) {
                EXPECT_GT(stats.norm_scale_mean[slot], 0.0) << slot;
                EXPECT_GT(stats.norm_scale_cv[slot], 0.0) << slot;
            } else {
                EXPECT_EQ(stats.norm_scale_mean[slot], 0.0) << slot;
            }
        }
    }
}

}  // namespace
}  // namespace normlab
