// Implements the shared option parsing; every failure is an InputError that says what to write instead.
// Integer flags are range-checked before use, so an oversized value is an error naming the flag, never
// a silently truncated number.
#include "app/cli/cli_options.h"

#include <charconv>
#include <filesystem>
#include <iostream>

#include "engine/config/config_source.h"
#include "engine/core/atomic_file.h"
#include "engine/core/errors.h"
#include "engine/io/hf_weights.h"

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
    } else if (flag == "--hf-config" || flag == "--hf-checkpoint") {
        std::optional<std::string>& path = flag == "--hf-config" ? hf_config : hf_checkpoint;
        if (path) throw InputError(flag + " is given twice; give one");
        if (flag == "--hf-checkpoint" && !takes_hf_checkpoint)
            throw InputError(
                "--hf-checkpoint is taken by train, eval and dump-grads; this command builds "
                "the model from --hf-config alone");
        path = reader.value_of(flag);
    } else {
        return false;
    }
    return true;
}

Config ConfigSources::resolve() const {
    Config config = base_config(config_path, preset);
    if (const std::optional<HfModel> hf = hf_model())
        for (const std::string& assignment : hf->overrides) apply_override(config, assignment);
    for (const std::string& assignment : sets) apply_override(config, assignment);
    if (steps) config.train.steps = static_cast<int>(*steps);
    validate(config);
    return config;
}

std::optional<std::string> ConfigSources::hf_config_path() const {
    if (hf_config) return hf_config;
    if (!hf_checkpoint) return std::nullopt;
    namespace fs = std::filesystem;
    const fs::path checkpoint(*hf_checkpoint);
    const fs::path beside =
        (fs::is_directory(checkpoint) ? checkpoint : checkpoint.parent_path()) / "config.json";
    if (!fs::exists(beside))
        throw InputError("--hf-checkpoint " + *hf_checkpoint +
                         " has no config.json beside it; pass --hf-config FILE");
    return beside.string();
}

std::optional<HfModel> ConfigSources::hf_model() const {
    const std::optional<std::string> path = hf_config_path();
    if (!path) return std::nullopt;
    return read_hf_config(*path, HfUse::Train);
}

void ConfigSources::load_hf_checkpoint(Model& model) const {
    if (!hf_checkpoint) return;
    load_hf_weights(*hf_checkpoint, hf_model()->family, model);
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

std::string config_sources_help(bool with_hf_checkpoint) {
    std::string text =
        "  --config FILE        a JSON config (every key optional; see docs/config.md)\n"
        "  --preset NAME        start from a preset (normlab-cli presets lists them); default: quickstart\n"
        "  --hf-config FILE     the model of a Hugging Face config.json (or its folder): Llama or GPT-2,\n"
        "                       as model keys on top of --config / --preset (docs/huggingface.md)\n";
    if (with_hf_checkpoint)
        text +=
            "  --hf-checkpoint PATH its weights: model.safetensors, a sharded index, or their folder\n"
            "                       (--hf-config defaults to the config.json beside it)\n";
    return text +
           "  --set KEY=VALUE      override any key, e.g. --set model.layers=12 --set "
           "model.norm_placement=post\n"
           "  --steps N            shorthand for --set train.steps=N\n";
}

bool has_flag(int argc, char** argv, const std::string& flag) {
    for (int i = 2; i < argc; ++i)
        if (argv[i] == flag) return true;
    return false;
}

bool asks_for_help(int argc, char** argv) {
    return has_flag(argc, argv, "--help") || has_flag(argc, argv, "-h");
}

std::string result_path(const std::string& out, const std::string& name, bool overwrite) {
    const std::string path = out + "/" + name;
    if (std::filesystem::exists(path) && !overwrite)
        throw InputError("'" + path + "' exists; choose another --out or pass --overwrite");
    return path;
}

void write_result(const std::string& out, const std::string& path, const std::string& text) {
    std::error_code error;
    std::filesystem::create_directories(out, error);
    if (error) throw InputError("cannot create '" + out + "': " + error.message());
    write_file_atomically(path, text);
    std::cout << path << "\n";
}

}  // namespace normlab::cli
