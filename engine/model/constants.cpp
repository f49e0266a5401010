// DeepNorm (Wang et al. 2022) and Admin (Liu et al. 2020) constants, as given in theory.md.
// Worked values (N = 6, 12, 100 blocks; S = 12, 24 sub-layers) are pinned in test_formulas.cpp.
#include "engine/model/constants.h"

#include <cmath>

namespace normlab {

double deepnorm_alpha(int blocks) {
    return std::pow(2.0 * blocks, 0.25);
}

double deepnorm_beta(int blocks) {
    return std::pow(8.0 * blocks, -0.25);
}

double admin_closed_omega(int sublayers) {
    const double s = sublayers;
    return std::sqrt((s + 1.0) / std::log(s + 1.0) - 1.0);
}

double effective_deepnorm_alpha(const ModelConfig& model) {
    return model.deepnorm_alpha > 0.0 ? model.deepnorm_alpha : deepnorm_alpha(model.layers);
}

double effective_deepnorm_beta(const ModelConfig& model) {
    return model.deepnorm_beta > 0.0 ? model.deepnorm_beta : deepnorm_beta(model.layers);
}

}  // namespace normlab
