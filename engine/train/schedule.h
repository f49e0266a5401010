// Learning-rate schedules (docs/science.md#warmup-schedules-and-optimizers): linear warmup followed by
// constant, linear decay, inverse-sqrt or cosine, and the Noam schedule; plus RAdam's variance
// rectification term.
#pragma once
#include <cstdint>

#include "engine/config/config.h"

namespace normlab {

// The learning rate of optimizer step t (1-based) for a run of train.steps steps.
double learning_rate(const TrainConfig& train, int d_model, int64_t step);

// RAdam's r_t when rho_t > 4, else 0 (meaning: take a momentum-SGD step).
double radam_rectification(double beta2, int64_t step);

}  // namespace normlab
