// Checkpoints: the model's active tensors under the contract names of docs/formats.md#checkpoints
// (PyTorch nn.Linear layout), Adam/SGD moments under "optimizer.m." / "optimizer.v.", and the config and
// progress in the header's __metadata__ (normlab_config, normlab_step, normlab_schedule_origin, and a
// loss scale's state).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/config/config.h"
#include "engine/core/write_fence.h"

namespace normlab {

class Trainer;

// Replaces `path` atomically; `fence` as in write_file_atomically.
void save_checkpoint(Trainer& trainer, const std::string& path, const WriteFence& fence = {});
// The bytes save_checkpoint would write, in memory (a fork point: written out only when forked from),
// downloaded straight into place; `reuse`'s storage is kept when large enough (an evicted fork point's).
std::string checkpoint_bytes(Trainer& trainer, std::string reuse = {});

// The step a checkpoint holds (metadata normlab_step), from its header alone: the file's own word,
// which readers trust over summary.json's checkpoint_step (written after the file, so it can lag).
// Throws InputError for a file that is not a whole NormLab checkpoint.
int64_t checkpoint_step(const std::string& path);

// Reads a checkpoint's config (metadata normlab_config). Throws InputError for a file that is not a
// NormLab checkpoint or is corrupt.
Config checkpoint_config(const std::string& path);

class Model;
struct SafetensorsFile;

// The vocabulary of a loaded checkpoint's model: the rows of its wte.weight. Throws InputError when it
// has no 2-D wte.weight.
int checkpoint_vocab(const SafetensorsFile& file, const std::string& path);

// Copies every active tensor of `model` from a loaded checkpoint, checking presence and shape.
void load_parameters(const SafetensorsFile& file, Model& model, const std::string& path);

// Builds a trainer from a checkpoint: same config (with `overrides` applied), parameters, optimizer
// state and step, so that training continues exactly. Throws InputError naming missing or mismatched
// tensors.
std::unique_ptr<Trainer> load_checkpoint(const std::string& path, const std::vector<std::string>& overrides);

}  // namespace normlab
