// The whole model on CUDA against the CPU reference: loss, per-block telemetry and every active
// gradient of one forward + backward pass for each wiring (placements x norm types x residual
// schemes, theory mode, the architecture keys), and 50-step training curves (Adam, AdamW, SGD, RAdam)
// through the Trainer on device=cuda against device=cpu.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "engine/backend/cpu/cpu_reference_backend.h"
#include "engine/backend/parity.h"
#include "engine/model/model.h"
#include "engine/selfcheck/selftest.h"
#include "engine/train/trainer.h"
#include "tests/cuda/cuda_test_support.h"
#include "tests/engine/gradient_check.h"
#include "tests/engine/model_test_support.h"

namespace normlab {
namespace {

// Every check of the engine's parity rule (engine/backend/parity.h, the GPU self-check's) holds.
void expect_all_pass(const std::string& wiring, const std::vector<ParityCheck>& checks) {
    for (const ParityCheck& check : checks) EXPECT_TRUE(check.passed()) << wiring << ": " << check.describe();
}

struct Wiring {
    std::string name;
    NormPlacement placement;
    NormType type;
    Residual residual;
    bool theory_mode = false;
    int encoder_layers = 0;  // > 0: encoder-decoder (bidirectional encoder, cross-attention)
    QkNorm qk_norm = QkNorm::None;
    // the architecture keys (docs/model.md#architecture-keys)
    FeedForward ffn = FeedForward::Mlp;
    Position position = Position::Learned;
    bool bias = true;
    bool tie_embeddings = false;
    int kv_heads = 0;
    // model.parametrization at base width 4 and depth 1: every multiplier away from 1
    Parametrization parametrization = Parametrization::Sp;
};

void PrintTo(const Wiring& wiring, std::ostream* out) {
    *out << wiring.name;
}

class CudaModelParity : public testing::CudaTestWithParam<Wiring> {};

// One forward + backward with attention statistics, from the same (perturbed) parameters on both.
TEST_P(CudaModelParity, LossTelemetryAndGradientsMatchTheCpuReference) {
    const Wiring& wiring = GetParam();
    ModelConfig config;
    config.d_model = 16;
    config.heads = 2;
    config.d_ff = 24;
    config.layers = 3;
    config.seq_len = 9;
    config.activation = Activation::Gelu;
    config.norm_placement = wiring.placement;
    config.norm_type = wiring.type;
    config.residual = wiring.residual;
    config.theory_mode = wiring.theory_mode;
    config.encoder_layers = wiring.encoder_layers;
    config.qk_norm = wiring.qk_norm;
    config.ffn = wiring.ffn;
    config.position = wiring.position;
    config.bias = wiring.bias;
    config.tie_embeddings = wiring.tie_embeddings;
    config.kv_heads = wiring.kv_heads;
    config.parametrization = wiring.parametrization;
    config.base_width = 4;
    config.base_depth = 1;
    const int vocab = 13;
    const Batch batch = testing::small_batch(vocab, 3, config.seq_len, 5);

    CpuReferenceBackend reference(1);
    Model expected_model(config, vocab, reference);
    Model actual_model(config, vocab, cuda());
    for (Model* model : {&expected_model, &actual_model}) {
        model->initialize(7);
        testing::perturb_parameters(*model, 3);
    }
    const ForwardStats expected =
        expected_model.forward_backward(batch, {.backward = true, .attention_stats = true});
    const ForwardStats actual =
        actual_model.forward_backward(batch, {.backward = true, .attention_stats = true});

    expect_all_pass(wiring.name, compare_loss(actual, expected));
    expect_all_pass(wiring.name, compare_telemetry(actual, expected));
    expect_all_pass(wiring.name, compare_entries(actual_model, expected_model, true));
    testing::expect_close(wiring.name + ": head input", actual_model.read_head_input(),
                          expected_model.read_head_input(), kParityTolerance);
}

INSTANTIATE_TEST_SUITE_P(
    Wirings, CudaModelParity,
    ::testing::Values(
        Wiring{"PostLN", NormPlacement::Post, NormType::LayerNorm, Residual::Plain},
        Wiring{"PreLN", NormPlacement::Pre, NormType::LayerNorm, Residual::Plain},
        Wiring{"PeriLN", NormPlacement::Peri, NormType::LayerNorm, Residual::Plain},
        Wiring{"NoNorm", NormPlacement::None, NormType::LayerNorm, Residual::Plain},
        Wiring{"PreRMSNorm", NormPlacement::Pre, NormType::RmsNorm, Residual::Plain},
        Wiring{"PostRMSNorm", NormPlacement::Post, NormType::RmsNorm, Residual::Plain},
        Wiring{"PreDyT", NormPlacement::Pre, NormType::DyT, Residual::Plain},
        Wiring{"PeriDyT", NormPlacement::Peri, NormType::DyT, Residual::Plain},
        Wiring{"PreBatchNorm", NormPlacement::Pre, NormType::BatchNorm, Residual::Plain},
        Wiring{"PostPowerNorm", NormPlacement::Post, NormType::PowerNorm, Residual::Plain},
        Wiring{"EncoderDecoderPeriBatchNorm", NormPlacement::Peri, NormType::BatchNorm, Residual::Plain,
               false, 2},
        Wiring{"PostDeepNorm", NormPlacement::Post, NormType::LayerNorm, Residual::DeepNorm},
        Wiring{"PostAdmin", NormPlacement::Post, NormType::LayerNorm, Residual::Admin},
        Wiring{"PreReZero", NormPlacement::Pre, NormType::LayerNorm, Residual::ReZero},
        Wiring{"NoNormReZero", NormPlacement::None, NormType::LayerNorm, Residual::ReZero},
        Wiring{"PreRMSNormLns", NormPlacement::Pre, NormType::RmsNorm, Residual::Lns},
        Wiring{"EncoderDecoderPeriLns", NormPlacement::Peri, NormType::LayerNorm, Residual::Lns, false, 2},
        Wiring{"PostB2t", NormPlacement::Post, NormType::LayerNorm, Residual::B2t},
        Wiring{"EncoderDecoderMixB2t", NormPlacement::Mix, NormType::RmsNorm, Residual::B2t, false, 2},
        Wiring{"PostResiDual", NormPlacement::Post, NormType::RmsNorm, Residual::ResiDual},
        Wiring{"EncoderDecoderResiDual", NormPlacement::Post, NormType::LayerNorm, Residual::ResiDual, false,
               2},
        Wiring{"PreDenseFormer", NormPlacement::Pre, NormType::LayerNorm, Residual::DenseFormer},
        Wiring{"EncoderDecoderPostDenseFormer", NormPlacement::Post, NormType::RmsNorm, Residual::DenseFormer,
               false, 2},
        Wiring{"PreAttnRes", NormPlacement::Pre, NormType::LayerNorm, Residual::AttnRes},
        Wiring{"PeriDyTAttnRes", NormPlacement::Peri, NormType::DyT, Residual::AttnRes},
        Wiring{"NoNormAttnRes", NormPlacement::None, NormType::RmsNorm, Residual::AttnRes},
        Wiring{"TheoryPreAttnRes", NormPlacement::Pre, NormType::RmsNorm, Residual::AttnRes, true},
        Wiring{"TheoryPostLN", NormPlacement::Post, NormType::LayerNorm, Residual::Plain, true},
        Wiring{"TheoryPreLN", NormPlacement::Pre, NormType::LayerNorm, Residual::Plain, true},
        Wiring{"EncoderDecoderPostLN", NormPlacement::Post, NormType::LayerNorm, Residual::Plain, false, 2},
        Wiring{"EncoderDecoderPeriDyTAdmin", NormPlacement::Peri, NormType::DyT, Residual::Admin, false, 2},
        Wiring{"EncoderDecoderTheoryPreLN", NormPlacement::Pre, NormType::LayerNorm, Residual::Plain, true,
               2},
        Wiring{"PreLNQkLayerNorm", NormPlacement::Pre, NormType::LayerNorm, Residual::Plain, false, 0,
               QkNorm::LayerNorm},
        Wiring{"PostLNQkRMSNorm", NormPlacement::Post, NormType::LayerNorm, Residual::Plain, false, 0,
               QkNorm::RmsNorm},
        Wiring{"EncoderDecoderQkRMSNorm", NormPlacement::Pre, NormType::RmsNorm, Residual::Plain, false, 2,
               QkNorm::RmsNorm},
        Wiring{"LlamaLike", NormPlacement::Pre, NormType::RmsNorm, Residual::Plain, false, 0, QkNorm::None,
               FeedForward::SwiGlu, Position::Rope, false, true, 1},
        Wiring{"LlamaLikeQkNormThenRope", NormPlacement::Pre, NormType::RmsNorm, Residual::Plain, false, 0,
               QkNorm::RmsNorm, FeedForward::SwiGlu, Position::Rope, false, true, 1},
        Wiring{"GeGluNoPositions", NormPlacement::Post, NormType::LayerNorm, Residual::Plain, false, 0,
               QkNorm::None, FeedForward::GeGlu, Position::None},
        Wiring{"EncoderDecoderRopeSwiGluTied", NormPlacement::Pre, NormType::LayerNorm, Residual::Plain,
               false, 2, QkNorm::LayerNorm, FeedForward::SwiGlu, Position::Rope, false, true, 1},
        Wiring{"MupTied", NormPlacement::Pre, NormType::LayerNorm, Residual::Plain, false, 0, QkNorm::None,
               FeedForward::Mlp, Position::Learned, true, true, 0, Parametrization::Mup},
        Wiring{"CompletePPeriRmsNorm", NormPlacement::Peri, NormType::RmsNorm, Residual::Plain, false, 0,
               QkNorm::None, FeedForward::Mlp, Position::Learned, true, false, 0,
               Parametrization::CompleteP}),
    [](const ::testing::TestParamInfo<Wiring>& info) { return info.param.name; });

Config curve_config(const std::string& device, OptimizerKind optimizer) {
    Config config = testing::small_model_config(32, 2, 16, 8, 50);
    config.train.lr = 3e-3;
    config.train.optimizer = optimizer;
    config.telemetry.val_every = 25;
    config.device = device;
    config.threads = 1;
    return config;
}

class CudaTrainingCurve : public testing::CudaTestWithParam<OptimizerKind> {};

// 50 steps on each device from the same seed: the loss curves (and gradient norms, validation
// losses) agree within 5e-4 relative, i.e. rounding differences do not grow into a different run.
TEST_P(CudaTrainingCurve, FiftyStepsFollowTheCpuCurve) {
    Trainer cpu(curve_config("cpu", GetParam()));
    Trainer gpu(curve_config("cuda", GetParam()));
    ASSERT_EQ(gpu.backend().device(), "cuda");
    double first_loss = 0.0;
    for (int step = 1; step <= 50; ++step) {
        const StepOutcome expected = cpu.step();
        const StepOutcome actual = gpu.step();
        ASSERT_EQ(actual.record.step, expected.record.step);
        EXPECT_NEAR(actual.record.loss, expected.record.loss, 5e-4 * expected.record.loss) << "step " << step;
        EXPECT_NEAR(actual.record.grad_norm, expected.record.grad_norm, 1e-3 * expected.record.grad_norm)
            << "step " << step;
        ASSERT_EQ(actual.record.val_loss.has_value(), expected.record.val_loss.has_value());
        if (expected.record.val_loss) {
            EXPECT_NEAR(*actual.record.val_loss, *expected.record.val_loss, 5e-4 * *expected.record.val_loss)
                << "step " << step;
        }
        ASSERT_EQ(actual.record.layers.size(), expected.record.layers.size());
        for (size_t block = 0; block < expected.record.layers.size(); ++block) {
            const LayerTelemetry& a = actual.record.layers[block];
            const LayerTelemetry& e = expected.record.layers[block];
            EXPECT_NEAR(a.resid, e.resid, 1e-3 * e.resid) << "step " << step << ", block " << block;
            EXPECT_NEAR(a.grad.w_1, e.grad.w_1, 1e-3 * e.grad.w_1) << "step " << step << ", block " << block;
            EXPECT_NEAR(a.attn_entropy, e.attn_entropy, 1e-3 * e.attn_entropy) << "step " << step;
        }
        if (step == 1) first_loss = actual.record.loss;
    }
    EXPECT_LT(gpu.last_loss(), first_loss) << "50 steps should lower the loss";
}

INSTANTIATE_TEST_SUITE_P(Optimizers, CudaTrainingCurve,
                         ::testing::Values(OptimizerKind::Adam, OptimizerKind::AdamW, OptimizerKind::Sgd,
                                           OptimizerKind::RAdam),
                         [](const ::testing::TestParamInfo<OptimizerKind>& info) {
                             switch (info.param) {
                                 case OptimizerKind::Sgd:
                                     return std::string("Sgd");
                                 case OptimizerKind::AdamW:
                                     return std::string("AdamW");
                                 case OptimizerKind::RAdam:
                                     return std::string("RAdam");
                                 case OptimizerKind::Adam:
                                     break;
                             }
                             return std::string("Adam");
                         });

}  // namespace
}  // namespace normlab
