// Closed-form constants of the residual schemes
// (docs/science.md#block-variants-norm-placement-x-residual-scheme): DeepNorm's alpha and beta for a
// decoder-only model of N blocks (and DeepNet's encoder-decoder values, docs/model.md#encoder-decoder-mode),
// and Admin's closed-form shortcut scale omega for S sub-layers.
#pragma once
#include "engine/config/config.h"

namespace normlab {

double deepnorm_alpha(int blocks);         // (2N)^(1/4)
double deepnorm_beta(int blocks);          // (8N)^(-1/4)
double admin_closed_omega(int sublayers);  // sqrt((S+1)/ln(S+1) - 1)

// DeepNet's encoder-decoder constants (Wang et al. 2022, N encoder and M decoder blocks): encoder
// alpha 0.81 (N^4 M)^(1/16), beta 0.87 (N^4 M)^(-1/16); decoder alpha (3M)^(1/4), beta (12M)^(-1/4).
double deepnorm_encoder_alpha(int encoder_blocks, int decoder_blocks);
double deepnorm_encoder_beta(int encoder_blocks, int decoder_blocks);
double deepnorm_decoder_alpha(int decoder_blocks);
double deepnorm_decoder_beta(int decoder_blocks);

// The values in force for a config and stack (`encoder`: a block of the encoder): explicit settings win
// over the depth-derived ones; with model.encoder_layers > 0 those are DeepNet's encoder-decoder values.
double effective_deepnorm_alpha(const ModelConfig& model, bool encoder = false);
double effective_deepnorm_beta(const ModelConfig& model, bool encoder = false);

// Residual sub-layers of a model: 2 per decoder-only block; with an encoder, 2 per encoder block and
// 3 per decoder block (self-attention, cross-attention, FFN). Admin's closed form takes this S.
int residual_sublayers(const ModelConfig& model);

}  // namespace normlab
