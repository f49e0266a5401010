// The contribution share ||a F(x)|| / ||x|| of every sub-layer (Model::measure_branch_shares) against
// direct computation: with every attention output projection zeroed, a Pre-LN block adds only its FFN,
// so the FFN's share is ||out_b - out_{b-1}|| / ||out_{b-1}|| from the blocks' outputs and the
// attention's is 0; ReZero's alpha scales the branch as added. A trainer's records carry the shares.
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

constexpr int kVocab = 9;

double norm_of_difference(const std::vector<double>& a, const std::vector<double>& b) {
    double total = 0.0;
    for (size_t i = 0; i < a.size(); ++i) total += (a[i] - b[i]) * (a[i] - b[i]);
    return std::sqrt(total);
}

double norm_of(const std::vector<double>& a) {
    return norm_of_difference(a, std::vector<double>(a.size(), 0.0));
}

TEST(ContributionShare, IsEachBranchAgainstTheStreamItIsAddedTo) {
    for (Residual residual : {Residual::Plain, Residual::ReZero, Residual::Lns}) {
        ModelConfig config = testing::tiny_model_config(3);
        config.norm_placement = NormPlacement::Pre;
        config.residual = residual;
        CpuBackend backend(1);
        Model model(config, kVocab, backend);
        model.initialize(3);
        testing::perturb_parameters(model, 4);  // ReZero's alphas off 0
        for (const BlockIndex& block : model.layout().blocks)
            for (int entry : {block.out_weight, block.out_bias})
                model.write_entry(entry, std::vector<float>(model.read_entry(entry).size(), 0.0f));
        const Batch batch = testing::small_batch(kVocab, 2, 8, 5);
        const ForwardStats& stats = model.forward_backward(batch, {.attention_stats = true});
        const SublayerSlots slots(model.config());
        std::vector<double> input = testing::embeddings(model, batch);
        for (int b = 0; b < config.layers; ++b) {
            const std::vector<double> output = testing::to_double(model.read_block_output(b));
            const double expected = norm_of_difference(output, input) / norm_of(input);
            const double ffn =
                stats.sublayers.contribution[static_cast<size_t>(slots.of(kFeedForwardSublayer, b))];
            EXPECT_NEAR(ffn, expected, 1e-4 * expected) << to_string(residual) << " block " << b;
            EXPECT_GT(expected, 1e-3);
            EXPECT_EQ(stats.sublayers.contribution[static_cast<size_t>(slots.of(kAttentionSublayer, b))],
                      0.0);
            input = output;
        }
    }
}

TEST(ContributionShare, RecordsCarryItAndReadItBack) {
    Trainer trainer(testing::tiny_copy_encoder_decoder(1));
    const StepRecord& record = trainer.step().record;
    for (const LayerTelemetry& layer : record.layers) {
        EXPECT_GT(layer.contribution_attn, 0.0);
        EXPECT_GT(layer.contribution_ffn, 0.0);
        EXPECT_GT(layer.contribution_cross, 0.0);
    }
    EXPECT_GT(record.encoder_layers.at(0).contribution_ffn, 0.0);
    const nlohmann::json line = to_json(record);
    EXPECT_TRUE(line["layers"][0]["contribution"].contains("cross"));
    const StepRecord read = MetricsLineParser().parse(line.dump());
    EXPECT_EQ(read.layers[1].contribution_cross, record.layers[1].contribution_cross);
    EXPECT_EQ(read.encoder_layers[0].contribution_attn, record.encoder_layers[0].contribution_attn);
    const std::vector<std::string> names = block_field_names(true);
    EXPECT_NE(std::find(names.begin(), names.end(), "contribution.cross"), names.end());
}

}  // namespace
}  // namespace normlab
