// Model helpers shared by the whole-model tests (finite differences here, CUDA vs CPU in tests/cuda):
// a small batch with some unscored positions, and parameters nudged off their symmetric init.
#pragma once
#include <cstdint>

#include "engine/core/rng.h"
#include "engine/data/task.h"
#include "engine/model/model.h"
#include "tests/engine/gradient_check.h"

namespace normlab::testing {

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

}  // namespace normlab::testing
