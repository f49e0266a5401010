// Hugging Face transformers configurations (config.json of LlamaConfig and GPT2Config) as NormLab config
// keys, and back. A key that changes the computation in a way NormLab does not build is refused by name;
// bookkeeping keys (token ids, caches, versions) are ignored. docs/huggingface.md lists both.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "engine/config/config.h"

namespace normlab {

enum class HfFamily { Llama, Gpt2 };
std::string to_string(HfFamily family);

// Dropout is off when a model is evaluated, so only training refuses a non-zero dropout.
enum class HfUse { Train, Evaluate };

struct HfModel {
    HfFamily family = HfFamily::Llama;
    std::vector<std::string> overrides;  // "model.d_model=64", ... for apply_override, in order
    std::vector<std::string> notes;      // where NormLab's model differs from transformers' (its init)
};

// The model a config.json describes. Throws InputError naming every key NormLab cannot build (with
// what it does instead, or what to change), or the file's problem. `source` names it in messages.
HfModel hf_model_from_json(const nlohmann::json& config, const std::string& source, HfUse use);
// The same from a file, or from a folder holding config.json.
HfModel read_hf_config(const std::string& path, HfUse use);

// The Hugging Face family a NormLab model belongs to, or InputError listing what keeps it out of both.
HfFamily hf_family_of(const ModelConfig& model);
// config.json for that model (transformers' keys for its family; vocab_size = `vocab`).
nlohmann::json hf_config_json(const ModelConfig& model, int vocab);

}  // namespace normlab
