// Measurements at initialisation (Xiong et al. 2020, Figure 3 and Lemma 2): per-block residual-stream
// norms and gradient norms averaged over K batches, both as the mean of norms and as the norm of the
// mean gradient; and Liu et al.'s output change under one optimizer step. With an encoder, its blocks and
// each decoder block's cross-attention are measured too (additive fields, see to_json).
#pragma once
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace normlab {

class Trainer;

struct GradientProbe {
    double mean_norm = 0.0;     // mean over batches of ||grad W||_F
    double norm_of_mean = 0.0;  // ||mean over batches of grad W||_F (the measure of Figure 3)
};

struct BlockProbe {
    double resid = 0.0;       // E||h||^2/d of the block's output residual sum, averaged over batches
    double resid_attn = 0.0;  // the same for the attention residual sum
    GradientProbe w_qkv, w_o, w_1, w_2;
    double dependency_attn = 0.0;  // Var[F(x)] / Var[x + F(x)] per sub-layer
    double dependency_ffn = 0.0;
    // A decoder block with cross-attention (an encoder-decoder model): its residual sum, dependency
    // and the gradients of its query, key-value and output projections.
    bool has_cross = false;
    double resid_cross = 0.0;
    double dependency_cross = 0.0;
    GradientProbe w_cross_q, w_cross_kv, w_cross_o;
};

struct ProbeResult {
    int batches = 0;
    double loss = 0.0;  // mean over the batches
    std::vector<BlockProbe> blocks;
    std::vector<BlockProbe> encoder_blocks;  // empty for a decoder-only model
};

// Runs K forward/backward passes on training batches 0..K-1 without updating the parameters.
ProbeResult probe_at_init(Trainer& trainer, int batches);

// Output change under one optimizer step on batch 0 (Liu et al. 2020): per block, the relative change
// ||y_i(w + delta) - y_i(w)|| / ||y_i(w)|| of the block's output, then the same for the model's
// output (the head's input). The trainer takes that step.
struct OutputChange {
    std::vector<double> per_block;
    std::vector<double> per_encoder_block;  // with an encoder
    double model_output = 0.0;
};
OutputChange output_change_after_one_step(Trainer& trainer);

nlohmann::json to_json(const ProbeResult& probe, const OutputChange* change);

}  // namespace normlab
