// Internal to engine/config: the one table of config keys. Each entry knows its dotted name, how to
// read its field as JSON, how to assign it from JSON with type checks, and the values it accepts (its
// strings or its range); parsing, --set, to_json, config_keys() and validate() all go through it.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/config/config.h"
#include "engine/config/key_range.h"
#include "engine/core/number_format.h"

namespace normlab {

enum class ValueKind { Integer, Unsigned, Number, Boolean, String };

struct KeyDescriptor {
    std::string name;                  // "model.d_model"
    ValueKind kind;                    // enums are String with choices
    std::vector<std::string> choices;  // accepted strings; empty means any string
    std::optional<KeyRange> range;     // every Integer, Unsigned and Number key has one
    std::string range_advice;          // what to set, added to the error for a value out of range
    std::function<void(Config&, const nlohmann::json&)> assign;  // throws InputError naming the key
    std::function<nlohmann::json(const Config&)> read;
};

// Every key, in declaration order of the structs.
const std::vector<KeyDescriptor>& key_descriptors();

// The descriptor named `name`, or nullptr.
const KeyDescriptor* find_key(std::string_view name);

// Top-level sections ("model", "train", ...), whose values are JSON objects of keys.
bool is_section(std::string_view name);

// Throws InputError "unknown config key 'x'" with a did-you-mean suggestion and a pointer to --help.
[[noreturn]] void throw_unknown_key(std::string_view name);

}  // namespace normlab
