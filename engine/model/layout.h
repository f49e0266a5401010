// The parameter layout table: every tensor's name (checkpoint contract of design.md), shape, offset in
// the single parameter buffer, owning block and role. Gradients and optimizer moments share it.
// The table holds every tensor any wiring can use; which are active depends on the model config.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/config/config.h"

namespace normlab {

enum class ParamRole { Embedding, Matrix, Bias, NormWeight, NormBias, NormAlpha, ReZeroAlpha, AdminOmega };

struct ParamEntry {
    std::string name;
    std::vector<int64_t> shape;
    size_t offset = 0;
    size_t count = 0;
    int block = -1;  // -1: not inside a block (embeddings, final norm, head)
    ParamRole role = ParamRole::Matrix;
};

// Entry indices of one norm: weight, bias, DyT alpha.
struct NormIndex {
    int weight = -1;
    int bias = -1;
    int alpha = -1;
};

struct BlockIndex {
    NormIndex norm1, norm2, norm1_out, norm2_out;
    int qkv_weight = -1, qkv_bias = -1, out_weight = -1, out_bias = -1;
    int fc1_weight = -1, fc1_bias = -1, fc2_weight = -1, fc2_bias = -1;
    int rezero_alpha = -1;  // [1], shared by the block's two sub-layers
    int admin_omega = -1;   // [2], one shortcut scale per sub-layer
};

struct ParamLayout {
    std::vector<ParamEntry> entries;
    size_t total = 0;
    int wte = -1;
    int wpe = -1;
    std::vector<BlockIndex> blocks;
    NormIndex final_norm;
    int head = -1;

    int find(const std::string& name) const;  // -1 when absent
};

ParamLayout build_layout(const ModelConfig& model, int vocab);

// Whether an entry takes part in the model wired as `model` (placement, norm type, residual, theory).
bool is_active(const ParamEntry& entry, const ModelConfig& model);

// The config with theory mode's forced settings applied (one head, d_ff = d, ReLU, Xavier normal).
ModelConfig effective_model_config(const ModelConfig& model);

}  // namespace normlab
