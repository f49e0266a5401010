// Closed-form constants of the residual schemes (theory.md): DeepNorm's alpha and beta for a
// decoder-only model of N blocks, and Admin's closed-form shortcut scale omega for S sub-layers.
#pragma once
#include "engine/config/config.h"

namespace normlab {

double deepnorm_alpha(int blocks);         // (2N)^(1/4)
double deepnorm_beta(int blocks);          // (8N)^(-1/4)
double admin_closed_omega(int sublayers);  // sqrt((S+1)/ln(S+1) - 1)

// The values in force for a config: explicit settings win over the depth-derived ones.
double effective_deepnorm_alpha(const ModelConfig& model);
double effective_deepnorm_beta(const ModelConfig& model);

}  // namespace normlab
