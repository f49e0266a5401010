// Model helpers shared by the engine and CUDA tests: a small model's config, a small batch with some
// unscored positions, and parameters nudged off their symmetric init.
#pragma once
#include <cmath>
#include <cstdint>
#include <vector>

#include "engine/config/config.h"
#include "engine/core/rng.h"
#include "engine/data/task.h"
#include "engine/model/model.h"
#include "tests/engine/gradient_check.h"

namespace normlab::testing {

// A small model that trains in milliseconds: 2 heads, d_ff = 2 d_model, the other keys at defaults.
inline Config small_model_config(int d_model, int layers, int seq_len, int batch_size, int steps) {
    Config config;
    config.model.d_model = d_model;
    config.model.heads = 2;
    config.model.d_ff = 2 * d_model;
    config.model.layers = layers;
    config.model.seq_len = seq_len;
    config.train.batch_size = batch_size;
    config.train.steps = steps;
    return config;
}

// A tiny model for telemetry checks: d 16, 2 heads of 8, d_ff 32, `layers` blocks, seq 8.
inline ModelConfig tiny_model_config(int layers = 2) {
    ModelConfig config;
    config.d_model = 16;
    config.heads = 2;
    config.d_ff = 32;
    config.layers = layers;
    config.seq_len = 8;
    return config;
}

inline Batch small_batch(int vocab, int batch, int seq, uint64_t seed) {
    Rng rng(seed);
    Batch b{batch, seq, {}, {}};
    for (int i = 0; i < batch * seq; ++i) {
        b.inputs.push_back(rng.below(vocab));
        b.targets.push_back(i % 4 == 3 ? -1 : rng.below(vocab));  // some unscored positions
    }
    return b;
}

// Nudges every parameter away from its symmetric init (zero biases, unit gains, ReZero 0) so that
// every gradient path is exercised.
inline void perturb_parameters(Model& model, uint64_t seed) {
    for (size_t i = 0; i < model.layout().entries.size(); ++i) {
        auto values = model.read_entry(static_cast<int>(i));
        const auto noise = random_tensor(values.size(), mix_seed(seed, i), 0.1);
        for (size_t j = 0; j < values.size(); ++j) values[j] += noise[j];
        model.write_entry(static_cast<int>(i), values);
    }
}

// A tiny encoder-decoder on the copy task (its source the first half of 17 positions), 2 steps, 1 thread.
inline Config tiny_copy_encoder_decoder(int encoder_layers) {
    Config config;
    config.model = tiny_model_config();
    config.model.encoder_layers = encoder_layers;
    config.model.seq_len = 17;
    config.data.task = TaskKind::Copy;
    config.data.symbols = 8;
    config.train.steps = 2;
    config.threads = 1;
    return config;
}

inline std::vector<double> to_double(const std::vector<float>& values) {
    return {values.begin(), values.end()};
}

// The embeddings wte[token] + wpe[position] of a batch's rows: the first sub-layer's input in either
// stack (learned positions).
inline std::vector<double> embeddings(Model& model, const Batch& batch) {
    const int d = model.config().d_model;
    const std::vector<float> wte = model.read_entry(model.layout().wte);
    const std::vector<float> wpe = model.read_entry(model.layout().wpe);
    std::vector<double> x;
    for (size_t row = 0; row < batch.inputs.size(); ++row) {
        for (int i = 0; i < d; ++i)
            x.push_back(static_cast<double>(wte[batch.inputs[row] * d + i]) + wpe[(row % batch.seq) * d + i]);
    }
    return x;
}

// LayerNorm over each row of x [rows, d] with unit gain, zero bias and eps 1e-5 (model.norm_eps).
inline std::vector<double> unit_layer_norm(const std::vector<double>& x, int d) {
    std::vector<double> y(x.size());
    for (size_t row = 0; row < x.size() / d; ++row) {
        double mean = 0.0, second = 0.0;
        for (int i = 0; i < d; ++i) mean += x[row * d + i] / d;
        for (int i = 0; i < d; ++i) second += (x[row * d + i] - mean) * (x[row * d + i] - mean) / d;
        for (int i = 0; i < d; ++i) y[row * d + i] = (x[row * d + i] - mean) / std::sqrt(second + 1e-5);
    }
    return y;
}

}  // namespace normlab::testing
