// Names a model config's architecture family from its architecture keys (docs/model.md#architecture-keys):
// the traits first, then the family they make; anything between the named families is "custom".
#include "engine/config/architecture_family.h"

#include <vector>

namespace normlab {

namespace {
std::string position_trait(Position position) {
    if (position == Position::Rope) return "RoPE";
    return position == Position::Learned ? "learned positions" : "no positions";
}

std::string ffn_trait(const ModelConfig& model) {
    if (model.ffn == FeedForward::SwiGlu) return "SwiGLU";
    if (model.ffn == FeedForward::GeGlu) return "GeGLU";
    if (model.activation == Activation::Relu) return "ReLU MLP";
    return model.activation == Activation::Gelu ? "GELU MLP" : "tanh-GELU MLP";
}

std::string join(const std::vector<std::string>& parts) {
    std::string out;
    for (const std::string& part : parts) out += (out.empty() ? "" : ", ") + part;
    return out;
}
}  // namespace

std::string architecture_family(const ModelConfig& model) {
    if (model.theory_mode) return "Xiong et al.'s simplified model";
    const int kv = model.kv_heads == 0 ? model.heads : model.kv_heads;
    std::vector<std::string> traits = {position_trait(model.position), ffn_trait(model),
                                       model.bias ? "biases" : "no biases",
                                       model.tie_embeddings ? "tied head" : "untied head"};
    if (kv == 1 && model.heads > 1) {
        traits.push_back("multi-query");
    } else if (kv != model.heads) {
        traits.push_back("GQA " + std::to_string(kv) + "/" + std::to_string(model.heads));
    }
    const bool mlp = model.ffn == FeedForward::Mlp, learned = model.position == Position::Learned;
    std::string family = "custom";
    if (model.position == Position::Rope && model.ffn == FeedForward::SwiGlu && !model.bias) {
        family = "Llama-shaped";
    } else if (learned && mlp && model.activation != Activation::Relu && model.bias && model.tie_embeddings &&
               kv == model.heads) {
        family = "GPT-2-shaped";
    } else if (learned && mlp && model.bias && !model.tie_embeddings && kv == model.heads) {
        family = "2020 model";
    }
    return family + " (" + join(traits) + ")";
}

}  // namespace normlab
