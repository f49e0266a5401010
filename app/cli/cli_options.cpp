// Implements the shared option parsing; every failure is an InputError that says what to write instead.
// Integer flags are range-checked before use, so an oversized value is an error naming the flag, never
// a silently truncated number.
#include "app/cli/cli_options.h"

#include <charconv>

#include "engine/config/presets.h"
#include "engine/core/errors.h"

namespace normlab::cli {

ArgReader::ArgReader(int argc, char** argv, int first) {
    for (int i = first; i < argc; ++i) m_args.emplace_back(argv[i]);
}

std::string ArgReader::value_of(const std::string& flag) {
    if (done() || (peek().rfind("--", 0) == 0 && peek().size() > 2)) {
        throw InputError(flag + " needs a value");
    }
    return take();
}

int64_t ArgReader::integer_of(const std::string& flag, int64_t minimum, int64_t maximum) {
    const std::string text = value_of(flag);
    int64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error == std::errc() && end == text.data() + text.size() && value >= minimum && value <= maximum)
        return value;
    throw InputError(flag + " needs an integer in [" + std::to_string(minimum) + ", " +
                     std::to_string(maximum) + "], got '" + text + "'");
}

bool ConfigSources::consume(const std::string& flag, ArgReader& reader) {
    if ((flag == "--config" && config_path) || (flag == "--preset" && preset))
        throw InputError(flag + " is given twice; give one (the second would silently win)");
    if (flag == "--config") {
        config_path = reader.value_of(flag);
    } else if (flag == "--preset") {
        preset = reader.value_of(flag);
    } else if (flag == "--set") {
        sets.push_back(reader.value_of(flag));
    } else if (flag == "--steps") {
        steps = reader.integer_of(flag, 0);
    } else {
        return false;
    }
    return true;
}

Config ConfigSources::resolve() const {
    if (config_path && preset) throw InputError("give either --config FILE or --preset NAME, not both");
    Config config = config_path ? config_from_file(*config_path)
                    : preset    ? preset_config(*preset)
                                : preset_config("quickstart");
    for (const std::string& assignment : sets) apply_override(config, assignment);
    if (steps) config.train.steps = static_cast<int>(*steps);
    validate(config);
    return config;
}

std::string config_keys_help() {
    std::string text = "config keys (docs/config.md explains each):\n ";
    size_t column = 1;
    for (const std::string& key : config_keys()) {
        if (column + key.size() + 1 > 100) {
            text += "\n ";
            column = 1;
        }
        text += " " + key;
        column += key.size() + 1;
    }
    return text + "\n";
}

std::string config_sources_help() {
    return "  --config FILE        a JSON config (every key optional; see docs/config.md)\n"
           "  --preset NAME        start from a preset (normlab-cli presets lists them); default: "
           "quickstart\n"
           "  --set KEY=VALUE      override any key, e.g. --set model.layers=12 --set "
           "model.norm_placement=post\n"
           "  --steps N            shorthand for --set train.steps=N\n";
}

}  // namespace normlab::cli
