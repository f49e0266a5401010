// base_config and resolve_config: presets.h for a name, config_from_file for a path.
#include "engine/config/config_source.h"

#include "engine/config/presets.h"
#include "engine/core/errors.h"

namespace normlab {

Config base_config(const std::optional<std::string>& config_path, const std::optional<std::string>& preset) {
    if (config_path && preset) throw InputError("give either --config FILE or --preset NAME, not both");
    if (config_path) return config_from_file(*config_path);
    return preset_config(preset.value_or(kDefaultPreset));
}

Config resolve_config(const std::optional<std::string>& config_path, const std::optional<std::string>& preset,
                      const std::vector<std::string>& assignments) {
    Config config = base_config(config_path, preset);
    for (const std::string& assignment : assignments) apply_override(config, assignment);
    validate(config);
    return config;
}

}  // namespace normlab
