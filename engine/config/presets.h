// Named experiment presets: a base config plus overrides, each with what it demonstrates.
// The CLI (--preset), the GUI's preset list and the preset tests all read this one table.
#pragma once
#include <string>
#include <vector>

#include "engine/config/config.h"

namespace normlab {

struct Preset {
    std::string name;
    std::string summary;                 // one line: what it shows
    std::vector<std::string> overrides;  // "key=value" on top of the defaults
};

const std::vector<Preset>& presets();
// Throws InputError listing the preset names when `name` is unknown.
Config preset_config(const std::string& name);

}  // namespace normlab
