// DeepNorm (Wang et al. 2022) and Admin (Liu et al. 2020) constants, as given in docs/science.md.
// Worked values (N = 6, 12, 100 blocks; S = 12, 24 sub-layers) are pinned in test_formulas.cpp.
#include "engine/model/constants.h"

#include <cmath>

#include "engine/model/sublayer_slots.h"

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

double deepnorm_encoder_alpha(int encoder_blocks, int decoder_blocks) {
    return 0.81 * std::pow(std::pow(static_cast<double>(encoder_blocks), 4.0) * decoder_blocks, 1.0 / 16.0);
}

double deepnorm_encoder_beta(int encoder_blocks, int decoder_blocks) {
    return 0.87 * std::pow(std::pow(static_cast<double>(encoder_blocks), 4.0) * decoder_blocks, -1.0 / 16.0);
}

double deepnorm_decoder_alpha(int decoder_blocks) {
    return std::pow(3.0 * decoder_blocks, 0.25);
}

double deepnorm_decoder_beta(int decoder_blocks) {
    return std::pow(12.0 * decoder_blocks, -0.25);
}

double effective_deepnorm_alpha(const ModelConfig& model, bool encoder) {
    if (model.deepnorm_alpha > 0.0) return model.deepnorm_alpha;
    if (model.encoder_layers <= 0) return deepnorm_alpha(model.layers);
    return encoder ? deepnorm_encoder_alpha(model.encoder_layers, model.layers)
                   : deepnorm_decoder_alpha(model.layers);
}

double effective_deepnorm_beta(const ModelConfig& model, bool encoder) {
    if (model.deepnorm_beta > 0.0) return model.deepnorm_beta;
    if (model.encoder_layers <= 0) return deepnorm_beta(model.layers);
    return encoder ? deepnorm_encoder_beta(model.encoder_layers, model.layers)
                   : deepnorm_decoder_beta(model.layers);
}

int residual_sublayers(const ModelConfig& model) {
    return SublayerSlots(model).count();
}

}  // namespace normlab
