// Whole-model gradient checks: for every norm placement x norm type x residual scheme (and theory
// mode), decoder-only and encoder-decoder, the analytic gradient of each active tensor against central
// differences of the loss along a random direction restricted to that tensor.
#include <gtest/gtest.h>

#include <functional>
#include <tuple>

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/model/model.h"
#include "tests/engine/gradient_check.h"
#include "tests/engine/model_test_support.h"

namespace normlab {
namespace {

using testing::perturb_parameters;
using testing::small_batch;

// Max over active tensors of |directional FD - g.v| / max(|g.v|, floor).
// source_len: the batch's source part (what an encoder reads; 0 = the model's default, half the row).
// z_loss: the objective is the cross-entropy plus z_loss (log Z)^2 per scored position.
// training_step > 0: the passes belong to that step (the model's own warmups scale by it).
// prepare: called on the initialised model before the passes (e.g. to freeze norms).
void check_model_gradients(const ModelConfig& config, const std::string& label, int source_len = 0,
                           float step = 2e-3f, float z_loss = 0.0f, int64_t training_step = 0,
                           const std::function<void(Model&)>& prepare = {}) {
    CpuBackend backend(1);
    const int vocab = 11;
    Model model(config, vocab, backend);
    if (training_step > 0) model.set_training_step(training_step);
    model.initialize(7);
    perturb_parameters(model, 3);
    if (prepare) prepare(model);
    Batch batch = small_batch(vocab, 2, config.seq_len, 5);
    batch.source_len = source_len;
    model.forward_backward(batch, {.backward = true, .z_loss = z_loss});
    const auto& entries = model.layout().entries;
    std::vector<std::vector<float>> grads;
    for (size_t i = 0; i < entries.size(); ++i) grads.push_back(model.read_entry(static_cast<int>(i), true));

    int checked = 0;
    for (size_t i = 0; i < entries.size(); ++i) {
        if (!model.active(static_cast<int>(i))) {
            for (float g : grads[i])
                ASSERT_EQ(g, 0.0f) << label << ": inactive " << entries[i].name << " has a gradient";
            continue;
        }
        const auto original = model.read_entry(static_cast<int>(i));
        auto direction = testing::random_tensor(original.size(), mix_seed(11, i));
        double analytic = 0.0;
        for (size_t j = 0; j < original.size(); ++j)
            analytic += static_cast<double>(grads[i][j]) * direction[j];
        auto loss_at = [&](float scale) {
            auto moved = original;
            for (size_t j = 0; j < moved.size(); ++j) moved[j] += scale * step * direction[j];
            model.write_entry(static_cast<int>(i), moved);
            const ForwardStats& stats = model.forward_backward(batch, {.z_loss = z_loss});
            return stats.loss + stats.z_loss;
        };
        // fourth-order central difference
        const double numeric =
            (-loss_at(2.0f) + 8.0 * loss_at(1.0f) - 8.0 * loss_at(-1.0f) + loss_at(-2.0f)) / (12.0 * step);
        model.write_entry(static_cast<int>(i), original);
        const double error = std::fabs(numeric - analytic) / std::max(std::fabs(analytic), 2e-2);
        EXPECT_LT(error, 2e-2) << label << ": " << entries[i].name << " analytic " << analytic
                               << " vs numeric " << numeric;
        ++checked;
    }
    EXPECT_GT(checked, 10) << label;
}

using Wiring = std::tuple<NormPlacement, NormType, Residual>;

// A 2-block model (with an encoder of `encoder_layers` blocks) wired as asked.
ModelConfig wired_config(NormPlacement placement, NormType type, Residual residual, int encoder_layers = 0) {
    ModelConfig config;
    config.d_model = 8;
    config.heads = 2;
    config.d_ff = 12;
    config.layers = 2;
    config.encoder_layers = encoder_layers;
    config.seq_len = 5;
    config.activation = Activation::Gelu;  // smooth, so differences do not straddle a kink
    config.norm_placement = placement;
    config.norm_type = type;
    config.residual = residual;
    config.mix_post_fraction = 0.5;  // Mix-LN: block 0 Post-LN, block 1 Pre-LN (per stack)
    return config;
}

class ModelGradients : public ::testing::TestWithParam<Wiring> {};

std::string wiring_name(const ::testing::TestParamInfo<Wiring>& info) {
    return to_string(std::get<0>(info.param)) + "_" + to_string(std::get<1>(info.param)) + "_" +
           to_string(std::get<2>(info.param));
}

TEST_P(ModelGradients, MatchFiniteDifferences) {
    const auto [placement, type, residual] = GetParam();
    check_model_gradients(wired_config(placement, type, residual),
                          to_string(placement) + "/" + to_string(type) + "/" + to_string(residual));
}

INSTANTIATE_TEST_SUITE_P(
    AllWirings, ModelGradients,
    ::testing::Combine(::testing::Values(NormPlacement::Post, NormPlacement::Pre, NormPlacement::Peri,
                                         NormPlacement::None, NormPlacement::Mix),
                       ::testing::Values(NormType::LayerNorm, NormType::RmsNorm, NormType::DyT),
                       ::testing::Values(Residual::Plain, Residual::DeepNorm, Residual::ReZero,
                                         Residual::Admin)),
    wiring_name);

// LayerNorm Scaling: block l's input norms' outputs x 1/sqrt(l), where blocks have input norms.
INSTANTIATE_TEST_SUITE_P(
    LayerNormScaling, ModelGradients,
    ::testing::Combine(::testing::Values(NormPlacement::Pre, NormPlacement::Peri, NormPlacement::Mix),
                       ::testing::Values(NormType::LayerNorm, NormType::RmsNorm, NormType::DyT),
                       ::testing::Values(Residual::Lns)),
    wiring_name);

// B2T: a Post-LN block's input added to its last sum (Post-LN, and Mix-LN's Post-LN block 0).
INSTANTIATE_TEST_SUITE_P(B2tConnection, ModelGradients,
                         ::testing::Combine(::testing::Values(NormPlacement::Post, NormPlacement::Mix),
                                            ::testing::Values(NormType::LayerNorm, NormType::RmsNorm,
                                                              NormType::DyT),
                                            ::testing::Values(Residual::B2t)),
                         wiring_name);

// ResiDual: Post-LN's stream plus the dual stream of every branch, normalised and added at the end.
INSTANTIATE_TEST_SUITE_P(ResiDual, ModelGradients,
                         ::testing::Combine(::testing::Values(NormPlacement::Post),
                                            ::testing::Values(NormType::LayerNorm, NormType::RmsNorm,
                                                              NormType::DyT),
                                            ::testing::Values(Residual::ResiDual)),
                         wiring_name);

// DenseFormer: each block reads a learned average of the earlier outputs, with every placement.
INSTANTIATE_TEST_SUITE_P(DenseFormer, ModelGradients,
                         ::testing::Combine(::testing::Values(NormPlacement::Post, NormPlacement::Pre,
                                                              NormPlacement::Peri, NormPlacement::None,
                                                              NormPlacement::Mix),
                                            ::testing::Values(NormType::LayerNorm, NormType::DyT),
                                            ::testing::Values(Residual::DenseFormer)),
                         wiring_name);

// BatchNorm and PowerNorm on training statistics (the model's mode until set): BatchNorm's gradient
// through its batch's mean and variance; PowerNorm's nu is 0, so its approximate backward is exact.
INSTANTIATE_TEST_SUITE_P(FeatureNorms, ModelGradients,
                         ::testing::Combine(::testing::Values(NormPlacement::Post, NormPlacement::Pre,
                                                              NormPlacement::Peri, NormPlacement::Mix),
                                            ::testing::Values(NormType::BatchNorm, NormType::PowerNorm),
                                            ::testing::Values(Residual::Plain, Residual::DeepNorm)),
                         wiring_name);

// On running statistics moved by three training passes (evaluation's mode), and in an encoder-decoder.
TEST(ModelGradientsFeatureNorms, RunningStatisticsAndEncoderDecoder) {
    for (const NormType type : {NormType::BatchNorm, NormType::PowerNorm}) {
        const auto trained = [](Model& model) {
            const Batch batch = small_batch(model.vocab(), 2, model.config().seq_len, 9);
            model.set_feature_statistics(FeatureStatistics::BatchUpdating);
            for (int i = 0; i < 3; ++i) model.forward_backward(batch, {.backward = true});
            model.set_feature_statistics(FeatureStatistics::Running);
        };
        check_model_gradients(wired_config(NormPlacement::Pre, type, Residual::Plain),
                              "running " + to_string(type), 0, 2e-3f, 0.0f, 0, trained);
        check_model_gradients(wired_config(NormPlacement::Post, type, Residual::Plain, 2),
                              "encoder-decoder " + to_string(type));
    }
}

// Dilations leave some outputs out of some averages (4 blocks: block 1 with k = 2 reads outputs 0 and 2).
TEST(ModelGradientsDenseFormer, Dilations) {
    for (int dilation : {2, 3}) {
        for (int encoder_layers : {0, 3}) {
            ModelConfig config =
                wired_config(NormPlacement::Pre, NormType::RmsNorm, Residual::DenseFormer, encoder_layers);
            config.layers = 4;
            config.denseformer_dilation = dilation;
            check_model_gradients(config, "dilation " + std::to_string(dilation) + ", encoder " +
                                              std::to_string(encoder_layers));
        }
    }
}

// Attention Residuals: each sub-layer reads a softmax-weighted average of the embeddings and the earlier
// branches. The pseudo-queries are drawn at scale 1 (zero at init, 0.1 after perturb_parameters), so the
// scores depend on the keys and every path through them counts.
void draw_attn_res_queries(Model& model) {
    for (size_t block = 0; block < model.layout().blocks.size(); ++block) {
        const int entry = model.layout().blocks[block].attn_res_queries;
        model.write_entry(entry, testing::random_tensor(model.read_entry(entry).size(), 90 + block));
    }
}

class AttnResGradients : public ::testing::TestWithParam<Wiring> {};

TEST_P(AttnResGradients, MatchFiniteDifferences) {
    const auto [placement, type, residual] = GetParam();
    check_model_gradients(wired_config(placement, type, residual),
                          "attn_res " + to_string(placement) + "/" + to_string(type), 0, 2e-3f, 0.0f, 0,
                          draw_attn_res_queries);
}

INSTANTIATE_TEST_SUITE_P(
    AttnRes, AttnResGradients,
    ::testing::Combine(::testing::Values(NormPlacement::Pre, NormPlacement::Peri, NormPlacement::None),
                       ::testing::Values(NormType::LayerNorm, NormType::RmsNorm, NormType::DyT),
                       ::testing::Values(Residual::AttnRes)),
    wiring_name);

// A scaled branch (residual warmup at step 3 of 10 per block) enters the sources scaled. (Theory mode's
// ReLU puts kinks within a difference step here; tests/parity checks that wiring against PyTorch.)
TEST(ModelGradientsAttnRes, ScaledBranches) {
    ModelConfig config = wired_config(NormPlacement::Pre, NormType::RmsNorm, Residual::AttnRes);
    config.layers = 3;
    config.residual_warmup_steps = 10;
    check_model_gradients(config, "attn_res with residual warmup", 0, 2e-3f, 0.0f, 3, draw_attn_res_queries);
}

TEST(ModelGradientsTheory, TheoryModeModel) {
    ModelConfig config;
    config.d_model = 8;
    config.layers = 2;
    config.seq_len = 5;
    config.theory_mode = true;
    for (NormPlacement placement : {NormPlacement::Post, NormPlacement::Pre}) {
        config.norm_placement = placement;
        check_model_gradients(config, "theory/" + to_string(placement));
    }
}

// QK-norm (LayerNorm without bias, RMSNorm) on every attention: decoder-only under each placement, and
// an encoder-decoder, whose cross-attention normalises the memory's keys.
TEST(ModelGradientsQkNorm, EveryPlacementAndEncoderDecoder) {
    for (QkNorm qk : {QkNorm::LayerNorm, QkNorm::RmsNorm}) {
        for (NormPlacement placement :
             {NormPlacement::Post, NormPlacement::Pre, NormPlacement::Peri, NormPlacement::None}) {
            ModelConfig config = wired_config(placement, NormType::LayerNorm, Residual::Plain);
            config.qk_norm = qk;
            check_model_gradients(config, "qk " + to_string(qk) + "/" + to_string(placement));
        }
        ModelConfig encoder_decoder = wired_config(NormPlacement::Pre, NormType::RmsNorm, Residual::Plain, 2);
        encoder_decoder.qk_norm = qk;
        check_model_gradients(encoder_decoder, "qk " + to_string(qk) + "/encoder-decoder");
    }
}

// The architecture keys (docs/model.md#architecture-keys): no biases, a tied head, SwiGLU and GeGLU, RoPE
// (with QK-norm before it) and no positions, decoder-only and in an encoder-decoder.
TEST(ModelGradientsArchitecture, BiasesTiedHeadGatedFfnAndPositions) {
    ModelConfig llama = wired_config(NormPlacement::Pre, NormType::RmsNorm, Residual::Plain);
    llama.bias = false;
    llama.tie_embeddings = true;
    llama.ffn = FeedForward::SwiGlu;
    llama.position = Position::Rope;
    llama.rope_theta = 50.0;
    check_model_gradients(llama, "llama-like");
    llama.qk_norm = QkNorm::RmsNorm;
    check_model_gradients(llama, "llama-like, QK-norm then RoPE");
    ModelConfig geglu = wired_config(NormPlacement::Post, NormType::LayerNorm, Residual::Plain);
    geglu.ffn = FeedForward::GeGlu;
    geglu.position = Position::None;
    check_model_gradients(geglu, "geglu, no positions");
    ModelConfig encoder_decoder = wired_config(NormPlacement::Peri, NormType::LayerNorm, Residual::Plain, 2);
    encoder_decoder.ffn = FeedForward::SwiGlu;
    encoder_decoder.position = Position::Rope;
    encoder_decoder.bias = false;
    encoder_decoder.tie_embeddings = true;
    encoder_decoder.qk_norm = QkNorm::LayerNorm;
    check_model_gradients(encoder_decoder, "encoder-decoder, swiglu, rope, tied, no biases");
}

// model.parametrization away from its base (width 8 on base 2: m = 4; depth 2 on base 1): the output
// multiplier (untied and tied), muP's attention logit scale and CompleteP's branch multiplier are in the
// gradients as in the loss.
TEST(ModelGradientsParametrization, MupAndCompletePAwayFromTheirBase) {
    ModelConfig mup = wired_config(NormPlacement::Pre, NormType::LayerNorm, Residual::Plain);
    mup.parametrization = Parametrization::Mup;
    mup.base_width = 2;
    check_model_gradients(mup, "mup");
    mup.tie_embeddings = true;
    check_model_gradients(mup, "mup, tied head");
    ModelConfig completep = wired_config(NormPlacement::Peri, NormType::RmsNorm, Residual::Plain);
    completep.parametrization = Parametrization::CompleteP;
    completep.base_width = 2;
    completep.base_depth = 1;
    check_model_gradients(completep, "completep");
}

// Grouped-query attention: 4 query heads on 2 key/value heads, and multi-query (1), with biases, QK-norm
// and RoPE, and in an encoder-decoder (the encoder's self-attention grouped too, cross-attention not).
// Heads of 4 dimensions and QK-RMSNorm: QK-LayerNorm over so few dimensions is close to a sign, whose
// jump a difference stencil can straddle (tests/parity checks MQA with QK-LayerNorm against PyTorch).
TEST(ModelGradientsArchitecture, GroupedQueryAttention) {
    for (int kv_heads : {2, 1}) {
        ModelConfig config = wired_config(NormPlacement::Pre, NormType::RmsNorm, Residual::Plain);
        config.d_model = 16;
        config.heads = 4;
        config.kv_heads = kv_heads;
        check_model_gradients(config, "gqa " + std::to_string(kv_heads));
        config.position = Position::Rope;
        config.qk_norm = QkNorm::RmsNorm;
        check_model_gradients(config, "gqa with QK-norm and RoPE " + std::to_string(kv_heads));
    }
    ModelConfig encoder_decoder = wired_config(NormPlacement::Post, NormType::LayerNorm, Residual::Plain, 2);
    encoder_decoder.d_model = 16;
    encoder_decoder.heads = 4;
    encoder_decoder.kv_heads = 2;
    encoder_decoder.position = Position::Rope;
    check_model_gradients(encoder_decoder, "gqa encoder-decoder");
}

// z-loss adds z_loss (log Z)^2 per scored position; a large coefficient so its gradient term is not
// lost in the cross-entropy's (decoder-only and encoder-decoder, which leaves the memory's targets out).
TEST(ModelGradientsZLoss, CrossEntropyPlusZLoss) {
    check_model_gradients(wired_config(NormPlacement::Pre, NormType::LayerNorm, Residual::Plain), "z-loss", 0,
                          2e-3f, 0.2f);
    check_model_gradients(wired_config(NormPlacement::Post, NormType::RmsNorm, Residual::Plain, 2),
                          "z-loss encoder-decoder", 0, 2e-3f, 0.2f);
}

// The model's own warmups mid-ramp: every norm gain acting as s g (s = 0.1 + 0.9 x 2/5 at step 3), and
// ProRes's branch scales min(1, 3 / (2 l)) = 1, 0.75 (with an encoder, per stack).
TEST(ModelGradientsWarmups, NormGainAndResidualWarmupMidRamp) {
    for (NormPlacement placement : {NormPlacement::Post, NormPlacement::Pre, NormPlacement::Peri}) {
        ModelConfig gains = wired_config(placement, NormType::LayerNorm, Residual::Plain);
        gains.norm_gain_warmup_steps = 5;
        check_model_gradients(gains, "gain warmup/" + to_string(placement), 0, 2e-3f, 0.0f, 3);
        ModelConfig branches = wired_config(placement, NormType::RmsNorm, Residual::Plain, 2);
        branches.residual_warmup_steps = 2;
        check_model_gradients(branches, "residual warmup/" + to_string(placement), 0, 2e-3f, 0.0f, 3);
    }
}

// Norm-free inference's frozen norms (probe --freeze-norms fine-tunes through them): every norm with a
// per-token scale frozen at its own std, in every placement with both norm types, and with an encoder.
TEST(ModelGradientsFrozenNorms, EveryPlacementBothTypesAndEncoderDecoder) {
    auto freeze_all = [](Model& model) {
        const std::vector<int> norms = model.scaled_norms();
        for (size_t k = 0; k < norms.size(); ++k)
            model.freeze_norm(norms[k], 0.5 + 0.25 * static_cast<double>(k));
    };
    for (NormPlacement placement :
         {NormPlacement::Post, NormPlacement::Pre, NormPlacement::Peri, NormPlacement::Mix}) {
        for (NormType type : {NormType::LayerNorm, NormType::RmsNorm}) {
            const std::string label = "frozen/" + to_string(placement) + "/" + to_string(type);
            check_model_gradients(wired_config(placement, type, Residual::Plain), label, 0, 2e-3f, 0.0f, 0,
                                  freeze_all);
        }
    }
    check_model_gradients(wired_config(NormPlacement::Pre, NormType::LayerNorm, Residual::Plain, 2),
                          "frozen encoder-decoder", 0, 2e-3f, 0.0f, 0, freeze_all);
}

// Encoder-decoder: the encoder's bidirectional self-attention over the source, cross-attention whose
// keys and values come from the memory (gradients flow back into the encoder), shared embeddings.
ModelConfig encoder_decoder_config(NormPlacement placement, NormType type, Residual residual) {
    return wired_config(placement, type, residual, 2);
}

class EncoderDecoderGradients : public ::testing::TestWithParam<Wiring> {};

TEST_P(EncoderDecoderGradients, MatchFiniteDifferences) {
    const auto [placement, type, residual] = GetParam();
    const std::string label =
        "encoder-decoder " + to_string(placement) + "/" + to_string(type) + "/" + to_string(residual);
    check_model_gradients(encoder_decoder_config(placement, type, residual), label);
}

INSTANTIATE_TEST_SUITE_P(
    Wirings, EncoderDecoderGradients,
    ::testing::Values(Wiring{NormPlacement::Post, NormType::LayerNorm, Residual::Plain},
                      Wiring{NormPlacement::Pre, NormType::LayerNorm, Residual::Plain},
                      Wiring{NormPlacement::Peri, NormType::LayerNorm, Residual::Plain},
                      Wiring{NormPlacement::None, NormType::LayerNorm, Residual::Plain},
                      Wiring{NormPlacement::Post, NormType::RmsNorm, Residual::Plain},
                      Wiring{NormPlacement::Pre, NormType::DyT, Residual::Plain},
                      Wiring{NormPlacement::Peri, NormType::DyT, Residual::Plain},
                      Wiring{NormPlacement::Post, NormType::LayerNorm, Residual::DeepNorm},
                      Wiring{NormPlacement::Post, NormType::LayerNorm, Residual::Admin},
                      Wiring{NormPlacement::Pre, NormType::LayerNorm, Residual::Admin},
                      Wiring{NormPlacement::None, NormType::LayerNorm, Residual::ReZero},
                      Wiring{NormPlacement::Pre, NormType::RmsNorm, Residual::ReZero},
                      Wiring{NormPlacement::Mix, NormType::LayerNorm, Residual::Plain},
                      Wiring{NormPlacement::Mix, NormType::DyT, Residual::DeepNorm},
                      Wiring{NormPlacement::Peri, NormType::RmsNorm, Residual::Lns},
                      Wiring{NormPlacement::Mix, NormType::LayerNorm, Residual::Lns},
                      Wiring{NormPlacement::Post, NormType::LayerNorm, Residual::B2t},
                      Wiring{NormPlacement::Mix, NormType::RmsNorm, Residual::B2t},
                      Wiring{NormPlacement::Post, NormType::LayerNorm, Residual::ResiDual},
                      Wiring{NormPlacement::Post, NormType::DyT, Residual::ResiDual},
                      Wiring{NormPlacement::Pre, NormType::LayerNorm, Residual::DenseFormer},
                      Wiring{NormPlacement::Post, NormType::RmsNorm, Residual::DenseFormer}),
    wiring_name);

TEST(EncoderDecoderGradientsMemory, EverySourceLengthAndTheoryMode) {
    // one key of memory, all of them, and the default half
    for (int source_len : {1, 5, 0}) {
        check_model_gradients(
            encoder_decoder_config(NormPlacement::Post, NormType::LayerNorm, Residual::Plain),
            "encoder-decoder, source " + std::to_string(source_len), source_len);
    }
    // Theory mode forces ReLU, whose kinks a finite difference straddles more often the deeper the
    // model: one block each and a smaller step keep the check sharp.
    ModelConfig theory = encoder_decoder_config(NormPlacement::Post, NormType::LayerNorm, Residual::Plain);
    theory.theory_mode = true;
    theory.layers = 1;
    theory.encoder_layers = 1;
    for (NormPlacement placement : {NormPlacement::Post, NormPlacement::Pre}) {
        theory.norm_placement = placement;
        check_model_gradients(theory, "encoder-decoder theory/" + to_string(placement), 0, 3e-4f);
    }
}

}  // namespace
}  // namespace normlab
