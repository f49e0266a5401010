// Builds the parameter layout table in checkpoint-contract names and decides which entries are active
// for a given wiring (e.g. Peri-LN's output norms only under peri, RMSNorm has no bias).
#include "engine/model/layout.h"

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
    explicit LayoutBuilder(ParamLayout& layout) : m_layout(layout) {}

    int add(const std::string& name, std::vector<int64_t> shape, int block, ParamRole role) {
        size_t count = 1;
        for (int64_t dim : shape) count *= static_cast<size_t>(dim);
        m_layout.entries.push_back({name, std::move(shape), m_layout.total, count, block, role});
        m_layout.total += (count + 15) / 16 * 16;  // 64-byte aligned views
        return static_cast<int>(m_layout.entries.size()) - 1;
    }

    NormIndex add_norm(const std::string& prefix, int d, int block) {
        return {add(prefix + ".weight", {d}, block, ParamRole::NormWeight),
                add(prefix + ".bias", {d}, block, ParamRole::NormBias),
                add(prefix + ".alpha", {1}, block, ParamRole::NormAlpha)};
    }

  private:
    ParamLayout& m_layout;
};

bool norm_active(const std::string& name, NormPlacement placement) {
    const bool is_output_norm = name.find("_out.") != std::string::npos;
    const bool is_final = name.rfind("final_norm.", 0) == 0;
    if (placement == NormPlacement::None) return false;
    if (is_output_norm) return placement == NormPlacement::Peri;
    if (is_final) return placement == NormPlacement::Pre || placement == NormPlacement::Peri;
    return true;
}
}  // namespace

ParamLayout build_layout(const ModelConfig& model, int vocab) {
    ParamLayout layout;
    LayoutBuilder builder(layout);
    const int d = model.d_model;
    const int d_ff = model.d_ff;
    layout.wte = builder.add("wte.weight", {vocab, d}, -1, ParamRole::Embedding);
    layout.wpe = builder.add("wpe.weight", {model.seq_len, d}, -1, ParamRole::Embedding);
    for (int i = 0; i < model.layers; ++i) {
        const std::string p = "blocks." + std::to_string(i) + ".";
        BlockIndex block;
        block.norm1 = builder.add_norm(p + "norm1", d, i);
        block.qkv_weight = builder.add(p + "attn.qkv.weight", {3 * d, d}, i, ParamRole::Matrix);
        block.qkv_bias = builder.add(p + "attn.qkv.bias", {3 * d}, i, ParamRole::Bias);
        block.out_weight = builder.add(p + "attn.out.weight", {d, d}, i, ParamRole::Matrix);
        block.out_bias = builder.add(p + "attn.out.bias", {d}, i, ParamRole::Bias);
        block.norm1_out = builder.add_norm(p + "norm1_out", d, i);
        block.norm2 = builder.add_norm(p + "norm2", d, i);
        block.fc1_weight = builder.add(p + "ffn.fc1.weight", {d_ff, d}, i, ParamRole::Matrix);
        block.fc1_bias = builder.add(p + "ffn.fc1.bias", {d_ff}, i, ParamRole::Bias);
        block.fc2_weight = builder.add(p + "ffn.fc2.weight", {d, d_ff}, i, ParamRole::Matrix);
        block.fc2_bias = builder.add(p + "ffn.fc2.bias", {d}, i, ParamRole::Bias);
        block.norm2_out = builder.add_norm(p + "norm2_out", d, i);
        block.rezero_alpha = builder.add(p + "rezero_alpha", {1}, i, ParamRole::ReZeroAlpha);
        block.admin_omega = builder.add(p + "admin_omega", {2}, i, ParamRole::AdminOmega);
        layout.blocks.push_back(block);
    }
    layout.final_norm = builder.add_norm("final_norm", d, -1);
    layout.head = builder.add("head.weight", {vocab, d}, -1, ParamRole::Matrix);
    return layout;
}

bool is_active(const ParamEntry& entry, const ModelConfig& model) {
    switch (entry.role) {
        case ParamRole::NormWeight:
            return norm_active(entry.name, model.norm_placement);
        case ParamRole::NormBias:
            return norm_active(entry.name, model.norm_placement) && model.norm_type != NormType::RmsNorm;
        case ParamRole::NormAlpha:
            return norm_active(entry.name, model.norm_placement) && model.norm_type == NormType::DyT;
        case ParamRole::ReZeroAlpha:
            return model.residual == Residual::ReZero;
        case ParamRole::AdminOmega:
            return model.residual == Residual::Admin;
        case ParamRole::Matrix:
        case ParamRole::Bias:
            return !(model.theory_mode && entry.name.find(".attn.out.") != std::string::npos);
        case ParamRole::Embedding:
            return true;
    }
    return true;
}

ModelConfig effective_model_config(const ModelConfig& model) {
    ModelConfig effective = model;
    if (model.theory_mode) {
        effective.heads = 1;
        effective.d_ff = model.d_model;
        effective.activation = Activation::Relu;
        effective.init = InitScheme::XavierNormal;
    }
    return effective;
}

}  // namespace normlab
