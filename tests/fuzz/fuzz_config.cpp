// Feeds a config JSON document, then (after a 0x1e byte) `--set KEY=VALUE` lines applied to it, then
// (after another) `train --change [STEP:]KEY=VALUE` lines checked against it. Beyond no crash: only
// InputError escapes, and every config read or overridden writes a JSON text that reads back to itself.
#include <sstream>

#include "engine/config/config.h"
#include "engine/core/errors.h"
#include "engine/train/live_changes.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using normlab::Config;
using normlab::InputError;

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

// The config's JSON text reads back to a config with the same JSON text.
void check_round_trip(const Config& config) {
    const std::string text = normlab::config_to_json_text(config);
    Config again;
    try {
        again = normlab::config_from_json_text(text, "round trip");
    } catch (const InputError& error) {
        FUZZ_CHECK(false, std::string("the config's own JSON is refused: ") + error.what());
    }
    FUZZ_CHECK(normlab::config_to_json_text(again) == text, "config JSON round trip changed it:\n" + text);
}

bool validates(const Config& config) {
    try {
        normlab::validate(config);
        return true;
    } catch (const InputError&) {
        return false;
    }
}

void apply_overrides(Config& config, const std::string& text) {
    for (const std::string& line : lines_of(text)) {
        try {
            normlab::apply_override(config, line);
        } catch (const InputError&) {
            continue;
        }
        check_round_trip(config);
    }
}

void check_changes(const Config& config, const std::string& text) {
    std::vector<normlab::LiveChange> changes;
    for (const std::string& line : lines_of(text)) {
        try {
            changes.push_back(normlab::parse_live_change(line));
        } catch (const InputError&) {
        }
    }
    try {
        normlab::validate_planned_changes(config, 0, config.train.steps, changes);
    } catch (const InputError&) {
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::vector<std::string> parts = normlab::fuzz::split_parts(normlab::fuzz::as_text(data, size), 3);
    Config config;
    try {
        config = normlab::config_from_json_text(parts[0], "fuzz.json");
        check_round_trip(config);
    } catch (const InputError&) {
        config = Config();
    }
    validates(config);
    if (parts.size() > 1) apply_overrides(config, parts[1]);
    if (parts.size() > 2 && validates(config)) check_changes(config, parts[2]);
    return 0;
}
