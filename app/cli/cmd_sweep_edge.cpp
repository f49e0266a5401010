// `normlab-cli sweep edge`: parses a new edge search (or the folder of one to continue), writes
// S/edge.json and hands over to the driver in sweep_edge.cpp. Every bad input is an InputError
// naming the flag and what to write instead.
#include <cstdlib>
#include <iostream>

#include "app/cli/sweep_edge.h"
#include "app/cli/train_seeds.h"
#include "engine/core/errors.h"
#include "engine/sweep/edge_spec.h"
#include "engine/sweep/sweep_path_policy.h"

namespace normlab::cli {

namespace {
// "KEY=LO:HI" into the spec's key and range.
void parse_edge_axis(const std::string& text, EdgeSpec& spec) {
    const size_t equals = text.find('='), colon = text.find(':', equals == std::string::npos ? 0 : equals);
    const std::string key = equals == std::string::npos || equals == 0 ? "train.lr" : text.substr(0, equals);
    const std::string usage = "--axis " + text + ": write KEY=LO:HI, e.g. --axis " + key + "=1e-3:3e-2";
    if (equals == std::string::npos || equals == 0 || colon == std::string::npos) throw InputError(usage);
    spec.key = text.substr(0, equals);
    const nlohmann::ordered_json low = value_from_text(text.substr(equals + 1, colon - equals - 1));
    const nlohmann::ordered_json high = value_from_text(text.substr(colon + 1));
    if (!low.is_number() || !high.is_number()) throw InputError(usage + " (LO and HI are numbers)");
    spec.bounds.low = low.get<double>();
    spec.bounds.high = high.get<double>();
}

// "5%" or "0.05".
double parse_tolerance(const std::string& text) {
    const bool percent = !text.empty() && text.back() == '%';
    const std::string digits = percent ? text.substr(0, text.size() - 1) : text;
    char* end = nullptr;
    const double value = std::strtod(digits.c_str(), &end);
    if (digits.empty() || end != digits.c_str() + digits.size())
        throw InputError("--tolerance " + text + ": write a ratio such as 5% or 0.05");
    return percent ? value / 100.0 : value;
}

// The base (preset or config, --set, --steps) as a sweep's, from the flags ConfigSources took.
void set_base(const ConfigSources& sources, EdgeSpec& spec) {
    if (sources.config_path && sources.preset)
        throw InputError("give either --config FILE or --preset NAME, not both");
    spec.base.preset = sources.preset;
    spec.base.config_path = sources.config_path;
    for (const std::string& assignment : sources.sets) {
        const size_t equals = assignment.find('=');
        if (equals == std::string::npos || equals == 0)
            throw InputError("--set " + assignment + ": write KEY=VALUE");
        spec.base.set[assignment.substr(0, equals)] = value_from_text(assignment.substr(equals + 1));
    }
    if (sources.steps) spec.base.steps = static_cast<int>(*sources.steps);
    for (const std::string& key : sweep_path_keys())
        if (spec.base.set.contains(key)) spec.paths_from_command_line.push_back(key);
}

struct EdgeCommand {
    EdgeSpec spec;
    std::string out;
    bool has_axis = false, has_criterion = false, json = false;
    SweepRunOptions run;
};

bool take_edge_flag(const std::string& flag, ArgReader& reader, EdgeCommand& command) {
    if (flag == "--axis") {
        parse_edge_axis(reader.value_of(flag), command.spec);
        command.has_axis = true;
    } else if (flag == "--vary") {
        const std::string text = reader.value_of(flag);
        const size_t equals = text.find('=');
        if (equals == std::string::npos || equals == 0)
            throw InputError("--vary " + text +
                             ": write KEY=V1,V2,... (e.g. model.norm_type=layernorm,rmsnorm)");
        command.spec.vary_key = text.substr(0, equals);
        for (const auto& value : values_from_text(text.substr(equals + 1)))
            command.spec.vary_values.push_back(nlohmann::json::parse(value.dump()));
    } else if (flag == "--command") {
        command.spec.base.command = reader.value_of(flag);
    } else if (flag == "--criterion") {
        command.spec.criterion = parse_edge_criterion(reader.value_of(flag));
        command.has_criterion = true;
    } else if (flag == "--seeds") {
        command.spec.seeds = parse_seed_list(reader.value_of(flag));
    } else if (flag == "--tolerance") {
        command.spec.bounds.tolerance = parse_tolerance(reader.value_of(flag));
    } else if (flag == "--out") {
        command.out = reader.value_of(flag);
    } else if (flag == "--json") {
        command.json = true;
    } else {
        return command.run.consume(flag, reader);
    }
    return true;
}
}  // namespace

int run_edge(ArgReader& reader) {
    if (reader.done())
        throw InputError("sweep edge needs --axis KEY=LO:HI, --criterion C and --out S (see --help)");
    EdgeCommand command;
    ConfigSources sources;
    std::string folder;  // `sweep edge S`: continue that search
    if (reader.peek().rfind("--", 0) != 0) folder = reader.take();
    std::string search_flag;  // the first flag that describes a search (not how to run one)
    while (!reader.done()) {
        const std::string flag = reader.take();
        if (!take_edge_flag(flag, reader, command) && !sources.consume(flag, reader))
            throw InputError("unknown option '" + flag + "'; see normlab-cli sweep --help");
        const bool how_to_run =
            flag == "--jobs" || flag == "--threads-per-job" || flag == "--json" || flag == "--quiet";
        if (!how_to_run && search_flag.empty()) search_flag = flag;
    }
    if (!folder.empty()) {
        // A search's seeds, variants, bounds and base are fixed by its edge.json: a flag that would
        // change them is refused rather than silently left out.
        if (!search_flag.empty())
            throw InputError(
                "sweep edge " + folder + ": " + search_flag +
                " cannot change a search already planned; it continues as planned. Give only --jobs, "
                "--threads-per-job, --json, --quiet (or start a new search with --out)");
        if (command.has_axis || command.has_criterion || !command.out.empty())
            throw InputError("sweep edge " + folder +
                             " continues that search as planned; give only --jobs, "
                             "--threads-per-job, --json, --quiet (or start a new search with --out)");
        return continue_edge_search(folder, command.run, command.json);
    }
    if (command.out.empty()) throw InputError("--out S is required: the folder of the edge search");
    if (!command.has_axis) throw InputError("--axis KEY=LO:HI is required, e.g. --axis train.lr=1e-3:3e-2");
    if (!command.has_criterion)
        throw InputError("--criterion is required: diverged, loss_above=X or worse_than_best=F");
    set_base(sources, command.spec);
    if (command.spec.seeds.empty()) command.spec.seeds = {1};
    check_edge_spec(command.spec);
    write_edge_spec(command.out, command.spec);
    return continue_edge_search(command.out, command.run, command.json);
}

}  // namespace normlab::cli
