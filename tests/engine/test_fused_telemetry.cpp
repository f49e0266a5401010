// The fast CPU backend takes every residual sum's and branch's telemetry sums inside the residual op
// (Backend::fuses_residual_sums) and skips the backward residual op for a plain x + f sum; the
// reference backend does neither. A model on each must report the same residual statistics, dependency
// ratios, loss and gradients, for every placement, theory mode, the residual schemes and an encoder.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/model/model.h"
#include "tests/engine/model_test_support.h"

namespace normlab {
namespace {

using testing::perturb_parameters;
using testing::small_batch;

struct Outcome {
    ForwardStats stats;
    std::vector<std::vector<float>> grads;
};

Outcome run_model(Backend& backend, const ModelConfig& config, int vocab) {
    Model model(config, vocab, backend);
    model.initialize(7);
    perturb_parameters(model, 3);  // ReZero's alpha and Admin's omega off their init too
    const Batch batch = small_batch(vocab, 3, config.seq_len, 5);
    Outcome outcome{model.forward_backward(batch, {.backward = true, .attention_stats = true}), {}};
    for (size_t entry = 0; entry < model.layout().entries.size(); ++entry)
        outcome.grads.push_back(model.read_entry(static_cast<int>(entry), true));
    return outcome;
}

void expect_same(const std::vector<double>& fast, const std::vector<double>& reference,
                 const std::string& what) {
    ASSERT_EQ(fast.size(), reference.size()) << what;
    for (size_t i = 0; i < fast.size(); ++i)
        EXPECT_NEAR(fast[i], reference[i], 1e-4 * std::max(1.0, std::abs(reference[i])))
            << what << " [" << i << "]";
}

struct Wiring {
    std::string name;
    NormPlacement placement;
    Residual residual;
    bool theory_mode;
    int encoder_layers;
};

class FusedTelemetry : public ::testing::TestWithParam<Wiring> {};

TEST_P(FusedTelemetry, MatchesTheReferenceBackendsSeparateReductions) {
    const Wiring& wiring = GetParam();
    ModelConfig config = testing::small_model_config(32, 3, 8, 3, 1).model;
    config.norm_placement = wiring.placement;
    config.residual = wiring.residual;
    config.theory_mode = wiring.theory_mode;
    config.encoder_layers = wiring.encoder_layers;
    if (wiring.theory_mode) config.heads = 1;
    const int vocab = 13;
    CpuBackend fast(2);
    CpuReferenceBackend reference(1);
    ASSERT_TRUE(fast.fuses_residual_sums());
    ASSERT_FALSE(reference.fuses_residual_sums());
    const Outcome got = run_model(fast, config, vocab);
    const Outcome want = run_model(reference, config, vocab);

    EXPECT_NEAR(got.stats.loss, want.stats.loss, 1e-5 * want.stats.loss);
    EXPECT_EQ(got.stats.first_nonfinite_block, want.stats.first_nonfinite_block);
    expect_same(got.stats.decoder.resid, want.stats.decoder.resid, "resid");
    expect_same(got.stats.decoder.resid_attn, want.stats.decoder.resid_attn, "resid_attn");
    expect_same(got.stats.cross.resid_attn, want.stats.cross.resid_attn, "cross resid_attn");
    expect_same(got.stats.encoder.resid, want.stats.encoder.resid, "encoder resid");
    expect_same(got.stats.encoder.resid_attn, want.stats.encoder.resid_attn, "encoder resid_attn");
    ASSERT_FALSE(want.stats.sublayers.dependency.empty());
    expect_same(got.stats.sublayers.dependency, want.stats.sublayers.dependency, "dependency");

    ASSERT_EQ(got.grads.size(), want.grads.size());
    for (size_t entry = 0; entry < want.grads.size(); ++entry) {
        double scale = 1e-6;
        for (float value : want.grads[entry]) scale = std::max(scale, static_cast<double>(std::abs(value)));
        for (size_t i = 0; i < want.grads[entry].size(); ++i) {
            ASSERT_NEAR(got.grads[entry][i], want.grads[entry][i], 1e-4 * scale)
                << "gradient of entry " << entry << " at " << i;
        }
    }
}

INSTANTIATE_TEST_SUITE_P(
    Wirings, FusedTelemetry,
    ::testing::Values(Wiring{"PreLN", NormPlacement::Pre, Residual::Plain, false, 0},
                      Wiring{"PostLN", NormPlacement::Post, Residual::Plain, false, 0},
                      Wiring{"PeriLN", NormPlacement::Peri, Residual::Plain, false, 0},
                      Wiring{"NoNorm", NormPlacement::None, Residual::Plain, false, 0},
                      Wiring{"TheoryPreLN", NormPlacement::Pre, Residual::Plain, true, 0},
                      Wiring{"ReZero", NormPlacement::None, Residual::ReZero, false, 0},
                      Wiring{"DeepNorm", NormPlacement::Post, Residual::DeepNorm, false, 0},
                      Wiring{"Admin", NormPlacement::Post, Residual::Admin, false, 0},
                      Wiring{"EncoderDecoderPreLN", NormPlacement::Pre, Residual::Plain, false, 2},
                      Wiring{"EncoderDecoderPostLN", NormPlacement::Post, Residual::Plain, false, 2}),
    [](const ::testing::TestParamInfo<Wiring>& info) { return info.param.name; });

}  // namespace
}  // namespace normlab
