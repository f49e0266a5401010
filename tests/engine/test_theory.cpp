// Xiong et al. 2020 at initialisation, in theory mode at d >= 128: Lemma 2's residual-stream norms for
// Post-LN and Pre-LN (averaged over initialisations, as the expectation in the lemma is), and Lemma 3's
// LayerNorm Jacobian spectral norm sqrt(d) / ||x - mean||.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/analysis/probe.h"
#include "engine/backend/cpu/cpu_backend.h"
#include "engine/core/rng.h"
#include "engine/train/trainer.h"

namespace normlab {
namespace {

// Per-block resid of theory-mode models, averaged over seeds 1..seeds and `batches` batches each.
std::vector<double> theory_resid(NormPlacement placement, int layers, int seeds, int batches) {
    std::vector<double> mean(layers, 0.0);
    for (int seed = 1; seed <= seeds; ++seed) {
        Config config;
        config.model.theory_mode = true;
        config.model.d_model = 256;
        config.model.seq_len = 8;
        config.model.layers = layers;
        config.model.norm_placement = placement;
        config.train.seed = static_cast<uint64_t>(seed);
        config.threads = 2;
        Trainer trainer(config);
        const ProbeResult probe = probe_at_init(trainer, batches);
        for (int l = 0; l < layers; ++l) mean[l] += probe.blocks[l].resid / seeds;
    }
    return mean;
}

TEST(TheoryLemma2, PostLnResidualSumIsThreeHalvesDInEveryBlock) {
    const auto resid = theory_resid(NormPlacement::Post, 12, 4, 8);
    for (size_t l = 0; l < resid.size(); ++l) {
        EXPECT_NEAR(resid[l], 1.5, 0.1) << "block " << l << ": E||x_post5||^2/d";
    }
}

TEST(TheoryLemma2, PreLnResidualStreamGrowsInsideTheBounds) {
    const auto resid = theory_resid(NormPlacement::Pre, 12, 4, 8);
    for (int l = 1; l <= 12; ++l) {
        EXPECT_GE(resid[l - 1], 1.0 + l / 2.0) << "l = " << l;
        EXPECT_LE(resid[l - 1], 1.0 + 3.0 * l / 2.0) << "l = " << l;
    }
    // and it grows: each block adds between d/2 and 3d/2
    for (int l = 1; l < 12; ++l) EXPECT_GT(resid[l], resid[l - 1] + 0.5 - 0.2) << "l = " << l;
}

TEST(TheoryLemma3, LayerNormJacobianSpectralNorm) {
    CpuBackend backend(1);
    for (int d : {16, 128}) {
        Rng rng(static_cast<uint64_t>(d));
        std::vector<float> x(d), ones(d, 1.0f), zeros(d, 0.0f);
        double mean = 0.0;
        for (float& v : x) {
            v = static_cast<float>(3.0 * rng.normal() + 0.5);
            mean += v;
        }
        mean /= d;
        double centered = 0.0;
        for (float v : x) centered += (v - mean) * (v - mean);
        std::vector<float> y(d), stats(2);
        backend.norm_forward(NormType::LayerNorm, y.data(), stats.data(), x.data(), ones.data(), zeros.data(),
                             {}, 1, d, 0.0f);
        // Row i of J^T = backward of the unit vector e_i; J is symmetric for LayerNorm with gain 1.
        std::vector<double> jacobian(static_cast<size_t>(d) * d);
        for (int i = 0; i < d; ++i) {
            std::vector<float> unit(d, 0.0f), row(d), dw(d, 0.0f), db(d, 0.0f);
            unit[i] = 1.0f;
            backend.norm_backward(NormType::LayerNorm, row.data(), dw.data(), db.data(), nullptr, unit.data(),
                                  x.data(), stats.data(), ones.data(), {}, 1, d, false);
            for (int j = 0; j < d; ++j) jacobian[static_cast<size_t>(i) * d + j] = row[j];
        }
        // power iteration on J^T J
        std::vector<double> v(d, 1.0), w(d);
        v[0] = 2.0;
        double sigma = 0.0;
        for (int iteration = 0; iteration < 200; ++iteration) {
            std::vector<double> jv(d, 0.0);
            for (int i = 0; i < d; ++i)
                for (int j = 0; j < d; ++j) jv[i] += jacobian[static_cast<size_t>(i) * d + j] * v[j];
            std::fill(w.begin(), w.end(), 0.0);
            for (int i = 0; i < d; ++i)
                for (int j = 0; j < d; ++j) w[j] += jacobian[static_cast<size_t>(i) * d + j] * jv[i];
            double length = 0.0;
            for (double value : w) length += value * value;
            length = std::sqrt(length);
            sigma = std::sqrt(length);
            for (int j = 0; j < d; ++j) v[j] = w[j] / length;
        }
        const double expected = std::sqrt(static_cast<double>(d)) / std::sqrt(centered);
        EXPECT_NEAR(sigma / expected, 1.0, 1e-4) << "d = " << d;
    }
}

}  // namespace
}  // namespace normlab
