// The per-norm scale telemetry (Model::measure_norm_scales): the mean and coefficient of variation over
// tokens of a norm's per-token scale 1/std, against direct computation on the norm's input: the first
// block's norm, Peri-LN's output norm, the final norms, the encoder's and the cross-attention norms;
// and their way into metrics records and back.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/io/metrics_line_parser.h"
#include "engine/io/records_json.h"
#include "engine/model/model.h"
#include "engine/train/trainer.h"
#include "tests/engine/model_test_support.h"

namespace normlab {
namespace {
using testing::embeddings;
using testing::to_double;

ModelConfig scale_config(NormPlacement placement, NormType type) {
    ModelConfig config = testing::tiny_model_config();
    config.norm_placement = placement;
    config.norm_type = type;
    return config;
}

// The mean and coefficient of variation over the rows of x [rows, d] of LayerNorm's per-token scale
// 1 / sqrt(var + eps).
struct ScaleMoments {
    double mean = 0.0, cv = 0.0;
};
ScaleMoments layer_norm_scales(const std::vector<double>& x, int d) {
    const size_t rows = x.size() / static_cast<size_t>(d);
    double sum = 0.0, squares = 0.0;
    for (size_t row = 0; row < rows; ++row) {
        double mean = 0.0, second = 0.0;
        for (int i = 0; i < d; ++i) {
            mean += x[row * d + i] / d;
            second += x[row * d + i] * x[row * d + i] / d;
        }
        const double scale = 1.0 / std::sqrt(second - mean * mean + 1e-5);
        sum += scale;
        squares += scale * scale;
    }
    const double mean = sum / static_cast<double>(rows);
    return {mean, std::sqrt(squares / static_cast<double>(rows) - mean * mean) / mean};
}

// y [rows, out] = x [rows, in] W^T + b for the rows [first_row, first_row + out) of a weight entry.
std::vector<double> linear(Model& model, const std::vector<double>& x, int weight, int bias, int first_row,
                           int out) {
    const int in = model.config().d_model;
    const std::vector<float> w = model.read_entry(weight);
    const std::vector<float> b =
        bias >= 0 ? model.read_entry(bias) : std::vector<float>(first_row + out, 0.0f);
    std::vector<double> y;
    for (size_t row = 0; row < x.size() / in; ++row) {
        for (int o = 0; o < out; ++o) {
            double value = b[first_row + o];
            for (int i = 0; i < in; ++i)
                value += static_cast<double>(w[(first_row + o) * in + i]) * x[row * in + i];
            y.push_back(value);
        }
    }
    return y;
}

// LayerNorm of x [rows, d] with a norm's gain and bias.
std::vector<double> layer_norm(Model& model, const std::vector<double>& x, const NormIndex& norm) {
    const int d = model.config().d_model;
    const std::vector<float> gain = model.read_entry(norm.weight);
    const std::vector<float> bias =
        norm.bias >= 0 ? model.read_entry(norm.bias) : std::vector<float>(d, 0.0f);
    std::vector<double> y(x.size());
    for (size_t row = 0; row < x.size() / d; ++row) {
        double mean = 0.0, second = 0.0;
        for (int i = 0; i < d; ++i) {
            mean += x[row * d + i] / d;
            second += x[row * d + i] * x[row * d + i] / d;
        }
        const double rstd = 1.0 / std::sqrt(second - mean * mean + 1e-5);
        for (int i = 0; i < d; ++i) y[row * d + i] = gain[i] * (x[row * d + i] - mean) * rstd + bias[i];
    }
    return y;
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
        const ForwardStats& stats = model.forward_backward(batch, {.attention_stats = true});
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
        EXPECT_NEAR(stats.sublayers.norm_scale_mean[0], mean, 1e-4 * mean) << to_string(type);
        EXPECT_NEAR(stats.sublayers.norm_scale_cv[0], cv, 1e-3 * cv + 1e-6) << to_string(type);
        EXPECT_GT(cv, 0.01);                                 // the tokens' scales do differ
        EXPECT_GT(stats.sublayers.norm_scale_mean[3], 0.0);  // block 1's FFN norm is measured too
    }
}

// Post-LN measures the norm after each sum; DyT and no norm have no per-token scale (0).
TEST(NormScales, PostLnIsMeasuredDytAndNoNormAreNotRecorded) {
    const int vocab = 9;
    const Batch batch = testing::small_batch(vocab, 2, 8, 5);
    for (const auto& [placement, type, measured] :
         {std::tuple{NormPlacement::Post, NormType::LayerNorm, true},
          std::tuple{NormPlacement::Pre, NormType::DyT, false},
          std::tuple{NormPlacement::None, NormType::LayerNorm, false}}) {
        CpuBackend backend(1);
        Model model(scale_config(placement, type), vocab, backend);
        model.initialize(6);
        const ForwardStats& stats = model.forward_backward(batch, {.attention_stats = true});
        ASSERT_EQ(stats.sublayers.norm_scale_mean.size(), 4u);
        for (size_t slot = 0; slot < 4; ++slot) {
            if (measured) {
                EXPECT_GT(stats.sublayers.norm_scale_mean[slot], 0.0) << slot;
                EXPECT_GT(stats.sublayers.norm_scale_cv[slot], 0.0) << slot;
            } else {
                EXPECT_FALSE(recorded(stats.sublayers.norm_scale_mean[slot])) << slot;
                EXPECT_FALSE(recorded(stats.sublayers.norm_scale_cv[slot])) << slot;
            }
        }
    }
}

// Peri-LN's output norm of the first attention sub-layer: with one token per sequence attention passes
// the values through, so its input is F(u) = W_o (W_v u + b_v) + b_o with u = Norm_in(embeddings).
TEST(NormScales, PeriLnOutputNormMatchesTheAttentionBranch) {
    CpuBackend backend(1);
    const int vocab = 9, d = 16;
    Model model(scale_config(NormPlacement::Peri, NormType::LayerNorm), vocab, backend);
    model.initialize(2);
    testing::perturb_parameters(model, 3);
    const Batch batch = testing::small_batch(vocab, 12, 1, 4);
    const ForwardStats& stats = model.forward_backward(batch, {.attention_stats = true});
    const BlockIndex& index = model.layout().blocks[0];
    const std::vector<double> u = layer_norm(model, embeddings(model, batch), index.norm1);
    const std::vector<double> v = linear(model, u, index.qkv_weight, index.qkv_bias, 2 * d, d);
    const ScaleMoments expected =
        layer_norm_scales(linear(model, v, index.out_weight, index.out_bias, 0, d), d);
    const SublayerSlots slots(model.config());
    const size_t attention = static_cast<size_t>(slots.of(kAttentionSublayer, 0));
    ASSERT_EQ(stats.sublayers.norm_out_scale_mean.size(), stats.sublayers.norm_scale_mean.size());
    EXPECT_NEAR(stats.sublayers.norm_out_scale_mean[attention], expected.mean, 1e-4 * expected.mean);
    EXPECT_NEAR(stats.sublayers.norm_out_scale_cv[attention], expected.cv, 1e-3 * expected.cv + 1e-6);
    EXPECT_GT(expected.cv, 0.01);
    EXPECT_GT(stats.sublayers.norm_out_scale_mean[slots.of(kFeedForwardSublayer, 1)], 0.0);  // every Norm_out
}

// The final norm reads the last block's output; the encoder's first norm the embeddings, its second
// block's the first block's output.
TEST(NormScales, FinalNormAndEncoderNormsMatchTheirInputs) {
    CpuBackend backend(1);
    const int vocab = 9, d = 16;
    ModelConfig config = scale_config(NormPlacement::Pre, NormType::LayerNorm);
    config.encoder_layers = 2;
    Model model(config, vocab, backend);
    model.initialize(5);
    testing::perturb_parameters(model, 6);
    const Batch batch = testing::small_batch(vocab, 3, 8, 7);
    const ForwardStats& stats = model.forward_backward(batch, {.attention_stats = true});
    const SublayerSlots slots(model.config());
    auto expect_moments = [&](double mean, double cv, const std::vector<double>& input, const char* what) {
        const ScaleMoments expected = layer_norm_scales(input, d);
        EXPECT_NEAR(mean, expected.mean, 1e-4 * expected.mean) << what;
        EXPECT_NEAR(cv, expected.cv, 1e-3 * expected.cv + 1e-6) << what;
        EXPECT_GT(expected.cv, 0.001) << what;
    };
    expect_moments(stats.decoder.final_norm_scale_mean, stats.decoder.final_norm_scale_cv,
                   to_double(model.read_block_output(1)), "final norm");
    expect_moments(stats.encoder.final_norm_scale_mean, stats.encoder.final_norm_scale_cv,
                   to_double(model.read_encoder_block_output(1)), "encoder final norm");
    const size_t first = static_cast<size_t>(slots.of_encoder(kAttentionSublayer, 0));
    expect_moments(stats.sublayers.norm_scale_mean[first], stats.sublayers.norm_scale_cv[first],
                   embeddings(model, batch), "encoder block 0 norm1");
    const size_t second = static_cast<size_t>(slots.of_encoder(kAttentionSublayer, 1));
    expect_moments(stats.sublayers.norm_scale_mean[second], stats.sublayers.norm_scale_cv[second],
                   to_double(model.read_encoder_block_output(0)), "encoder block 1 norm1");
    EXPECT_FALSE(recorded(stats.sublayers.norm_out_scale_mean[first]));  // no output norms under Pre-LN
}

// With the first decoder block's self-attention output projection zeroed, its cross-attention norm reads
// the embeddings (encoder and decoder embed the same tokens).
TEST(NormScales, CrossAttentionNormMatchesItsInput) {
    CpuBackend backend(1);
    const int vocab = 9, d = 16;
    ModelConfig config = scale_config(NormPlacement::Pre, NormType::LayerNorm);
    config.encoder_layers = 1;
    Model model(config, vocab, backend);
    model.initialize(8);
    testing::perturb_parameters(model, 9);
    const BlockIndex& index = model.layout().blocks[0];
    for (int entry : {index.out_weight, index.out_bias})
        if (entry >= 0) model.write_entry(entry, std::vector<float>(model.read_entry(entry).size(), 0.0f));
    const Batch batch = testing::small_batch(vocab, 3, 8, 10);
    const ForwardStats& stats = model.forward_backward(batch, {.attention_stats = true});
    const ScaleMoments expected = layer_norm_scales(embeddings(model, batch), d);
    const size_t cross = static_cast<size_t>(SublayerSlots(model.config()).of(kCrossAttentionSublayer, 0));
    EXPECT_NEAR(stats.sublayers.norm_scale_mean[cross], expected.mean, 1e-4 * expected.mean);
    EXPECT_NEAR(stats.sublayers.norm_scale_cv[cross], expected.cv, 1e-3 * expected.cv + 1e-6);
    EXPECT_GT(expected.cv, 0.001);
}

// A trainer's logged step carries them per block (encoder blocks too) and per step, and a metrics line
// reads them back.
TEST(NormScales, RecordsCarryOutputFinalAndEncoderNormScales) {
    Config config = testing::tiny_copy_encoder_decoder(2);
    config.model.norm_placement = NormPlacement::Peri;
    Trainer trainer(config);
    const StepRecord& record = trainer.step().record;
    ASSERT_TRUE(record.telemetry.has_value());
    EXPECT_GT(record.telemetry->final_norm_scale_mean, 0.0);
    EXPECT_GT(record.telemetry->encoder_final_norm_scale_mean, 0.0);
    EXPECT_GT(record.telemetry->encoder_final_norm_scale_cv, 0.0);
    for (const LayerTelemetry& layer : record.layers) {
        EXPECT_GT(layer.norm_cross_scale_mean, 0.0);
        EXPECT_GT(layer.norm_cross_out_scale_cv, 0.0);
    }
    ASSERT_EQ(record.encoder_layers.size(), 2u);
    for (const std::vector<LayerTelemetry>* stack : {&record.layers, &record.encoder_layers}) {
        for (const LayerTelemetry& layer : *stack) {
            EXPECT_GT(layer.norm1_scale_mean, 0.0);
            EXPECT_GT(layer.norm2_scale_cv, 0.0);
            EXPECT_GT(layer.norm1_out_scale_mean, 0.0);
            EXPECT_GT(layer.norm2_out_scale_cv, 0.0);
        }
    }
    const StepRecord read = MetricsLineParser().parse(to_json(record).dump());
    ASSERT_TRUE(read.telemetry.has_value());
    EXPECT_EQ(read.telemetry->final_norm_scale_mean, record.telemetry->final_norm_scale_mean);
    EXPECT_EQ(read.telemetry->final_norm_scale_cv, record.telemetry->final_norm_scale_cv);
    EXPECT_EQ(read.telemetry->encoder_final_norm_scale_mean, record.telemetry->encoder_final_norm_scale_mean);
    EXPECT_EQ(read.layers[1].norm_cross_scale_cv, record.layers[1].norm_cross_scale_cv);
    EXPECT_EQ(read.layers[1].norm_cross_out_scale_mean, record.layers[1].norm_cross_out_scale_mean);
    ASSERT_EQ(read.encoder_layers.size(), 2u);
    EXPECT_EQ(read.encoder_layers[1].norm1_scale_mean, record.encoder_layers[1].norm1_scale_mean);
    EXPECT_EQ(read.encoder_layers[1].norm2_out_scale_cv, record.encoder_layers[1].norm2_out_scale_cv);
    EXPECT_EQ(read.layers[0].norm1_out_scale_mean, record.layers[0].norm1_out_scale_mean);
}

// A role the model lacks is not recorded, never a 0 (docs/formats.md): a Pre-LN run's Peri-LN output
// norms, Post-LN's absent final norm, DyT's per-token scales, a norm-free model's gains, SGD's Adam
// state; its metrics line leaves them out, and they read back as not recorded.
TEST(NormScales, RolesAModelLacksAreNotRecorded) {
    struct Case {
        NormPlacement placement;
        NormType type;
        OptimizerKind optimizer;
    };
    for (const Case& c : {Case{NormPlacement::Pre, NormType::LayerNorm, OptimizerKind::AdamW},
                          Case{NormPlacement::Post, NormType::RmsNorm, OptimizerKind::Sgd},
                          Case{NormPlacement::Pre, NormType::DyT, OptimizerKind::AdamW},
                          Case{NormPlacement::None, NormType::LayerNorm, OptimizerKind::AdamW}}) {
        Config config;
        config.model = scale_config(c.placement, c.type);
        config.train.optimizer = c.optimizer;
        config.train.steps = 2;
        config.threads = 1;
        Trainer trainer(config);
        const StepRecord& record = trainer.step().record;
        ASSERT_TRUE(record.telemetry.has_value());
        const bool has_norms = c.placement != NormPlacement::None;
        const bool per_token = has_norms && c.type != NormType::DyT;
        const bool final_norm = per_token && c.placement == NormPlacement::Pre;
        EXPECT_EQ(recorded(record.telemetry->final_norm_scale_mean), final_norm);
        EXPECT_FALSE(recorded(record.telemetry->encoder_final_norm_scale_mean));  // no encoder
        const nlohmann::json line = to_json(record);
        EXPECT_EQ(line.contains("final_norm_scale_mean"), final_norm);
        EXPECT_FALSE(line.contains("encoder_final_norm_scale_mean"));
        EXPECT_FALSE(line.contains("z_loss"));  // train.z_loss 0: no z-loss term to log
        EXPECT_TRUE(line.contains("log_z_mean"));
        const StepRecord read = MetricsLineParser().parse(line.dump());
        for (const LayerTelemetry* layer : {&record.layers.front(), &read.layers.front()}) {
            EXPECT_FALSE(recorded(layer->norm1_out_scale_mean));
            EXPECT_FALSE(recorded(layer->norm2_out_scale_cv));
            EXPECT_FALSE(recorded(layer->grad.norm1_out));
            EXPECT_FALSE(recorded(layer->grad.norm2_out));
            EXPECT_EQ(recorded(layer->norm1_scale_mean), per_token);
            EXPECT_EQ(recorded(layer->grad.norm1), has_norms);
            if (has_norms) {
                EXPECT_GT(layer->grad.norm1, 0.0);
            }
            if (per_token) {
                EXPECT_GT(layer->norm2_scale_mean, 0.0);
            }
            const bool adam = c.optimizer != OptimizerKind::Sgd;
            EXPECT_EQ(recorded(layer->adam_grad_rms), adam);
            EXPECT_EQ(recorded(layer->adam_eps_fraction), adam);
            EXPECT_GT(layer->grad.w_qkv, 0.0);
            EXPECT_GT(layer->update_rms, 0.0);
        }
        const nlohmann::json& block = line["layers"][0];
        EXPECT_FALSE(block.contains("norm1_out_scale_mean"));
        EXPECT_FALSE(block["grad"].contains("norm1_out"));
        EXPECT_EQ(block["grad"].contains("norm1"), has_norms);
        EXPECT_EQ(block.contains("adam_grad_rms"), c.optimizer != OptimizerKind::Sgd);
    }
}

}  // namespace
}  // namespace normlab
