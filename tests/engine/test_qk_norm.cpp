// QK-norm (model.qk_norm) beyond its gradients (test_model_gradients.cpp) and PyTorch parity
// (tests/parity): the telemetry of the queries and keys it acts on, the bound it puts on attention logits,
// and switching it on and off live.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/model/model.h"
#include "tests/engine/model_test_support.h"

namespace normlab {
namespace {

ModelConfig qk_config(QkNorm qk_norm) {
    ModelConfig config = testing::tiny_model_config();
    config.qk_norm = qk_norm;
    return config;
}

double largest_magnitude(const std::vector<float>& values) {
    double largest = 0.0;
    for (float v : values) largest = std::max(largest, std::fabs(static_cast<double>(v)));
    return largest;
}

// With the projections' weights at 0, q and k are their biases: RMS = sqrt(mean of bias^2) exactly, with
// and without QK-norm (the telemetry reads them before the norm), and the two paths' slices agree.
TEST(QkNormTelemetry, QueryAndKeyRmsAreThoseOfTheProjections) {
    for (QkNorm qk : {QkNorm::None, QkNorm::RmsNorm}) {
        CpuBackend backend(1);
        const int vocab = 7;
        Model model(qk_config(qk), vocab, backend);
        model.initialize(3);
        const ParamLayout& layout = model.layout();
        const int d = 16;
        for (int block = 0; block < 2; ++block) {
            const BlockIndex& index = layout.blocks[block];
            model.write_entry(index.qkv_weight, std::vector<float>(3 * d * d, 0.0f));
            std::vector<float> bias(3 * d, 0.0f);
            for (int i = 0; i < d; ++i) {
                bias[i] = 0.5f * (block + 1);             // q: RMS 0.5 (block + 1)
                bias[d + i] = i % 2 == 0 ? 3.0f : -1.0f;  // k: RMS sqrt(5)
            }
            model.write_entry(index.qkv_bias, bias);
        }
        const ForwardStats& stats =
            model.forward_backward(testing::small_batch(vocab, 3, 8, 1), {.attention_stats = true});
        ASSERT_EQ(stats.decoder.q_rms.size(), 2u);
        ASSERT_EQ(stats.decoder.k_rms.size(), 2u);
        for (int block = 0; block < 2; ++block) {
            EXPECT_NEAR(stats.decoder.q_rms[block], 0.5 * (block + 1), 1e-6)
                << to_string(qk) << " block " << block;
            EXPECT_NEAR(stats.decoder.k_rms[block], std::sqrt(5.0), 1e-6)
                << to_string(qk) << " block " << block;
        }
    }
}

// The same parameters with and without QK-norm: the first block's queries and keys are the same, so
// their RMS must be too (the planar and the packed layouts measure the same thing).
TEST(QkNormTelemetry, PlanarAndPackedQueriesAgreeInTheFirstBlock) {
    const int vocab = 9;
    const Batch batch = testing::small_batch(vocab, 2, 8, 4);
    double q_rms[2], k_rms[2];
    for (int with = 0; with < 2; ++with) {
        CpuBackend backend(1);
        Model model(qk_config(with ? QkNorm::LayerNorm : QkNorm::None), vocab, backend);
        model.initialize(5);
        testing::perturb_parameters(model, 6);
        const ForwardStats& stats = model.forward_backward(batch, {.attention_stats = true});
        q_rms[with] = stats.decoder.q_rms[0];
        k_rms[with] = stats.decoder.k_rms[0];
    }
    EXPECT_GT(q_rms[0], 0.01);
    EXPECT_NEAR(q_rms[1], q_rms[0], 1e-6 * q_rms[0]);
    EXPECT_NEAR(k_rms[1], k_rms[0], 1e-6 * k_rms[0]);
}

// With QK-norm a logit q.k / sqrt(hd) can never exceed sqrt(hd) max|g_q| max|g_k|, however large the
// projections; without it the same weights go far beyond (the bound is not vacuous).
TEST(QkNormTelemetry, LargestLogitStaysUnderTheGainBound) {
    const int vocab = 9;
    const Batch batch = testing::small_batch(vocab, 2, 8, 8);
    const double head_dim = 8.0;
    for (QkNorm qk : {QkNorm::LayerNorm, QkNorm::RmsNorm, QkNorm::None}) {
        CpuBackend backend(1);
        Model model(qk_config(qk), vocab, backend);
        model.initialize(9);
        testing::perturb_parameters(model, 10);
        const ParamLayout& layout = model.layout();
        for (const BlockIndex& index : layout.blocks) {
            std::vector<float> w = model.read_entry(index.qkv_weight);
            for (float& v : w) v *= 40.0f;  // logits in the hundreds without QK-norm
            model.write_entry(index.qkv_weight, w);
            std::vector<float> gain = model.read_entry(index.q_norm);
            for (size_t i = 0; i < gain.size(); ++i) gain[i] = 1.0f + 0.25f * static_cast<float>(i % 3);
            model.write_entry(index.q_norm, gain);
        }
        const ForwardStats& stats = model.forward_backward(batch, {.attention_stats = true});
        ASSERT_EQ(stats.decoder.attn_head_max_logit.size(), layout.blocks.size() * 2);  // 2 heads per block
        for (size_t block = 0; block < layout.blocks.size(); ++block) {
            const double head0 = stats.decoder.attn_head_max_logit[2 * block],
                         head1 = stats.decoder.attn_head_max_logit[2 * block + 1];
            EXPECT_EQ(std::max(head0, head1), stats.decoder.attn_max_logit[block])
                << "the block's is its heads' largest";
            EXPECT_NE(head0, head1);
            const BlockIndex& index = layout.blocks[block];
            const double bound = std::sqrt(head_dim) * largest_magnitude(model.read_entry(index.q_norm)) *
                                 largest_magnitude(model.read_entry(index.k_norm));
            if (qk == QkNorm::None) {
                EXPECT_GT(stats.decoder.attn_max_logit[block], 3.0 * bound) << "block " << block;
            } else {
                EXPECT_LE(stats.decoder.attn_max_logit[block], bound * (1.0 + 1e-6))
                    << to_string(qk) << " block " << block;
                EXPECT_GT(stats.decoder.attn_max_logit[block], 0.3 * bound)
                    << to_string(qk) << " block " << block;
                EXPECT_LE(std::min(head0, head1), bound * (1.0 + 1e-6));
            }
        }
    }
}

// Switching QK-norm on live activates the gains at 1 (and off again leaves the model as it was).
TEST(QkNormLive, SwitchingOnStartsWithUnitGainsAndOffRestoresTheLoss) {
    const int vocab = 9;
    const Batch batch = testing::small_batch(vocab, 2, 8, 12);
    CpuBackend backend(1);
    Model model(qk_config(QkNorm::None), vocab, backend);
    model.initialize(13);
    testing::perturb_parameters(model, 14);
    const double before = model.forward_backward(batch, {.backward = true, .attention_stats = true}).loss;
    ModelConfig wiring = model.config();
    wiring.qk_norm = QkNorm::RmsNorm;
    const std::vector<int> activated = model.set_wiring(wiring);
    EXPECT_EQ(activated.size(), 4u);  // q and k gains of 2 blocks
    for (int entry : activated) {
        for (float g : model.read_entry(entry)) EXPECT_EQ(g, 1.0f) << model.layout().entries[entry].name;
    }
    const double with_qk = model.forward_backward(batch, {.backward = true, .attention_stats = true}).loss;
    EXPECT_TRUE(std::isfinite(with_qk));
    EXPECT_NE(with_qk, before);
    wiring.qk_norm = QkNorm::None;
    EXPECT_TRUE(model.set_wiring(wiring).empty());
    EXPECT_EQ(model.forward_backward(batch, {.backward = true, .attention_stats = true}).loss, before);
}

}  // namespace
}  // namespace normlab
