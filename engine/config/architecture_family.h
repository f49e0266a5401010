// Which model an answer is about, in a caption's words: the architecture family of a model config
// ("2020 model", "Llama-shaped", "GPT-2-shaped" or "custom") and the architecture keys behind it.
#pragma once
#include <string>

#include "engine/config/config.h"

namespace normlab {

// E.g. "Llama-shaped (RoPE, SwiGLU, no biases, tied head, GQA 2/4)" or "2020 model (learned positions,
// ReLU MLP, biases, untied head)"; theory mode is "Xiong et al.'s simplified model".
std::string architecture_family(const ModelConfig& model);

}  // namespace normlab
