// The checkpoints a run folder holds (docs/formats.md#checkpoints): model.safetensors, the newest, and
// with train.checkpoint_keep != 1 the kept ones, model-step-<N>.safetensors. One place names them,
// lists them by the step each holds, keeps the newest K and finds the one to fork or resume from.
#pragma once
#include <cstdint>
#include <map>
#include <string>

namespace normlab {

// "<folder>/model-step-<step>.safetensors".
std::string kept_checkpoint_path(const std::string& folder, int64_t step);

// Step -> file for every checkpoint in `folder`: the kept ones by their names, model.safetensors by the
// step its own header names (a file that is not a readable checkpoint is left out). Never throws.
std::map<int64_t, std::string> checkpoints_in_folder(const std::string& folder);

// Gives the checkpoint just written at `latest` (a file beside `folder`'s kept ones) a kept name as
// well: a hard link (no extra disk), or a copy where the file system has none; replaces an older file
// of that name atomically. Throws ResourceError when neither works (disk full).
void keep_checkpoint(const std::string& latest, const std::string& folder, int64_t step);

// Removes the oldest kept checkpoints so that at most `keep` remain (0: keeps all). Never throws.
void prune_kept_checkpoints(const std::string& folder, int keep);

// The checkpoint of `folder` at `step`; throws InputError naming the steps it has (or saying it has
// none, and how to keep some) when there is none.
std::string checkpoint_at_step(const std::string& folder, int64_t step);

}  // namespace normlab
