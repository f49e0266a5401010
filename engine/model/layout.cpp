// Builds the parameter layout table in checkpoint-contract names (the architecture keys leave tensors
// out) and decides which entries are active for a given wiring (e.g. Peri-LN's output norms only under
// peri, RMSNorm has no bias). An encoder and the decoder's cross-attention come after the decoder-only
// model's entries, which keep their order; QK-norm's gains close each part, a gated FFN's gates and then
// DenseFormer's weights and Attention Residuals' queries the table.
#include "engine/model/layout.h"

#include <cmath>

namespace normlab {

int ParamLayout::find(const std::string& name) const {
    for (size_t i = 0; i < entries.size(); ++i) {
        if (entries[i].name == name) return static_cast<int>(i);
    }
    return -1;
}

namespace {
class LayoutBuilder {
  public:
    LayoutBuilder(ParamLayout& layout, bool bias) : m_layout(layout), m_bias(bias) {}

    // Entries of the encoder go in with block -1 and their encoder block set.
    void set_encoder_block(int encoder_block) { m_encoder_block = encoder_block; }

    int add(const std::string& name, std::vector<int64_t> shape, int block, ParamRole role) {
        size_t count = 1;
        for (int64_t dim : shape) count *= static_cast<size_t>(dim);
        m_layout.entries.push_back({name, std::move(shape), m_layout.total, count,
                                    m_encoder_block >= 0 ? -1 : block, role, m_encoder_block});
        m_layout.total += (count + 15) / 16 * 16;  // 64-byte aligned views
        return static_cast<int>(m_layout.entries.size()) - 1;
    }

    // A linear layer's bias, or -1 (no entry) with model.bias=false.
    int add_bias(const std::string& name, int64_t size, int block) {
        return m_bias ? add(name, {size}, block, ParamRole::Bias) : -1;
    }

    NormIndex add_norm(const std::string& prefix, int d, int block) {
        return {add(prefix + ".weight", {d}, block, ParamRole::NormWeight),
                add(prefix + ".bias", {d}, block, ParamRole::NormBias),
                add(prefix + ".alpha", {1}, block, ParamRole::NormAlpha)};
    }

    // A block's self-attention (q, then k and v of `kv` rows each), FFN and residual-scheme entries under
    // `prefix` ("blocks.3.").
    BlockIndex add_block(const std::string& p, int i, int d, int d_ff, int kv) {
        BlockIndex block;
        block.norm1 = add_norm(p + "norm1", d, i);
        block.qkv_weight = add(p + "attn.qkv.weight", {d + 2 * kv, d}, i, ParamRole::Matrix);
        block.qkv_bias = add_bias(p + "attn.qkv.bias", d + 2 * kv, i);
        block.out_weight = add(p + "attn.out.weight", {d, d}, i, ParamRole::Matrix);
        block.out_bias = add_bias(p + "attn.out.bias", d, i);
        block.norm1_out = add_norm(p + "norm1_out", d, i);
        block.norm2 = add_norm(p + "norm2", d, i);
        block.fc1_weight = add(p + "ffn.fc1.weight", {d_ff, d}, i, ParamRole::Matrix);
        block.fc1_bias = add_bias(p + "ffn.fc1.bias", d_ff, i);
        block.fc2_weight = add(p + "ffn.fc2.weight", {d, d_ff}, i, ParamRole::Matrix);
        block.fc2_bias = add_bias(p + "ffn.fc2.bias", d, i);
        block.norm2_out = add_norm(p + "norm2_out", d, i);
        block.rezero_alpha = add(p + "rezero_alpha", {1}, i, ParamRole::ReZeroAlpha);
        block.admin_omega = add(p + "admin_omega", {2}, i, ParamRole::AdminOmega);
        return block;
    }

    // A decoder block's cross-attention entries under `prefix`.
    void add_cross_attention(BlockIndex& block, const std::string& p, int i, int d) {
        block.norm_cross = add_norm(p + "norm_cross", d, i);
        block.cross_q_weight = add(p + "cross_attn.q.weight", {d, d}, i, ParamRole::Matrix);
        block.cross_q_bias = add_bias(p + "cross_attn.q.bias", d, i);
        block.cross_kv_weight = add(p + "cross_attn.kv.weight", {2 * d, d}, i, ParamRole::Matrix);
        block.cross_kv_bias = add_bias(p + "cross_attn.kv.bias", 2 * d, i);
        block.cross_out_weight = add(p + "cross_attn.out.weight", {d, d}, i, ParamRole::Matrix);
        block.cross_out_bias = add_bias(p + "cross_attn.out.bias", d, i);
        block.norm_cross_out = add_norm(p + "norm_cross_out", d, i);
        block.cross_admin_omega = add(p + "cross_attn.admin_omega", {1}, i, ParamRole::AdminOmega);
    }

    // A gated FFN's gate ("ffn.gate." under the block's prefix); fc1 is its up projection.
    void add_gate(BlockIndex& block, const std::string& p, int i, int d, int d_ff) {
        block.gate_weight = add(p + "ffn.gate.weight", {d_ff, d}, i, ParamRole::Matrix);
        block.gate_bias = add_bias(p + "ffn.gate.bias", d_ff, i);
    }

    // QK-norm's gains of a block's attention ("attn." or "cross_attn." under the block's prefix).
    void add_qk_norm(int& q_norm, int& k_norm, const std::string& p, int i, int head_dim) {
        q_norm = add(p + "q_norm.weight", {head_dim}, i, ParamRole::QkNormWeight);
        k_norm = add(p + "k_norm.weight", {head_dim}, i, ParamRole::QkNormWeight);
    }

  private:
    ParamLayout& m_layout;
    bool m_bias;
    int m_encoder_block = -1;
};

std::string block_prefix(int i) {
    return "blocks." + std::to_string(i) + ".";
}

// Whether a norm entry is used: a block's norms by its block's placement, the final norms by whether
// their stack ends in one.
bool norm_active(const ParamEntry& entry, const ModelConfig& model) {
    const bool is_output_norm = entry.name.find("_out.") != std::string::npos;
    const bool is_final =
        entry.name.rfind("final_norm.", 0) == 0 || entry.name.rfind("encoder.final_norm.", 0) == 0;
    const bool encoder = entry.encoder_block >= 0;
    if (is_final) return has_final_norm(model, encoder);
    const NormPlacement placement =
        block_placement(model, encoder ? entry.encoder_block : entry.block, encoder);
    if (placement == NormPlacement::None) return false;
    if (is_output_norm) return placement == NormPlacement::Peri;
    return true;
}

// The encoder's blocks and final norm, then the decoder's cross-attention QK-norm gains.
void add_encoder(LayoutBuilder& builder, ParamLayout& layout, const ModelConfig& model) {
    const int d = model.d_model;
    const int head_dim = d / model.heads;
    for (int i = 0; i < model.layers; ++i)
        builder.add_cross_attention(layout.blocks[i], block_prefix(i), i, d);
    for (int i = 0; i < model.encoder_layers; ++i) {
        builder.set_encoder_block(i);
        layout.encoder_blocks.push_back(
            builder.add_block("encoder." + block_prefix(i), i, d, model.d_ff, key_value_width(model)));
    }
    builder.set_encoder_block(model.encoder_layers);
    layout.encoder_final_norm = builder.add_norm("encoder.final_norm", d, -1);
    for (int i = 0; i < model.encoder_layers; ++i) {
        builder.set_encoder_block(i);
        BlockIndex& block = layout.encoder_blocks[i];
        builder.add_qk_norm(block.q_norm, block.k_norm, "encoder." + block_prefix(i) + "attn.", i, head_dim);
    }
    builder.set_encoder_block(-1);
    for (int i = 0; i < model.layers; ++i) {
        BlockIndex& block = layout.blocks[i];
        builder.add_qk_norm(block.cross_q_norm, block.cross_k_norm, block_prefix(i) + "cross_attn.", i,
                            head_dim);
    }
}

// DenseFormer's weights after everything else (the decoder's blocks, then the encoder's), so that no other
// entry's index (and seed) moves.
void add_dense_weights(LayoutBuilder& builder, ParamLayout& layout, const ModelConfig& model) {
    auto count = [&](int block) {
        return static_cast<int64_t>(dense_sources(block, model.denseformer_dilation).size());
    };
    for (int i = 0; i < model.layers; ++i)
        layout.blocks[i].dense_weights =
            builder.add(block_prefix(i) + "dwa", {count(i)}, i, ParamRole::DenseWeight);
    for (int i = 0; i < model.encoder_layers; ++i) {
        builder.set_encoder_block(i);
        layout.encoder_blocks[i].dense_weights =
            builder.add("encoder." + block_prefix(i) + "dwa", {count(i)}, i, ParamRole::DenseWeight);
    }
    builder.set_encoder_block(-1);
}

// Attention Residuals' pseudo-queries after DenseFormer's weights (the decoder's blocks, then the encoder's).
void add_attn_res_queries(LayoutBuilder& builder, ParamLayout& layout, const ModelConfig& model) {
    const int64_t decoder_sublayers = model.encoder_layers > 0 ? 3 : 2;
    for (int i = 0; i < model.layers; ++i)
        layout.blocks[i].attn_res_queries =
            builder.add(block_prefix(i) + "attn_res.queries", {decoder_sublayers, model.d_model}, i,
                        ParamRole::AttnResQuery);
    for (int i = 0; i < model.encoder_layers; ++i) {
        builder.set_encoder_block(i);
        layout.encoder_blocks[i].attn_res_queries =
            builder.add("encoder." + block_prefix(i) + "attn_res.queries", {2, model.d_model}, i,
                        ParamRole::AttnResQuery);
    }
    builder.set_encoder_block(-1);
}

// A gated FFN's gates close the table (the decoder's blocks, then the encoder's).
void add_gates(LayoutBuilder& builder, ParamLayout& layout, const ModelConfig& model) {
    for (int i = 0; i < model.layers; ++i)
        builder.add_gate(layout.blocks[i], block_prefix(i), i, model.d_model, model.d_ff);
    for (int i = 0; i < model.encoder_layers; ++i) {
        builder.set_encoder_block(i);
        builder.add_gate(layout.encoder_blocks[i], "encoder." + block_prefix(i), i, model.d_model,
                         model.d_ff);
    }
    builder.set_encoder_block(-1);
}
}  // namespace

ParamLayout build_layout(const ModelConfig& model, int vocab) {
    ParamLayout layout;
    LayoutBuilder builder(layout, model.bias);
    const int d = model.d_model;
    const int head_dim = d / model.heads;
    layout.wte = builder.add("wte.weight", {vocab, d}, -1, ParamRole::Embedding);
    if (model.position == Position::Learned)
        layout.wpe = builder.add("wpe.weight", {model.seq_len, d}, -1, ParamRole::Embedding);
    for (int i = 0; i < model.layers; ++i)
        layout.blocks.push_back(builder.add_block(block_prefix(i), i, d, model.d_ff, key_value_width(model)));
    layout.final_norm = builder.add_norm("final_norm", d, -1);
    layout.head =
        model.tie_embeddings ? layout.wte : builder.add("head.weight", {vocab, d}, -1, ParamRole::Matrix);
    // QK-norm's gains after the rest of each model, so the entries before them (and the seeds that
    // initialise each entry by its index) stay what they were before QK-norm existed.
    for (int i = 0; i < model.layers; ++i) {
        BlockIndex& block = layout.blocks[i];
        builder.add_qk_norm(block.q_norm, block.k_norm, block_prefix(i) + "attn.", i, head_dim);
    }
    if (model.encoder_layers > 0) add_encoder(builder, layout, model);
    if (model.ffn != FeedForward::Mlp) add_gates(builder, layout, model);
    add_dense_weights(builder, layout, model);
    add_attn_res_queries(builder, layout, model);
    return layout;
}

bool is_active(const ParamEntry& entry, const ModelConfig& model) {
    switch (entry.role) {
        case ParamRole::NormWeight:
            return norm_active(entry, model);
        case ParamRole::NormBias:
            return norm_active(entry, model) && model.norm_type != NormType::RmsNorm;
        case ParamRole::NormAlpha:
            return norm_active(entry, model) && model.norm_type == NormType::DyT;
        case ParamRole::QkNormWeight:
            return model.qk_norm != QkNorm::None;
        case ParamRole::ReZeroAlpha:
            return model.residual == Residual::ReZero;
        case ParamRole::AdminOmega:
            return model.residual == Residual::Admin;
        case ParamRole::DenseWeight:
            return model.residual == Residual::DenseFormer;
        case ParamRole::AttnResQuery:
            return model.residual == Residual::AttnRes;
        case ParamRole::Matrix:
        case ParamRole::Bias:
            // theory mode has no output projection, in self- and cross-attention alike
            return !(model.theory_mode && (entry.name.find(".attn.out.") != std::string::npos ||
                                           entry.name.find(".cross_attn.out.") != std::string::npos));
        case ParamRole::Embedding:
            return true;
    }
    return true;
}

NormPlacement block_placement(const ModelConfig& model, int block, bool encoder) {
    if (model.norm_placement != NormPlacement::Mix) return model.norm_placement;
    const int blocks = encoder ? model.encoder_layers : model.layers;
    const int post_blocks = static_cast<int>(std::floor(model.mix_post_fraction * blocks + 1e-9));
    return block < post_blocks ? NormPlacement::Post : NormPlacement::Pre;
}

std::vector<int> dense_sources(int block, int dilation) {
    std::vector<int> sources;
    for (int j = dense_first_source(block, dilation); j <= block + 1; j += dilation) sources.push_back(j);
    return sources;
}

bool has_dual_stream(const ModelConfig& model, bool encoder) {
    return model.residual == Residual::ResiDual && (encoder ? model.encoder_layers : model.layers) > 0;
}

bool has_final_norm(const ModelConfig& model, bool encoder) {
    const int blocks = encoder ? model.encoder_layers : model.layers;
    if (has_dual_stream(model, encoder)) return true;  // the dual stream's norm
    return blocks > 0 ? has_input_norm(block_placement(model, blocks - 1, encoder))
                      : has_input_norm(model.norm_placement == NormPlacement::Mix ? NormPlacement::Pre
                                                                                  : model.norm_placement);
}

int key_value_heads(const ModelConfig& model) {
    return model.kv_heads > 0 ? model.kv_heads : model.heads;
}

int key_value_width(const ModelConfig& model) {
    return key_value_heads(model) * (model.d_model / model.heads);
}

ModelConfig effective_model_config(const ModelConfig& model) {
    ModelConfig effective = model;
    if (model.theory_mode) {
        effective.heads = 1;
        effective.d_ff = model.d_model;
        effective.activation = Activation::Relu;
        effective.ffn = FeedForward::Mlp;
        effective.kv_heads = 0;
        effective.init = InitScheme::XavierNormal;
    }
    return effective;
}

}  // namespace normlab
