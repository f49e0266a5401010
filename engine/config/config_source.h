// Where a run's config comes from, the one resolver both front ends and sweeps use: a config file or a
// preset (never both; neither: the default preset), then `--set`-style assignments, then validation.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "engine/config/config.h"

namespace normlab {

// The preset a run is when nothing names its config (normlab-cli train, the window at start).
inline constexpr const char* kDefaultPreset = "quickstart";

// The config a file or a preset gives, before any assignment; the default preset for neither. Throws
// InputError for both, an unknown preset or a file that cannot be read.
Config base_config(const std::optional<std::string>& config_path, const std::optional<std::string>& preset);

// base_config with each "section.key=value" of `assignments` applied in order, then validated.
Config resolve_config(const std::optional<std::string>& config_path, const std::optional<std::string>& preset,
                      const std::vector<std::string>& assignments);

}  // namespace normlab
