// The ranges of the key table: every numeric key has one, validate() rejects a value just outside it
// and accepts its bounds, the data tasks take their limits from it, and docs/config.md's type and
// range columns say the same as the table.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/config/config.h"
#include "engine/config/config_keys.h"
#include "engine/config/key_range.h"
#include "engine/core/errors.h"
#include "engine/data/task.h"

namespace normlab {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// The message validate() gives for `key` set to `value` (JSON), or "" when it passes.
std::string validate_with(const KeyDescriptor& key, const nlohmann::json& value) {
    Config config;
    key.assign(config, value);
    try {
        validate(config);
    } catch (const InputError& error) {
        return error.what();
    }
    return "";
}

nlohmann::json as_json(const KeyDescriptor& key, double value) {
    return key.kind == ValueKind::Number ? nlohmann::json(value)
                                         : nlohmann::json(static_cast<int64_t>(value));
}

// The nearest value of the key's kind on the other side of `bound` (below it when `below`).
double step_past(const KeyDescriptor& key, double bound, bool below) {
    if (key.kind != ValueKind::Number) return below ? bound - 1 : bound + 1;
    return std::nextafter(bound, below ? -kInfinity : kInfinity);
}

TEST(ConfigRanges, EveryNumericKeyHasOneAndNoOtherKeyDoes) {
    for (const KeyDescriptor& key : key_descriptors()) {
        const bool numeric = key.kind == ValueKind::Integer || key.kind == ValueKind::Unsigned ||
                             key.kind == ValueKind::Number;
        EXPECT_EQ(key.range.has_value(), numeric) << key.name;
        EXPECT_EQ(config_key_range(key.name).has_value(), numeric) << key.name;
    }
    EXPECT_THROW(config_key_range("model.width"), InputError);
}

TEST(ConfigRanges, ValidateRejectsJustOutsideAndAcceptsTheBounds) {
    for (const KeyDescriptor& key : key_descriptors()) {
        if (!key.range || key.kind == ValueKind::Unsigned) continue;  // uint64: its type is its range
        SCOPED_TRACE(key.name);
        const KeyRange& range = *key.range;
        const std::string complaint = key.name + " must be ";
        const double outside_lo = range.lo_included ? step_past(key, range.lo, true) : range.lo;
        EXPECT_THAT(validate_with(key, as_json(key, outside_lo)), StartsWith(complaint));
        const double inside_lo = range.lo_included ? range.lo : step_past(key, range.lo, false);
        EXPECT_THAT(validate_with(key, as_json(key, inside_lo)), ::testing::Not(StartsWith(complaint)));
        if (std::isinf(range.hi)) continue;
        const double outside_hi = range.hi_included ? step_past(key, range.hi, false) : range.hi;
        EXPECT_THAT(validate_with(key, as_json(key, outside_hi)), StartsWith(complaint));
        const double inside_hi = range.hi_included ? range.hi : step_past(key, range.hi, true);
        EXPECT_THAT(validate_with(key, as_json(key, inside_hi)), ::testing::Not(StartsWith(complaint)));
    }
}

TEST(ConfigRanges, MessagesSayWhatTheKeyAccepts) {
    const KeyDescriptor& layers = *find_key("model.encoder_layers");
    EXPECT_EQ(validate_with(layers, -1),
              "model.encoder_layers must be an integer in [0, 10000], got -1: set it to 0 for the "
              "decoder-only model, or to the number of encoder blocks (e.g. 6)");
    EXPECT_EQ(validate_with(*find_key("train.beta2"), 1.0),
              "train.beta2 must be a finite number in [0, 1), got 1");
    EXPECT_EQ(validate_with(*find_key("train.steps"), -1), "train.steps must be an integer >= 0, got -1");
    EXPECT_EQ(validate_with(*find_key("model.norm_eps"), 0.0),
              "model.norm_eps must be a finite number > 0, got 0");
}

TEST(ConfigRanges, DataTasksTakeTheirLimitsFromTheTable) {
    DataConfig data;
    data.task = TaskKind::Copy;
    data.symbols = static_cast<int>(config_key_range("data.symbols")->hi) + 1;
    EXPECT_THROW(make_task(data, 16, 1), InputError);
    data.task = TaskKind::ModAdd;
    data.modulus = static_cast<int>(config_key_range("data.modulus")->hi) + 1;
    try {
        make_task(data, 16, 1);
        ADD_FAILURE() << "a modulus above the table's range was accepted";
    } catch (const InputError& error) {
        EXPECT_THAT(error.what(), HasSubstr("use 2 to 4096"));
    }
}

// docs/config.md's rows: key -> {type, range} cells.
std::map<std::string, std::pair<std::string, std::string>> documented_keys() {
    std::ifstream file(std::string(NORMLAB_TEST_DATA_DIR) + "/../../docs/config.md");
    std::stringstream text;
    text << file.rdbuf();
    std::map<std::string, std::pair<std::string, std::string>> rows;
    const std::regex row(R"(\| `([a-z_.0-9]+)` \| ([a-z0-9]+) \|([^|]*)\|)");
    std::string line;
    while (std::getline(text, line)) {
        std::smatch match;
        if (!std::regex_search(line, match, row) || match.position(0) != 0) continue;
        std::string range = match[3];
        range = range.size() >= 2 ? range.substr(1, range.size() - 2) : "";  // the cell without its spaces
        rows[match[1]] = {match[2], range};
    }
    return rows;
}

// The type and range cells the docs use for `key`: "1..65536" for a bounded integer, else the interval.
std::pair<std::string, std::string> expected_cells(const KeyDescriptor& key) {
    switch (key.kind) {
        case ValueKind::Integer: {
            const KeyRange& r = *key.range;
            const auto whole = [](double v) { return std::to_string(static_cast<long long>(v)); };
            return {"int", std::isinf(r.hi) ? interval_text(r, true) : whole(r.lo) + ".." + whole(r.hi)};
        }
        case ValueKind::Unsigned:
            return {"uint64", "0..2^64-1"};
        case ValueKind::Number:
            return {"number", interval_text(*key.range, false)};
        case ValueKind::Boolean:
            return {"bool", ""};
        case ValueKind::String:
            break;
    }
    std::string choices;
    for (const std::string& choice : key.choices) choices += (choices.empty() ? "`" : ", `") + choice + "`";
    return {"string", choices};
}

TEST(ConfigRanges, DocsTableMatchesTheKeyTable) {
    const auto documented = documented_keys();
    ASSERT_EQ(documented.size(), key_descriptors().size()) << "docs/config.md has a row per key";
    for (const KeyDescriptor& key : key_descriptors()) {
        SCOPED_TRACE(key.name);
        ASSERT_TRUE(documented.count(key.name));
        const auto& [type, range] = documented.at(key.name);
        const auto [expected_type, expected_range] = expected_cells(key);
        EXPECT_EQ(type, expected_type);
        if (expected_range.empty()) continue;  // any string (a path) or a boolean: the docs describe it
        // The docs may add a condition after a comma ("1..65536, divisible by `model.heads`").
        EXPECT_TRUE(range == expected_range || range.starts_with(expected_range + ","))
            << "docs: '" << range << "', key table: '" << expected_range << "'";
    }
}

}  // namespace
}  // namespace normlab
