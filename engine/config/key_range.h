// The values a numeric config key accepts, as the engine's key table (config_keys.cpp) gives them:
// validate() checks them, the data tasks and the window's controls take their limits from them, and
// the messages and docs/config.md describe them the same way.
#pragma once
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace normlab {

// From lo to hi, each end included or not; an infinite hi means no upper bound (for an integer key,
// none but its type's).
struct KeyRange {
    double lo = 0.0;
    bool lo_included = true;
    double hi = std::numeric_limits<double>::infinity();
    bool hi_included = false;

    // Whether `value` is finite and within the range.
    bool contains(double value) const;
};

// The range as the docs and messages write it: "[0, 1)", "(0, 0.5]", ">= 0", "> 0"; integer bounds
// without a decimal point ("[2, 4096]", ">= 1").
std::string interval_text(const KeyRange& range, bool integer);

// What a value must be, for an error message: "an integer in [1, 65536]", "a finite number >= 0".
std::string range_expectation(const KeyRange& range, bool integer);

// The range of an integer, unsigned or number key; nullopt for a boolean or string key. Throws
// InputError for an unknown key.
std::optional<KeyRange> config_key_range(std::string_view key);

}  // namespace normlab
