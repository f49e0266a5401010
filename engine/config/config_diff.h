// What differs between configurations: a config as flat "section.key" -> value text, and the keys
// whose values are not the same in every config. Used wherever runs are compared (normlab-cli runs,
// the window's captions), so every view names the same differences.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "engine/config/config.h"

namespace normlab {

using FlatConfig = std::map<std::string, std::string>;

// Every key of `config` as in --set ("model.layers" -> "6"; strings without quotes); with `only`
// non-empty, just those keys (a run of another writer, whose config gave only them).
FlatConfig flatten_config(const Config& config, const std::vector<std::string>& only = {});
// The keys whose values differ between the configs that have them (in key order): a key a config
// lacks is unknown there, not different; none for fewer than two.
std::vector<std::string> differing_keys(const std::vector<FlatConfig>& configs);

}  // namespace normlab
