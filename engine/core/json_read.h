// The one way NormLab parses JSON it did not just write itself (configs, --set values, safetensors
// headers, sweep and experiment files, foreign run folders): nesting deeper than kMaxJsonDepth is
// refused while parsing, so no later copy, dump or walk of the value can recurse off the stack.
#pragma once
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace normlab {

// The deepest nesting of arrays and objects accepted (NormLab's own files need 4).
inline constexpr int kMaxJsonDepth = 64;

// Parses `text`. Throws InputError starting with `source`: "invalid JSON at line L, column C (byte B):
// DETAIL; fix the JSON syntax", or "JSON nested deeper than 64 levels; ...". `comments` allows // and
// /* */ comments (config files).
template <typename Json = nlohmann::json>
Json parse_json(std::string_view text, const std::string& source, bool comments = false);

// The same, but nothing for text that is not JSON or nests too deeply (tolerant readers).
template <typename Json = nlohmann::json>
std::optional<Json> parse_json_or_nothing(std::string_view text);

// A JSON file read with read_small_file (a regular file of at most kMaxJsonFileBytes), then parsed
// with parse_json; errors name `what` and the path.
template <typename Json = nlohmann::json>
Json read_json_file(const std::string& path, const std::string& what, bool comments = false);

// `value` as compact JSON cut to `max_chars` (with "..."), for messages: never a whole foreign value.
std::string json_excerpt(const nlohmann::json& value, size_t max_chars = 80);
std::string json_excerpt(const nlohmann::ordered_json& value, size_t max_chars = 80);

// `text` cut to `max_chars` with "...", for messages that quote what a user or a file gave.
std::string text_excerpt(std::string_view text, size_t max_chars = 80);

}  // namespace normlab
