// Paths in a sweep's configs (data.text_path, a tokenizer file). sweep.json may come from anyone who shares
// the folder, so a path in it is trusted only when the planning user gave it on the command line (or in the
// window), which sweep.json records as "paths_from_command_line"; any other path must be relative,
// stay inside the sweep folder (no "..") and is read from there.
#pragma once
#include <string>
#include <vector>

#include "engine/config/config.h"

namespace normlab {

struct SweepPlan;

// The config keys that name files (data.text_path, and data.tokenizer in its path form).
const std::vector<std::string>& sweep_path_keys();

// Throws InputError, naming `source`, the key and what to do, when a point's config (or the base) holds
// an untrusted path that is absolute or leaves the folder, or the plan trusts a key that is no path.
void check_sweep_paths(const SweepPlan& plan, const std::string& source);

// A point's config as a worker trains it: untrusted relative paths made relative to `sweep_dir`, and
// refused (InputError) when they resolve outside it through a link; a trusted path only when sweep.json
// belongs to this user and no one else can write it.
void place_sweep_paths(Config& config, const SweepPlan& plan, const std::string& sweep_dir);

}  // namespace normlab
