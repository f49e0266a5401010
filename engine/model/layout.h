// The parameter layout table: every tensor's name (the checkpoint contract, docs/formats.md#checkpoints),
// shape, offset in the single parameter buffer, owning block and role. Gradients and optimizer moments
// share it.
// The table holds every tensor any wiring can use; which are active depends on the model config.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/config/config.h"

namespace normlab {

enum class ParamRole {
    Embedding,
    Matrix,
    Bias,
    NormWeight,
    NormBias,
    NormAlpha,
    QkNormWeight,  // a QK-norm gain [head_dim], shared by the heads (model.qk_norm)
    ReZeroAlpha,
    AdminOmega,
    DenseWeight,  // DenseFormer: a block's weights over the outputs its average reads (dense_sources)
    AttnResQuery  // Attention Residuals: a block's pseudo-queries, one row per sub-layer [sub-layers, d]
};

struct ParamEntry {
    std::string name;
    std::vector<int64_t> shape;
    size_t offset = 0;
    size_t count = 0;
    int block = -1;  // decoder block; -1: not inside one (embeddings, final norm, head, the encoder)
    ParamRole role = ParamRole::Matrix;
    int encoder_block = -1;  // encoder block (model.encoder_layers = its final norm); -1: not the encoder
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
    int q_norm = -1, k_norm = -1;  // QK-norm gains [head_dim] of the queries and the keys
    int fc1_weight = -1, fc1_bias = -1, fc2_weight = -1, fc2_bias = -1;
    int gate_weight = -1, gate_bias = -1;  // model.ffn swiglu / geglu: the gate [d_ff, d] (fc1 is up)
    int rezero_alpha = -1;                 // [1], shared by the block's sub-layers
    int admin_omega = -1;                  // [2], one shortcut scale per sub-layer (attention, FFN)
    // Decoder blocks of an encoder-decoder model: cross-attention (queries from the decoder stream, keys
    // and values from the encoder's memory) between self-attention and the FFN.
    NormIndex norm_cross, norm_cross_out;
    int cross_q_weight = -1, cross_q_bias = -1;    // [d, d]
    int cross_kv_weight = -1, cross_kv_bias = -1;  // [2d, d]: k then v
    int cross_out_weight = -1, cross_out_bias = -1;
    int cross_q_norm = -1, cross_k_norm = -1;
    int cross_admin_omega = -1;  // [1]
    int dense_weights = -1;      // DenseFormer: [dense_sources(block, dilation).size()]
    // Attention Residuals: [sub-layers, d], row k the pseudo-query of the average after the block's k-th
    // sub-layer (attention, cross-attention, FFN in order), the next sub-layer's input or the stack's output
    int attn_res_queries = -1;
};

// Entries the architecture keys leave out are not in the table and their index is -1: every bias with
// model.bias=false, wpe unless model.position=learned, the gates unless model.ffn is gated. With
// model.tie_embeddings, head is wte's index (one matrix, both gradients summed into it).
struct ParamLayout {
    std::vector<ParamEntry> entries;
    size_t total = 0;
    int wte = -1;
    int wpe = -1;
    std::vector<BlockIndex> blocks;
    NormIndex final_norm;
    int head = -1;
    std::vector<BlockIndex> encoder_blocks;  // empty for a decoder-only model
    NormIndex encoder_final_norm;            // Pre-/Peri-LN: the norm whose output is the memory

    int find(const std::string& name) const;  // -1 when absent
};

ParamLayout build_layout(const ModelConfig& model, int vocab);

// Whether an entry takes part in the model wired as `model` (placement, norm type, residual, theory).
bool is_active(const ParamEntry& entry, const ModelConfig& model);

// The placement of one block (encoder: of the encoder's stack): the model's, or with Mix-LN Post-LN for
// the first floor(model.mix_post_fraction x blocks) blocks of the stack and Pre-LN for the rest.
NormPlacement block_placement(const ModelConfig& model, int block, bool encoder);
// Whether a stack ends in a final norm (the decoder's final_norm, the encoder's encoder.final_norm): when
// its last block has an input norm (Pre-LN, Peri-LN; Mix-LN unless every block is Post-LN), or it keeps
// ResiDual's dual stream, which that norm normalises.
bool has_final_norm(const ModelConfig& model, bool encoder);
// DenseFormer: the outputs block `block` (0-based) of a stack averages, oldest first: j = block + 1,
// block + 1 - k, ... >= 0, output 0 the stack's input (the embeddings) and output j block j - 1's; its
// weights (BlockIndex::dense_weights) follow this order. The one home of the dilation rule.
std::vector<int> dense_sources(int block, int dilation);
inline int dense_first_source(int block, int dilation) {
    return (block + 1) % dilation;
}  // the oldest
// Whether a stack keeps ResiDual's dual stream (model.residual=resi_dual and at least one block): the
// stack's input plus every branch, unnormalised; the stack's output is then x + FinalNorm(dual).
bool has_dual_stream(const ModelConfig& model, bool encoder);
// Pre-LN and Peri-LN put a norm on each sub-layer's input.
inline bool has_input_norm(NormPlacement placement) {
    return placement == NormPlacement::Pre || placement == NormPlacement::Peri;
}

// Self-attention's key and value heads (model.kv_heads, or heads when 0) and their width, kv_heads x
// d_model / heads: the rows of k and of v in attn.qkv.weight (cross-attention keeps d_model).
int key_value_heads(const ModelConfig& model);
int key_value_width(const ModelConfig& model);

// The config with theory mode's forced settings applied (one head, d_ff = d, a ReLU MLP, Xavier normal).
ModelConfig effective_model_config(const ModelConfig& model);

}  // namespace normlab
