// The way back from NormLab to Hugging Face: which family a NormLab model config belongs to (with every
// key that keeps it out of both named) and the config.json transformers builds that model from.
#include <nlohmann/json.hpp>

#include "engine/config/config_keys.h"
#include "engine/core/errors.h"
#include "engine/io/hf_config.h"
#include "engine/model/parametrization.h"

namespace normlab {

namespace {
// What keeps `model` from being `family`'s model, one line per key ("model.position=learned: ...").
std::vector<std::string> family_problems(const ModelConfig& model, HfFamily family) {
    std::vector<std::string> problems;
    auto need = [&](bool ok, const std::string& key, const std::string& value, const std::string& why) {
        if (!ok) problems.push_back(key + "=" + value + ": " + why);
    };
    const std::string name = to_string(family);
    need(model.norm_placement == NormPlacement::Pre, "model.norm_placement", to_string(model.norm_placement),
         name + " is Pre-LN");
    need(model.residual == Residual::Plain, "model.residual", to_string(model.residual),
         name + " adds each branch to a plain residual stream");
    need(model.qk_norm == QkNorm::None, "model.qk_norm", to_string(model.qk_norm), name + " has no QK-norm");
    need(model.encoder_layers == 0, "model.encoder_layers", std::to_string(model.encoder_layers),
         name + " is decoder-only");
    need(!model.theory_mode, "model.theory_mode", "true", "the simplified model is no " + name);
    need(width_ratio(model) == 1.0 && branch_multiplier(model) == 1.0, "model.parametrization",
         to_string(model.parametrization),
         name +
             " has no output or branch multiplier and scales attention by 1/sqrt(d_head) (a muP or "
             "CompleteP model away from its base width or depth has them)");
    if (family == HfFamily::Llama) {
        need(model.norm_type == NormType::RmsNorm, "model.norm_type", to_string(model.norm_type),
             "Llama's norms are RMSNorm");
        need(model.position == Position::Rope, "model.position", to_string(model.position),
             "Llama uses RoPE");
        need(model.ffn != FeedForward::Mlp, "model.ffn", to_string(model.ffn),
             "Llama's FFN is gated (swiglu, or geglu as hidden_act gelu)");
    } else {
        need(model.norm_type == NormType::LayerNorm, "model.norm_type", to_string(model.norm_type),
             "GPT-2's norms are LayerNorm");
        need(model.position == Position::Learned, "model.position", to_string(model.position),
             "GPT-2 learns its positions");
        need(model.ffn == FeedForward::Mlp, "model.ffn", to_string(model.ffn), "GPT-2's FFN is an MLP");
        need(model.bias, "model.bias", "false", "GPT-2's linear layers have biases");
        need(model.kv_heads == 0 || model.kv_heads == model.heads, "model.kv_heads",
             std::to_string(model.kv_heads), "GPT-2 gives every head its keys and values");
    }
    return problems;
}
}  // namespace

HfFamily hf_family_of(const ModelConfig& model) {
    const HfFamily family = model.norm_type == NormType::RmsNorm ? HfFamily::Llama : HfFamily::Gpt2;
    const std::vector<std::string> problems = family_problems(model, family);
    if (problems.empty()) return family;
    std::string text = "this model is neither Hugging Face's Llama nor its GPT-2; as " + to_string(family) +
                       " (the nearer, by its norm type) it would need:";
    for (const std::string& problem : problems) text += "\n  " + problem;
    throw InputError(text);
}

nlohmann::json hf_config_json(const ModelConfig& model, int vocab) {
    const HfFamily family = hf_family_of(model);
    const int kv_heads = model.kv_heads == 0 ? model.heads : model.kv_heads;
    if (family == HfFamily::Llama) {
        const nlohmann::json rope = {{"rope_theta", model.rope_theta}, {"rope_type", "default"}};
        return {{"architectures", {"LlamaForCausalLM"}},
                {"model_type", "llama"},
                {"vocab_size", vocab},
                {"hidden_size", model.d_model},
                {"intermediate_size", model.d_ff},
                {"num_hidden_layers", model.layers},
                {"num_attention_heads", model.heads},
                {"num_key_value_heads", kv_heads},
                {"head_dim", model.d_model / model.heads},
                {"hidden_act", model.ffn == FeedForward::SwiGlu ? "silu" : "gelu"},
                {"max_position_embeddings", model.seq_len},
                {"rms_norm_eps", model.norm_eps},
                {"rope_parameters", rope},
                {"rope_theta", model.rope_theta},  // where transformers before 5 reads it
                {"attention_bias", model.bias},
                {"mlp_bias", model.bias},
                {"attention_dropout", 0.0},
                {"tie_word_embeddings", model.tie_embeddings},
                {"torch_dtype", "float32"}};
    }
    const char* activation = model.activation == Activation::GeluTanh ? "gelu_new"
                             : model.activation == Activation::Gelu   ? "gelu"
                                                                      : "relu";
    return {{"architectures", {"GPT2LMHeadModel"}},
            {"model_type", "gpt2"},
            {"vocab_size", vocab},
            {"n_embd", model.d_model},
            {"n_head", model.heads},
            {"n_layer", model.layers},
            {"n_inner", model.d_ff},
            {"n_positions", model.seq_len},
            {"activation_function", activation},
            {"layer_norm_epsilon", model.norm_eps},
            {"attn_pdrop", 0.0},
            {"embd_pdrop", 0.0},
            {"resid_pdrop", 0.0},
            {"tie_word_embeddings", model.tie_embeddings},
            {"torch_dtype", "float32"}};
}

}  // namespace normlab
