// Hugging Face checkpoints as NormLab tensors and back: one table per family says which Hugging Face
// tensors make each NormLab tensor (their rows in order; GPT-2's Conv1D weights transposed), and both
// directions walk it. docs/huggingface.md shows the table.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/io/hf_config.h"
#include "engine/io/safetensors.h"

namespace normlab {

class Model;

// One Hugging Face tensor inside a NormLab tensor: its name, how many of the NormLab tensor's rows it
// holds, and whether it is stored transposed ([in, out], GPT-2's Conv1D).
struct HfPart {
    std::string name;
    int64_t rows = 0;
    bool transposed = false;
};

// The Hugging Face tensors that make the NormLab tensor `name` of shape `shape`, rows in order; empty
// when it has none (a tensor the family's models do not have).
std::vector<HfPart> hf_parts(HfFamily family, const ModelConfig& model, const std::string& name,
                             const std::vector<int64_t>& shape);

// A Hugging Face checkpoint: a .safetensors file, a model.safetensors.index.json with its shards, or a
// folder holding one of them. Throws InputError naming what is missing or broken.
SafetensorsFile read_hf_checkpoint(const std::string& path);

// Every active tensor of `model` under its NormLab name, made from the Hugging Face tensors (for
// load_parameters). Learned positions take the first model.seq_len rows of a longer table. Throws
// InputError naming each missing tensor, wrong shape, and tensor left over (`source` names the file).
SafetensorsFile normlab_tensors_from_hf(const SafetensorsFile& hf, HfFamily family, Model& model,
                                        const std::string& source);

// The model's parameters (or, with `gradient`, their gradients) under Hugging Face names, as
// save_pretrained writes them (a tied head is not written twice).
std::map<std::string, LoadedTensor> hf_tensors_of(Model& model, HfFamily family, bool gradient);

// Reads the config and the checkpoint, and loads the weights into `model` (built from that config).
void load_hf_weights(const std::string& checkpoint, HfFamily family, Model& model);

}  // namespace normlab
