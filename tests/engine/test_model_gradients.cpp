// Whole-model gradient checks: for every norm placement x norm type x residual scheme (and theory
// mode), the analytic gradient of each active tensor against central differences of the loss along a
// random direction restricted to that tensor.
#include <gtest/gtest.h>

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
void check_model_gradients(const ModelConfig& config, const std::string& label) {
    CpuBackend backend(1);
    const int vocab = 11;
    Model model(config, vocab, backend);
    model.initialize(7);
    perturb_parameters(model, 3);
    const Batch batch = small_batch(vocab, 2, config.seq_len, 5);
    model.forward_backward(batch, true, false);
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
        const float step = 2e-3f;
        auto loss_at = [&](float scale) {
            auto moved = original;
            for (size_t j = 0; j < moved.size(); ++j) moved[j] += scale * step * direction[j];
            model.write_entry(static_cast<int>(i), moved);
            return model.forward_backward(batch, false, false).loss;
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
class ModelGradients : public ::testing::TestWithParam<Wiring> {};

TEST_P(ModelGradients, MatchFiniteDifferences) {
    const auto [placement, type, residual] = GetParam();
    ModelConfig config;
    config.d_model = 8;
    config.heads = 2;
    config.d_ff = 12;
    config.layers = 2;
    config.seq_len = 5;
    config.activation = Activation::Gelu;  // smooth, so differences do not straddle a kink
    config.norm_placement = placement;
    config.norm_type = type;
    config.residual = residual;
    check_model_gradients(config, to_string(placement) + "/" + to_string(type) + "/" + to_string(residual));
}

INSTANTIATE_TEST_SUITE_P(AllWirings, ModelGradients,
                         ::testing::Combine(::testing::Values(NormPlacement::Post, NormPlacement::Pre,
                                                              NormPlacement::Peri, NormPlacement::None),
                                            ::testing::Values(NormType::LayerNorm, NormType::RmsNorm,
                                                              NormType::DyT),
                                            ::testing::Values(Residual::Plain, Residual::DeepNorm,
                                                              Residual::ReZero, Residual::Admin)),
                         [](const auto& info) {
                             return to_string(std::get<0>(info.param)) + "_" +
                                    to_string(std::get<1>(info.param)) + "_" +
                                    to_string(std::get<2>(info.param));
                         });

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

}  // namespace
}  // namespace normlab
