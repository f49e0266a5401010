// flatten_config walks config_to_json; differing_keys collects each key's values over the configs.
#include "engine/config/config_diff.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

namespace normlab {

namespace {
void flatten(const nlohmann::json& json, const std::string& prefix, FlatConfig& out) {
    if (json.is_object()) {
        for (const auto& [key, value] : json.items())
            flatten(value, prefix.empty() ? key : prefix + "." + key, out);
        return;
    }
    out[prefix] = json.is_string() ? json.get<std::string>() : json.dump();
}
}  // namespace

FlatConfig flatten_config(const Config& config, const std::vector<std::string>& only) {
    FlatConfig out;
    flatten(config_to_json(config), "", out);
    if (!only.empty())
        std::erase_if(out, [&](const auto& entry) {
            return std::find(only.begin(), only.end(), entry.first) == only.end();
        });
    return out;
}

std::vector<std::string> differing_keys(const std::vector<FlatConfig>& configs) {
    std::map<std::string, std::set<std::string>> values;  // key -> the values of the configs that have it
    for (const FlatConfig& config : configs)
        for (const auto& [key, value] : config) values[key].insert(value);
    std::vector<std::string> keys;
    for (const auto& [key, seen] : values)
        if (seen.size() > 1) keys.push_back(key);
    return keys;
}

}  // namespace normlab
