// Command-line parsing shared by the normlab-cli subcommands: the config sources (--config, --preset,
// --set) and a small reader that turns a bad flag into an InputError that names it.
#pragma once
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "engine/config/config.h"
#include "engine/io/hf_config.h"

namespace normlab {
class Model;
}

namespace normlab::cli {

class ArgReader {
  public:
    ArgReader(int argc, char** argv, int first);
    bool done() const { return m_index >= m_args.size(); }
    const std::string& peek() const { return m_args[m_index]; }
    std::string take() { return m_args[m_index++]; }
    // The value after a flag; throws InputError "flag needs a value".
    std::string value_of(const std::string& flag);
    // The integer after a flag, in [minimum, maximum] (by default what an int config field holds);
    // anything else, too large included, is an InputError naming the flag and the range.
    int64_t integer_of(const std::string& flag, int64_t minimum,
                       int64_t maximum = std::numeric_limits<int>::max());

  private:
    std::vector<std::string> m_args;
    size_t m_index = 0;
};

// The sources of a run's config, in order: defaults, --config FILE or --preset NAME, --hf-config (the
// model keys of a Hugging Face config.json), --set, --steps. --hf-checkpoint (its weights) is taken
// only by commands that set `takes_hf_checkpoint` and call load_hf_checkpoint.
struct ConfigSources {
    std::optional<std::string> config_path;
    std::optional<std::string> preset;
    std::vector<std::string> sets;
    std::optional<int64_t> steps;
    std::optional<std::string> hf_config;
    std::optional<std::string> hf_checkpoint;
    bool takes_hf_checkpoint = false;

    // Consumes the flag at the reader's position if it is one of ours; returns whether it did.
    bool consume(const std::string& flag, ArgReader& reader);
    // Builds and validates the config. Throws InputError.
    Config resolve() const;
    // The Hugging Face config.json in use: --hf-config, else the config.json beside --hf-checkpoint.
    std::optional<std::string> hf_config_path() const;
    // The model --hf-config describes (nullopt without one). Throws InputError.
    std::optional<HfModel> hf_model() const;
    // Loads --hf-checkpoint's weights into a model built from resolve()'s config (none: nothing).
    void load_hf_checkpoint(Model& model) const;
};

// The help text fragment describing --config/--preset/--set (and --hf-config / --hf-checkpoint).
std::string config_sources_help(bool with_hf_checkpoint = false);
// Every config key, wrapped, for --help.
std::string config_keys_help();

// Whether argv[2..] holds `flag` (a probe's mode: --freeze-norms, --coord-check; or --help / -h).
bool has_flag(int argc, char** argv, const std::string& flag);
bool asks_for_help(int argc, char** argv);
// A probe's result file DIR/NAME, checked before any work: InputError when it exists without --overwrite.
std::string result_path(const std::string& out, const std::string& name, bool overwrite);
// Writes `text` to `path` (atomically) in `out`, made first, and prints the path.
void write_result(const std::string& out, const std::string& path, const std::string& text);

}  // namespace normlab::cli
