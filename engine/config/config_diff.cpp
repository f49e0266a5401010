// flatten_config walks config_to_json; differing_keys compares every config against the first.
#include "engine/config/config_diff.h"

#include <nlohmann/json.hpp>

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

FlatConfig flatten_config(const Config& config) {
    FlatConfig out;
    flatten(config_to_json(config), "", out);
    return out;
}

std::vector<std::string> differing_keys(const std::vector<FlatConfig>& configs) {
    std::vector<std::string> keys;
    if (configs.size() < 2) return keys;
    for (const auto& [key, value] : configs.front())
        for (const FlatConfig& other : configs)
            if (const auto found = other.find(key); found == other.end() || found->second != value) {
                keys.push_back(key);
                break;
            }
    return keys;
}

}  // namespace normlab
