// Norm-free inference (probe --freeze-norms): the frozen-scale norm ops against their formula and finite
// differences, the model's list of scaled norms and their measured scales against direct computation,
// and the probe on a trained model across seeds (fine-tuning recovers what freezing all at once loses).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <stdexcept>

#include "engine/analysis/norm_freezing.h"
#include "engine/backend/cpu/cpu_backend.h"
#include "engine/backend/cpu/cpu_reference_backend.h"
#include "engine/config/presets.h"
#include "engine/core/errors.h"
#include "engine/io/checkpoint.h"
#include "engine/model/model.h"
#include "engine/train/trainer.h"
#include "tests/engine/gradient_check.h"
#include "tests/engine/model_test_support.h"
#include "tests/support/temp_folder.h"

namespace normlab {
namespace {

using testing::expect_close;
using testing::expect_gradient_matches;
using testing::random_tensor;
using testing::weighted_sum;

class FrozenNormOps : public ::testing::TestWithParam<NormType> {};

// y = g (x - mean) c + b (RMSNorm: g x c) with the fixed c, and the gradients of a frozen scale.
TEST_P(FrozenNormOps, FormulaAndFiniteDifferencesOnBothCpuBackends) {
    const NormType type = GetParam();
    const int n = 5, d = 12;
    const float rstd = 0.8f;
    auto x = random_tensor(n * d, 21, 2.0), w = random_tensor(d, 22), b = random_tensor(d, 23);
    const auto weights = random_tensor(n * d, 24);
    CpuReferenceBackend reference(2);
    CpuBackend fast(2);
    for (Backend* backend : {static_cast<Backend*>(&reference), static_cast<Backend*>(&fast)}) {
        std::vector<float> y(n * d), stats(2 * n);
        auto objective = [&] {
            backend->frozen_norm_forward(type, y.data(), stats.data(), x.data(), w.data(), b.data(), rstd, n,
                                         d);
            return weighted_sum(y, weights);
        };
        objective();
        for (int row = 0; row < n; ++row) {
            double mean = 0.0;
            for (int i = 0; i < d; ++i) mean += x[row * d + i];
            mean = type == NormType::LayerNorm ? mean / d : 0.0;
            EXPECT_FLOAT_EQ(stats[2 * row + 1], rstd);
            for (int i = 0; i < d; ++i) {
                const double bias = type == NormType::LayerNorm ? b[i] : 0.0;
                EXPECT_NEAR(y[row * d + i], w[i] * (x[row * d + i] - mean) * rstd + bias, 1e-5);
            }
        }
        std::vector<float> dx(n * d, 0.0f), dw(d, 0.0f), db(d, 0.0f);
        backend->frozen_norm_backward(type, dx.data(), dw.data(),
                                      type == NormType::RmsNorm ? nullptr : db.data(), weights.data(),
                                      x.data(), stats.data(), w.data(), n, d, false);
        expect_gradient_matches("frozen dx", x, dx, objective, 1e-2f, 1e-3);
        expect_gradient_matches("frozen dw", w, dw, objective);
        if (type == NormType::LayerNorm) expect_gradient_matches("frozen db", b, db, objective);
    }
}

INSTANTIATE_TEST_SUITE_P(ScaledNorms, FrozenNormOps,
                         ::testing::Values(NormType::LayerNorm, NormType::RmsNorm),
                         [](const auto& info) { return to_string(info.param); });

TEST(FrozenNormOps, RefuseDyTAndScalesThatAreNotPositive) {
    CpuReferenceBackend backend(1);
    std::vector<float> y(4), stats(2), x(4, 1.0f), w(4, 1.0f), b(4, 0.0f);
    EXPECT_THROW(backend.frozen_norm_forward(NormType::DyT, y.data(), stats.data(), x.data(), w.data(),
                                             b.data(), 1.0f, 1, 4),
                 std::invalid_argument);
    for (float rstd : {0.0f, -1.0f, std::nanf("")}) {
        EXPECT_THROW(backend.frozen_norm_forward(NormType::LayerNorm, y.data(), stats.data(), x.data(),
                                                 w.data(), b.data(), rstd, 1, 4),
                     std::invalid_argument);
    }
}

ModelConfig wired(NormPlacement placement, NormType type, int layers, int encoder_layers = 0) {
    ModelConfig config = testing::tiny_model_config(layers);
    config.norm_placement = placement;
    config.norm_type = type;
    config.encoder_layers = encoder_layers;
    return config;
}

size_t scaled_norm_count(const ModelConfig& config) {
    CpuBackend backend(1);
    Model model(config, 11, backend);
    return model.scaled_norms().size();
}

// One per sub-layer (two with Peri-LN) plus the final norm where the placement has one; none for DyT.
TEST(FrozenNorms, ScaledNormsOfEveryPlacement) {
    const int layers = 3;
    EXPECT_EQ(scaled_norm_count(wired(NormPlacement::Pre, NormType::LayerNorm, layers)), 2u * layers + 1);
    EXPECT_EQ(scaled_norm_count(wired(NormPlacement::Post, NormType::RmsNorm, layers)), 2u * layers);
    EXPECT_EQ(scaled_norm_count(wired(NormPlacement::Peri, NormType::LayerNorm, layers)), 4u * layers + 1);
    EXPECT_EQ(scaled_norm_count(wired(NormPlacement::None, NormType::LayerNorm, layers)), 0u);
    EXPECT_EQ(scaled_norm_count(wired(NormPlacement::Pre, NormType::DyT, layers)), 0u);
    // encoder-decoder: the decoder's 3 per block and final norm, the encoder's 2 per block and final norm
    EXPECT_EQ(scaled_norm_count(wired(NormPlacement::Pre, NormType::LayerNorm, layers, 2)),
              3u * layers + 1 + 5);
}

// The final norm's input is the last block's output: its mean per-token sqrt(Var + eps), directly.
TEST(FrozenNorms, MeanStdOfTheFinalNormIsThatOfTheLastBlockOutput) {
    const ModelConfig config = wired(NormPlacement::Pre, NormType::LayerNorm, 2);
    CpuBackend backend(1);
    Model model(config, 11, backend);
    model.initialize(3);
    testing::perturb_parameters(model, 4);
    model.forward_backward(testing::small_batch(11, 3, config.seq_len, 5), {.backward = false});
    const std::vector<float> output = model.read_block_output(config.layers - 1);
    const int d = config.d_model;
    const size_t rows = output.size() / d;
    double expected = 0.0;
    for (size_t row = 0; row < rows; ++row) {
        double mean = 0.0, variance = 0.0;
        for (int i = 0; i < d; ++i) mean += output[row * d + i] / d;
        for (int i = 0; i < d; ++i)
            variance += (output[row * d + i] - mean) * (output[row * d + i] - mean) / d;
        expected += std::sqrt(variance + config.norm_eps) / static_cast<double>(rows);
    }
    const std::vector<Model::NormStdSums> sums = model.norm_std_sums();
    ASSERT_EQ(sums.size(), model.scaled_norms().size());
    EXPECT_EQ(sums.back().tokens, rows);
    EXPECT_NEAR(sums.back().sum / static_cast<double>(rows), expected, 1e-5 * expected);
}

// Freezing moves the loss and the gradients; unfreezing gives the per-token scale back exactly.
TEST(FrozenNorms, FreezingChangesThePassAndUnfreezingRestoresIt) {
    const ModelConfig config = wired(NormPlacement::Peri, NormType::RmsNorm, 2);
    CpuBackend backend(1);
    Model model(config, 11, backend);
    model.initialize(3);
    testing::perturb_parameters(model, 4);
    const Batch batch = testing::small_batch(11, 2, config.seq_len, 5);
    const double before = model.forward_backward(batch, {.backward = true}).loss;
    const std::vector<float> grads_before = model.read_entry(model.layout().head, true);
    const std::vector<int> norms = model.scaled_norms();
    for (int entry : norms) model.freeze_norm(entry, 1.3);
    EXPECT_TRUE(model.norm_frozen(norms.front()));
    const double frozen = model.forward_backward(batch, {.backward = true}).loss;
    EXPECT_GT(std::fabs(frozen - before), 1e-3);
    EXPECT_NE(model.read_entry(model.layout().head, true), grads_before);
    for (int entry : norms) model.freeze_norm(entry, 0.0);
    EXPECT_EQ(model.forward_backward(batch, {.backward = true}).loss, before);
    EXPECT_EQ(model.read_entry(model.layout().head, true), grads_before);
    EXPECT_THROW(model.freeze_norm(model.layout().head, 1.0), std::invalid_argument);
    EXPECT_THROW(model.freeze_norm(norms.front(), -1.0), std::invalid_argument);
}

// Heimersheim's order: every FFN sub-layer's norm, then every attention sub-layer's, then the final norm.
TEST(FrozenNorms, FfnFirstOrderAndForwardOrder) {
    CpuBackend backend(1);
    Model model(wired(NormPlacement::Pre, NormType::LayerNorm, 2), 11, backend);
    auto names = [&](FreezeOrder order) {
        std::vector<std::string> result;
        for (int entry : freezing_order(model, order)) result.push_back(model.layout().entries[entry].name);
        return result;
    };
    EXPECT_EQ(
        names(FreezeOrder::FfnFirst),
        (std::vector<std::string>{"blocks.0.norm2.weight", "blocks.1.norm2.weight", "blocks.0.norm1.weight",
                                  "blocks.1.norm1.weight", "final_norm.weight"}));
    EXPECT_EQ(
        names(FreezeOrder::Forward),
        (std::vector<std::string>{"blocks.0.norm1.weight", "blocks.0.norm2.weight", "blocks.1.norm1.weight",
                                  "blocks.1.norm2.weight", "final_norm.weight"}));
    EXPECT_EQ(freeze_order_from_string("forward"), FreezeOrder::Forward);
    EXPECT_THROW(freeze_order_from_string("backward"), InputError);
}

// Spearman's rank correlation by hand: perfect, reversed, and with a tie (ranks 1.5 1.5 3 against
// 1 2 3: 1.5 / sqrt(1.5 x 2)).
TEST(FrozenNorms, RankCorrelationByHand) {
    EXPECT_DOUBLE_EQ(rank_correlation({0.1, 0.5, 0.2}, {1.0, 9.0, 2.0}), 1.0);
    EXPECT_DOUBLE_EQ(rank_correlation({1.0, 2.0, 3.0, 4.0}, {8.0, 6.0, 4.0, 2.0}), -1.0);
    EXPECT_NEAR(rank_correlation({1.0, 1.0, 2.0}, {1.0, 2.0, 3.0}), 1.5 / std::sqrt(3.0), 1e-12);
    EXPECT_TRUE(std::isnan(rank_correlation({1.0, 2.0}, {1.0, 2.0})));
}

// A 4-block Pre-LN byte model trained briefly, then probed: freezing all norms at once costs more than
// any one alone, and fine-tuning with the norms frozen one by one recovers most of it (Heimersheim's
// finding), across 3 seeds.
TEST(FreezeNormsProbe, FineTuningRecoversWhatFreezingAllAtOnceLoses) {
    const testing::TestFolder scratch;
    const std::filesystem::path& folder = scratch.dir;
    for (uint64_t seed : {1u, 2u, 3u}) {
        Config config = preset_config("quickstart");
        config.train.seed = seed;
        config.train.steps = 300;
        config.telemetry.val_every = 0;
        config.threads = 2;
        const std::string checkpoint = (folder / ("seed" + std::to_string(seed) + ".safetensors")).string();
        {
            Trainer trainer(config);
            while (!trainer.finished()) trainer.step();
            save_checkpoint(trainer, checkpoint);
        }
        auto trainer = load_checkpoint(checkpoint, {});
        NormFreezingResult result = freeze_norms_probe(*trainer, 4);
        double worst_single = 0.0;
        for (const FrozenNorm& norm : result.one_at_a_time) {
            ASSERT_TRUE(std::isfinite(norm.loss)) << norm.name;
            EXPECT_GT(norm.scale.mean_std, 0.0) << norm.name;
            EXPECT_GT(norm.scale.cv, 0.0) << norm.name;
            worst_single = std::max(worst_single, norm.loss - result.baseline_loss);
        }
        const double all_at_once = result.all_at_once_loss - result.baseline_loss;
        EXPECT_GT(all_at_once, worst_single) << "seed " << seed;
        EXPECT_GT(all_at_once, 0.1) << "seed " << seed;
        const int steps = 20 * static_cast<int>(result.one_at_a_time.size());
        const std::vector<std::string> constant_lr = {"train.schedule=constant", "train.warmup_steps=0",
                                                      "train.lr=3e-4",
                                                      "train.steps=" + std::to_string(300 + steps)};
        auto frozen = load_checkpoint(checkpoint, constant_lr);
        auto control = load_checkpoint(checkpoint, constant_lr);
        finetune_with_frozen_norms(*frozen, *control, {20, FreezeOrder::FfnFirst}, result);
        ASSERT_EQ(result.stages.size(), result.one_at_a_time.size());
        EXPECT_EQ(frozen->steps_done(), 300 + steps);
        EXPECT_EQ(control->steps_done(), 300 + steps);
        const double finetuned = result.stages.back().loss_after - result.control_loss;
        EXPECT_LT(finetuned, 0.5 * all_at_once)
            << "seed " << seed << ": fine-tuned " << finetuned << " vs all at once " << all_at_once;
    }
}

}  // namespace
}  // namespace normlab
