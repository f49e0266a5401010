// BatchNorm and PowerNorm (model.norm_type batchnorm / powernorm): the ops against the formulas computed
// here in double, their gradients against finite differences, PowerNorm's approximate backward and nu,
// the fast backend against the reference bit for bit, and in the trainer: running statistics that move
// on training steps only, validation on them, checkpoints that resume exactly, a live switch.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/io/checkpoint.h"
#include "engine/train/trainer.h"
#include "tests/engine/gradient_check.h"
#include "tests/engine/model_test_support.h"
#include "tests/support/temp_folder.h"

namespace normlab {
namespace {

using testing::random_tensor;

constexpr float kMomentum = 0.1f;
constexpr float kEps = 1e-5f;

// One feature norm's inputs and state on the host (the CPU backends work in host memory).
struct FeatureCase {
    int n = 37, d = 21;
    std::vector<float> x, w, b, running_mean, running_var, nu, mean, rstd;

    FeatureCase(int rows, int width, uint64_t seed) : n(rows), d(width) {
        x = random_tensor(static_cast<size_t>(n) * d, seed, 1.5);
        for (int r = 0; r < n; ++r)
            for (int c = 0; c < d; ++c) x[static_cast<size_t>(r) * d + c] += 0.3f * static_cast<float>(c % 5);
        w = random_tensor(d, seed + 1, 0.3);
        for (float& v : w) v += 1.0f;
        b = random_tensor(d, seed + 2, 0.2);
        running_mean = random_tensor(d, seed + 3, 0.5);
        running_var = random_tensor(d, seed + 4, 0.5);
        for (float& v : running_var) v = std::abs(v) + 0.5f;
        nu = random_tensor(d, seed + 5, 0.2);
        mean.assign(d, 0.0f);
        rstd.assign(d, 0.0f);
    }
    FeatureNormState state() {
        return {running_mean.data(), running_var.data(), nu.data(), mean.data(),
                rstd.data(),         kMomentum,          kEps};
    }
    double at(int r, int c) const { return x[static_cast<size_t>(r) * d + c]; }
};

std::vector<float> forward(Backend& backend, NormType type, FeatureCase& in, FeatureStatistics mode) {
    std::vector<float> y(in.x.size());
    backend.feature_norm_forward(type, y.data(), in.x.data(), in.w.data(), in.b.data(), in.state(), mode,
                                 in.n, in.d);
    return y;
}

// Column c's mean and biased variance (or quadratic mean) in double.
std::pair<double, double> moments(const FeatureCase& in, int c, bool centred) {
    double mean = 0.0, var = 0.0;
    if (centred) {
        for (int r = 0; r < in.n; ++r) mean += in.at(r, c);
        mean /= in.n;
    }
    for (int r = 0; r < in.n; ++r) var += (in.at(r, c) - mean) * (in.at(r, c) - mean);
    return {mean, var / in.n};
}

void expect_normalised(const std::vector<float>& y, const FeatureCase& in, const std::vector<double>& mean,
                       const std::vector<double>& var, const std::string& what) {
    for (int r = 0; r < in.n; ++r) {
        for (int c = 0; c < in.d; ++c) {
            const double expected = in.w[c] * (in.at(r, c) - mean[c]) / std::sqrt(var[c] + kEps) + in.b[c];
            ASSERT_NEAR(y[static_cast<size_t>(r) * in.d + c], expected,
                        2e-5 * std::max(1.0, std::abs(expected)))
                << what << " row " << r << " feature " << c;
        }
    }
}

TEST(FeatureNormOps, BatchNormUsesTheBatchWhileTrainingAndTheRunningStatisticsAfter) {
    CpuReferenceBackend backend(2);
    FeatureCase in(37, 21, 10);
    const std::vector<float> running_mean = in.running_mean, running_var = in.running_var;
    std::vector<double> mean(in.d), var(in.d), unbiased(in.d);
    for (int c = 0; c < in.d; ++c) {
        std::tie(mean[c], var[c]) = moments(in, c, true);
        unbiased[c] = var[c] * in.n / (in.n - 1);
    }
    expect_normalised(forward(backend, NormType::BatchNorm, in, FeatureStatistics::Batch), in, mean, var,
                      "batch");
    EXPECT_EQ(in.running_mean, running_mean) << "a Batch pass moves nothing";
    EXPECT_EQ(in.running_var, running_var);

    expect_normalised(forward(backend, NormType::BatchNorm, in, FeatureStatistics::BatchUpdating), in, mean,
                      var, "updating");
    for (int c = 0; c < in.d; ++c) {
        EXPECT_NEAR(in.running_mean[c], 0.9 * running_mean[c] + 0.1 * mean[c], 1e-6) << c;
        EXPECT_NEAR(in.running_var[c], 0.9 * running_var[c] + 0.1 * unbiased[c], 1e-5) << c;
    }
    std::vector<double> held_mean(in.running_mean.begin(), in.running_mean.end());
    std::vector<double> held_var(in.running_var.begin(), in.running_var.end());
    expect_normalised(forward(backend, NormType::BatchNorm, in, FeatureStatistics::Running), in, held_mean,
                      held_var, "running");
}

TEST(FeatureNormOps, PowerNormDividesByTheQuadraticMeanOfTheStepsBefore) {
    CpuReferenceBackend backend(2);
    FeatureCase in(29, 19, 20);
    const std::vector<float> psi2 = in.running_var;
    const std::vector<double> zero(in.d, 0.0), before(psi2.begin(), psi2.end());
    expect_normalised(forward(backend, NormType::PowerNorm, in, FeatureStatistics::BatchUpdating), in, zero,
                      before, "training");
    for (int c = 0; c < in.d; ++c) {
        EXPECT_NEAR(in.running_var[c], 0.9 * psi2[c] + 0.1 * moments(in, c, false).second, 1e-5) << c;
        EXPECT_EQ(in.mean[c], 0.0f) << "PowerNorm does not centre";
    }
    const std::vector<double> after(in.running_var.begin(), in.running_var.end());
    expect_normalised(forward(backend, NormType::PowerNorm, in, FeatureStatistics::Running), in, zero, after,
                      "evaluation");
}

// d/dx, d/dw, d/db of sum(y * R) against central differences: BatchNorm through its batch statistics,
// both on running statistics, PowerNorm in training with nu = 0 (its approximate backward is then exact).
struct GradientCase {
    NormType type;
    FeatureStatistics mode;
    const char* name;
};

class FeatureNormGradients : public ::testing::TestWithParam<GradientCase> {};

TEST_P(FeatureNormGradients, MatchFiniteDifferences) {
    const GradientCase g = GetParam();
    CpuReferenceBackend backend(1);
    FeatureCase in(13, 6, 30);
    std::fill(in.nu.begin(), in.nu.end(), 0.0f);
    const std::vector<float> weights = random_tensor(in.x.size(), 31);
    auto objective = [&] { return testing::weighted_sum(forward(backend, g.type, in, g.mode), weights); };
    objective();  // the pass whose statistics the backward reads
    std::vector<float> dx(in.x.size()), dw(in.d, 0.0f), db(in.d, 0.0f);
    backend.feature_norm_backward(g.type, dx.data(), dw.data(), db.data(), weights.data(), in.x.data(),
                                  in.w.data(), in.state(), g.mode, in.n, in.d, false);
    testing::expect_gradient_matches(std::string(g.name) + " dx", in.x, dx, objective, 1e-2f, 2e-3);
    testing::expect_gradient_matches(std::string(g.name) + " dw", in.w, dw, objective, 1e-2f, 2e-3);
    testing::expect_gradient_matches(std::string(g.name) + " db", in.b, db, objective, 1e-2f, 2e-3);
}

INSTANTIATE_TEST_SUITE_P(
    FeatureNorms, FeatureNormGradients,
    ::testing::Values(GradientCase{NormType::BatchNorm, FeatureStatistics::Batch, "BatchNormBatch"},
                      GradientCase{NormType::BatchNorm, FeatureStatistics::Running, "BatchNormRunning"},
                      GradientCase{NormType::PowerNorm, FeatureStatistics::Batch, "PowerNormBatch"},
                      GradientCase{NormType::PowerNorm, FeatureStatistics::Running, "PowerNormRunning"}),
    [](const ::testing::TestParamInfo<GradientCase>& info) { return std::string(info.param.name); });

// Algorithm 1 of Shen et al. (2020): dx = (g - nu xhat) / psi with g = w dy, then nu <- nu (1 - m Gamma)
// + m Lambda, Gamma = mean xhat^2, Lambda = mean (g - nu xhat) xhat; a Batch pass leaves nu alone.
TEST(FeatureNormOps, PowerNormApproximateBackwardAndItsMemory) {
    CpuReferenceBackend backend(2);
    FeatureCase in(23, 18, 40);
    forward(backend, NormType::PowerNorm, in, FeatureStatistics::BatchUpdating);
    const std::vector<float> nu = in.nu, rstd = in.rstd;
    const std::vector<float> dy = random_tensor(in.x.size(), 41);
    for (const FeatureStatistics mode : {FeatureStatistics::Batch, FeatureStatistics::BatchUpdating}) {
        in.nu = nu;
        std::vector<float> dx(in.x.size()), dw(in.d, 0.0f), db(in.d, 0.0f);
        backend.feature_norm_backward(NormType::PowerNorm, dx.data(), dw.data(), db.data(), dy.data(),
                                      in.x.data(), in.w.data(), in.state(), mode, in.n, in.d, false);
        for (int c = 0; c < in.d; ++c) {
            double gamma = 0.0, lambda = 0.0, gain = 0.0;
            for (int r = 0; r < in.n; ++r) {
                const size_t at = static_cast<size_t>(r) * in.d + c;
                const double xhat = in.at(r, c) * rstd[c];
                const double corrected = in.w[c] * dy[at] - nu[c] * xhat;
                ASSERT_NEAR(dx[at], rstd[c] * corrected, 1e-5 * std::max(1.0, std::abs(rstd[c] * corrected)));
                gamma += xhat * xhat / in.n;
                lambda += corrected * xhat / in.n;
                gain += dy[at] * xhat;
            }
            EXPECT_NEAR(dw[c], gain, 1e-4 * std::max(1.0, std::abs(gain))) << c;
            const double expected = mode == FeatureStatistics::Batch
                                        ? nu[c]
                                        : nu[c] * (1.0 - kMomentum * gamma) + kMomentum * lambda;
            EXPECT_NEAR(in.nu[c], expected, 1e-6) << c;
        }
    }
}

// The fast backend's tiles over its task pool give the reference's values bit for bit, accumulate_dx too.
TEST(FeatureNormOps, FastBackendMatchesTheReferenceBitForBit) {
    CpuReferenceBackend reference(1);
    CpuBackend fast(2);
    for (const NormType type : {NormType::BatchNorm, NormType::PowerNorm}) {
        for (const FeatureStatistics mode :
             {FeatureStatistics::Running, FeatureStatistics::Batch, FeatureStatistics::BatchUpdating}) {
            FeatureCase a(300, 70, 50), b(300, 70, 50);
            EXPECT_EQ(forward(reference, type, a, mode), forward(fast, type, b, mode));
            const std::vector<float> dy = random_tensor(a.x.size(), 51);
            std::vector<float> dx_a = random_tensor(a.x.size(), 52), dx_b = dx_a;
            std::vector<float> dw_a(a.d, 0.5f), dw_b = dw_a, db_a(a.d, 0.5f), db_b = db_a;
            reference.feature_norm_backward(type, dx_a.data(), dw_a.data(), db_a.data(), dy.data(),
                                            a.x.data(), a.w.data(), a.state(), mode, a.n, a.d, true);
            fast.feature_norm_backward(type, dx_b.data(), dw_b.data(), db_b.data(), dy.data(), b.x.data(),
                                       b.w.data(), b.state(), mode, b.n, b.d, true);
            EXPECT_EQ(dx_a, dx_b);
            EXPECT_EQ(dw_a, dw_b);
            EXPECT_EQ(db_a, db_b);
            EXPECT_EQ(a.running_mean, b.running_mean);
            EXPECT_EQ(a.running_var, b.running_var);
            EXPECT_EQ(a.nu, b.nu);
        }
    }
}

Config feature_norm_config(NormType type) {
    Config config = testing::small_model_config(16, 2, 16, 4, 60);
    config.model.norm_type = type;
    config.train.lr = 3e-3;
    config.telemetry.val_every = 20;
    config.threads = 2;
    return config;
}

std::vector<std::vector<float>> running_statistics(Model& model) {
    std::vector<std::vector<float>> values;
    for (const Model::StateBuffer& buffer : model.feature_norm_buffers()) {
        values.emplace_back(static_cast<size_t>(buffer.count));
        model.backend().download(values.back().data(), buffer.data, values.back().size());
    }
    return values;
}

// Training steps move the running statistics and validation reads them: the trainer's validation loss is
// the loss of the validation batches on the running statistics, not on their own.
TEST(FeatureNormTraining, StepsMoveTheRunningStatisticsAndValidationReadsThem) {
    for (const NormType type : {NormType::BatchNorm, NormType::PowerNorm}) {
        Trainer trainer(feature_norm_config(type));
        Model& model = trainer.model();
        const auto at_start = running_statistics(model);
        ASSERT_EQ(at_start.size(), 2u * 5u) << "2 blocks x 2 norms + the final norm, two vectors each";
        for (int i = 0; i < 10; ++i) trainer.step();
        const auto trained = running_statistics(model);
        EXPECT_NE(trained, at_start) << to_string(type);
        const double validation = trainer.evaluate(Split::Validation, 2);
        EXPECT_EQ(running_statistics(model), trained) << "validation moves nothing";
        EXPECT_EQ(model.feature_statistics(), FeatureStatistics::Batch) << "the mode is put back";
        Batch batch;
        double running = 0.0, own = 0.0;
        for (int i = 0; i < 2; ++i) {
            trainer.task().make_batch(Split::Validation, i, 4, 16, batch);
            model.set_feature_statistics(FeatureStatistics::Running);
            running += model.forward_backward(batch, {.backward = false}).loss / 2;
            model.set_feature_statistics(FeatureStatistics::Batch);
            own += model.forward_backward(batch, {.backward = false}).loss / 2;
        }
        EXPECT_NEAR(validation, running, 1e-6) << to_string(type);
        if (type == NormType::BatchNorm) {
            EXPECT_GT(std::abs(running - own), 1e-4) << "batch vs running";
        }
    }
}

// A validation step records both losses under BatchNorm (metrics.jsonl's val_loss_batch_stats is the
// validation batches on their own statistics), only val_loss under LayerNorm and PowerNorm (whose
// training forward divides by its running statistics already).
TEST(FeatureNormTraining, ValidationStepsRecordTheLossOnTheBatchesOwnStatisticsToo) {
    for (const NormType type : {NormType::BatchNorm, NormType::LayerNorm, NormType::PowerNorm}) {
        Trainer trainer(feature_norm_config(type));
        for (int i = 0; i < 19; ++i) EXPECT_FALSE(trainer.step().record.val_loss_batch_stats);
        const StepRecord record = trainer.step().record;  // step 20: validation
        ASSERT_TRUE(record.val_loss);
        if (type != NormType::BatchNorm) {
            EXPECT_FALSE(record.val_loss_batch_stats);
            continue;
        }
        ASSERT_TRUE(record.val_loss_batch_stats);
        EXPECT_DOUBLE_EQ(*record.val_loss_batch_stats,
                         trainer.evaluate(Split::Validation, 4, nullptr, FeatureStatistics::Batch));
        EXPECT_DOUBLE_EQ(*record.val_loss, trainer.evaluate(Split::Validation, 4));  // telemetry.val_batches
        EXPECT_NE(*record.val_loss, *record.val_loss_batch_stats);
    }
}

// The running statistics (and PowerNorm's nu) travel in the checkpoint under their documented names, so a
// resumed run goes on bit for bit.
TEST(FeatureNormTraining, CheckpointResumeContinuesExactly) {
    for (const NormType type : {NormType::BatchNorm, NormType::PowerNorm}) {
        const Config config = feature_norm_config(type);
        Trainer straight(config);
        std::vector<double> reference;
        for (int i = 0; i < 40; ++i) reference.push_back(straight.step().record.loss);
        Trainer first(config);
        for (int i = 0; i < 20; ++i) first.step();
        const testing::TestFolder folder;
        const std::string path = folder / "feature_norms.safetensors";
        save_checkpoint(first, path);
        const std::string running =
            type == NormType::BatchNorm ? "blocks.0.norm1.running_var" : "blocks.0.norm1.nu";
        const Config saved = checkpoint_config(path);
        EXPECT_EQ(saved.model.norm_type, type);
        auto resumed = load_checkpoint(path, {});
        EXPECT_EQ(running_statistics(resumed->model()), running_statistics(first.model()));
        bool named = false;
        for (const auto& buffer : resumed->model().feature_norm_buffers()) named |= buffer.name == running;
        EXPECT_TRUE(named) << running;
        for (int i = 20; i < 40; ++i)
            EXPECT_EQ(resumed->step().record.loss, reference[i]) << to_string(type) << " step " << i + 1;
    }
}

// Switched on live, a feature norm starts from fresh running statistics (mean 0, variance 1, nu 0).
TEST(FeatureNormTraining, ALiveSwitchStartsFreshStatistics) {
    Trainer trainer(feature_norm_config(NormType::BatchNorm));
    for (int i = 0; i < 5; ++i) trainer.step();
    trainer.apply({"model.norm_type", "layernorm"});
    EXPECT_TRUE(running_statistics(trainer.model()).empty()) << "LayerNorm keeps none";
    trainer.apply({"model.norm_type", "powernorm"});
    const auto fresh = running_statistics(trainer.model());
    ASSERT_FALSE(fresh.empty());
    for (size_t i = 0; i < fresh.size(); ++i)
        for (float v : fresh[i]) ASSERT_EQ(v, i % 2 == 0 ? 1.0f : 0.0f) << "psi^2 1, nu 0";
    trainer.step();
    EXPECT_NE(running_statistics(trainer.model()), fresh);
}

// PowerNorm's first training pass takes psi^2 from its batch (the final norm's: the last block's output,
// column by column), and a BatchNorm run switched to PowerNorm live trains on instead of dividing its
// stream by 1 (that switch once diverged at once).
TEST(FeatureNormTraining, PowerNormSeedsPsiFromItsFirstTrainingBatch) {
    Trainer trainer(feature_norm_config(NormType::PowerNorm));
    Model& model = trainer.model();
    const Batch batch = testing::small_batch(trainer.model().vocab(), 4, 16, 3);
    model.set_feature_statistics(FeatureStatistics::BatchUpdating);
    model.forward_backward(batch, {.backward = false});
    model.set_feature_statistics(FeatureStatistics::Batch);
    const std::vector<float> stream = model.read_block_output(1);
    const int d = model.config().d_model, n = static_cast<int>(stream.size()) / d;
    std::vector<float> psi2;
    for (const Model::StateBuffer& buffer : model.feature_norm_buffers()) {
        if (buffer.name != "final_norm.running_phi") continue;
        psi2.resize(static_cast<size_t>(buffer.count));
        model.backend().download(psi2.data(), buffer.data, psi2.size());
    }
    ASSERT_EQ(psi2.size(), static_cast<size_t>(d));
    for (int c = 0; c < d; ++c) {
        double squares = 0.0;
        for (int r = 0; r < n; ++r)
            squares += stream[static_cast<size_t>(r) * d + c] * stream[static_cast<size_t>(r) * d + c];
        EXPECT_NEAR(psi2[c], squares / n, 1e-5 * std::max(1.0, squares / n)) << c;
    }

    Trainer switched(feature_norm_config(NormType::BatchNorm));
    for (int i = 0; i < 30; ++i) switched.step();
    switched.apply({"model.norm_type", "powernorm"});
    for (int i = 0; i < 30; ++i) {
        const StepOutcome& outcome = switched.step();
        ASSERT_LT(outcome.record.loss, 6.0) << "step " << outcome.record.step;
    }
    EXPECT_EQ(switched.steps_done(), 60) << "a diverged run ends early";
}

// The per-block gap (norm_stat_gap: the 2-Wasserstein distance of the batch's and the running normal per
// feature, in running standard deviations, RMS over features) against the formula computed here from
// block 1's attention norm's input (block 0's output) and its running statistics after the pass; none
// under LayerNorm or on running statistics.
TEST(FeatureNormTraining, TheGapBetweenBatchAndRunningStatisticsPerBlock) {
    Trainer trainer(feature_norm_config(NormType::BatchNorm));
    for (int i = 0; i < 5; ++i) trainer.step();
    Model& model = trainer.model();
    const Batch batch = testing::small_batch(model.vocab(), 4, 16, 4);
    model.set_feature_statistics(FeatureStatistics::BatchUpdating);
    const ForwardStats& stats = model.forward_backward(batch, {.attention_stats = true});
    const size_t slot = static_cast<size_t>(SublayerSlots(model.config()).of(kAttentionSublayer, 1));
    const double measured = stats.sublayers.norm_stat_gap.at(slot);
    model.set_feature_statistics(FeatureStatistics::Batch);
    const std::vector<float> x = model.read_block_output(0);
    std::vector<float> running_mean, running_var;
    for (const Model::StateBuffer& buffer : model.feature_norm_buffers()) {
        std::vector<float>* into = buffer.name == "blocks.1.norm1.running_mean"  ? &running_mean
                                   : buffer.name == "blocks.1.norm1.running_var" ? &running_var
                                                                                 : nullptr;
        if (!into) continue;
        into->resize(static_cast<size_t>(buffer.count));
        model.backend().download(into->data(), buffer.data, into->size());
    }
    const int d = model.config().d_model, n = static_cast<int>(x.size()) / d;
    ASSERT_EQ(running_var.size(), static_cast<size_t>(d));
    double sum = 0.0;
    for (int c = 0; c < d; ++c) {
        double mean = 0.0, var = 0.0;
        for (int r = 0; r < n; ++r) mean += x[static_cast<size_t>(r) * d + c] / n;
        for (int r = 0; r < n; ++r) {
            const double dev = x[static_cast<size_t>(r) * d + c] - mean;
            var += dev * dev / n;
        }
        const double sigma_running = std::sqrt(running_var[c] + kEps), sigma_batch = std::sqrt(var + kEps);
        sum += ((mean - running_mean[c]) * (mean - running_mean[c]) +
                (sigma_batch - sigma_running) * (sigma_batch - sigma_running)) /
               (sigma_running * sigma_running);
    }
    EXPECT_NEAR(measured, std::sqrt(sum / d), 1e-4 * std::sqrt(sum / d));
    EXPECT_GT(measured, 0.0);

    model.set_feature_statistics(FeatureStatistics::Running);
    for (double gap : model.forward_backward(batch, {.attention_stats = true}).sublayers.norm_stat_gap)
        EXPECT_FALSE(recorded(gap));
    model.set_feature_statistics(FeatureStatistics::Batch);
    Trainer layer_norm(feature_norm_config(NormType::LayerNorm));
    const StepRecord record = layer_norm.step().record;
    ASSERT_FALSE(record.layers.empty());
    EXPECT_FALSE(recorded(record.layers[0].norm1_stat_gap));
    Trainer batch_norm(feature_norm_config(NormType::BatchNorm));
    EXPECT_TRUE(recorded(batch_norm.step().record.layers[1].norm2_stat_gap));
}

}  // namespace
}  // namespace normlab
