// model.parametrization's rules as multipliers on standard parametrization (SP): muP (Yang et al. 2022,
// Tensor Programs V, Table 3, as microsoft/mup applies it: MuReadout, MuAdam, MuSGD) relative to
// model.base_width, and CompleteP (Dey et al. 2025, alpha = 1) relative to model.base_depth. At the base
// width and depth every multiplier is 1, so the model is SP's exactly. docs/model.md lists each one.
#pragma once
#include "engine/config/config.h"
#include "engine/model/layout.h"

namespace normlab {

// m = d_model / base width; 1 under SP.
double width_ratio(const ModelConfig& model);
// CompleteP's factor on every residual branch: base depth / layers (1 otherwise).
double branch_multiplier(const ModelConfig& model);
// The factor on the logits (forward and backward): 1/m under muP and CompleteP, tied heads too
// (MuReadout / MuSharedReadout's output multiplier).
double output_multiplier(const ModelConfig& model);
// Attention's logit scale: 1/sqrt(hd) under SP; 1/sqrt(hd) x sqrt(base width / d_model) under muP, the
// 1/hd scaling of a head that widens with the model, equal to SP's at the base width.
float attention_logit_scale(const ModelConfig& model);
// The factor on hidden matrices' init std: sqrt(1/m) for init=gpt2 (a fixed 0.02); 1 for the Xavier
// inits, whose fan-in and fan-out already give hidden matrices a variance of order 1/width.
double hidden_init_gain(const ModelConfig& model);
// The width the token and position embeddings' Xavier init uses as fan-out: the base width under muP
// (an input layer's init does not change with width), d_model under SP.
int embedding_init_width(const ModelConfig& model);

// How a parameter's dimensions grow with width: hidden (both, e.g. a block's matrices), vector-like
// (one: embeddings, an untied head, biases, norm gains) or fixed (none: DyT's alpha, ReZero's alpha).
enum class WidthClass { Hidden, VectorLike, Fixed };
WidthClass width_class(const ParamLayout& layout, int entry);

// The learning rate's and the weight decay's factors for one entry: Adam-like optimizers divide hidden
// matrices' learning rate by m and multiply their decay by m (lr x decay, the decay per step, unchanged);
// SGD multiplies vector-like learning rates by m and divides their decay by m. 1 under SP.
struct OptimizerMultipliers {
    double lr = 1.0;
    double weight_decay = 1.0;
};
OptimizerMultipliers optimizer_multipliers(const ModelConfig& model, OptimizerKind optimizer,
                                           const ParamLayout& layout, int entry);

}  // namespace normlab
