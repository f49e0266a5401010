// Edge search specs (edge_spec.h): the searches they expand to, each search's sweep, their checks
// and S/edge.json. The base is read and written as a sweep file's "base", by the sweep code itself.
#include "engine/sweep/edge_spec.h"

#include <cmath>
#include <filesystem>
#include <set>

#include "engine/core/atomic_file.h"
#include "engine/core/errors.h"
#include "engine/core/json_read.h"
#include "engine/core/small_file.h"
#include "engine/sweep/sweep_command.h"
#include "engine/sweep/sweep_path_policy.h"

namespace normlab {

namespace {
namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

// The base config's value of a dotted key ("train.lr"), or null when there is no such key.
nlohmann::json config_value(const Config& config, const std::string& key) {
    nlohmann::json node = config_to_json(config);
    size_t start = 0;
    while (start <= key.size()) {
        const size_t dot = std::min(key.find('.', start), key.size());
        const std::string part = key.substr(start, dot - start);
        if (!node.is_object() || !node.contains(part)) return nullptr;
        node = nlohmann::json(node[part]);
        start = dot + 1;
    }
    return node;
}

void check_range(const EdgeSpec& spec) {
    const EdgeBounds& bounds = spec.bounds;
    const std::string axis = "--axis " + spec.key + "=LO:HI";
    if (!std::isfinite(bounds.low) || !std::isfinite(bounds.high) || bounds.low <= 0.0)
        throw InputError(axis + ": LO and HI must be positive numbers (the search bisects in log space)");
    if (bounds.low >= bounds.high)
        throw InputError(axis + ": LO must be below HI (LO trains, HI fails), e.g. " + spec.key +
                         "=1e-3:3e-2");
    if (!(bounds.tolerance >= kMinEdgeTolerance && bounds.tolerance <= 1.0))
        throw InputError("--tolerance: give a ratio from 0.5% to 100% (e.g. 5% or 0.05)");
    if (spec.seeds.empty()) throw InputError("an edge search needs at least one seed (--seeds N)");
}

void check_keys_apart(const EdgeSpec& spec) {
    if (spec.base.set.contains(spec.key))
        throw InputError("--set " + spec.key + " and --axis " + spec.key + " both give " + spec.key +
                         "; drop the --set");
    if (spec.vary_key.empty()) return;
    if (spec.vary_key == spec.key)
        throw InputError("--vary " + spec.vary_key + " is the key searched; vary another key");
    if (spec.base.set.contains(spec.vary_key))
        throw InputError("--set " + spec.vary_key + " and --vary " + spec.vary_key + " both give " +
                         spec.vary_key + "; drop the --set");
    if (spec.vary_values.empty()) throw InputError("--vary " + spec.vary_key + "=V1,V2,... needs values");
    std::set<std::string> folders;
    for (const std::string& label : edge_variant_labels(spec))
        if (!folders.insert(file_name_slug(label)).second)
            throw InputError("--vary " + spec.vary_key + ": the value " + label +
                             " is listed twice (or names the same folder as another); list each once");
}

// A search over the user's command bisects one of its own values (user.lr) and varies another; the
// command takes no NormLab base (its template is checked with the axes when each search is planned).
void check_command_keys(const EdgeSpec& spec) {
    if (!spec.base.set.empty() || spec.base.steps || spec.base.preset || spec.base.config_path)
        throw InputError(
            "--command runs your own script, which sets its own training: give its settings in the "
            "command (not --preset, --config, --set or --steps)");
    if (!is_user_key(spec.key))
        throw InputError("--axis " + spec.key +
                         ": a search over your command bisects one of its own values, "
                         "named user.NAME and written {user.NAME} in the command (e.g. --axis "
                         "user.lr=1e-4:1e-1)");
    if (!spec.vary_key.empty() && !is_user_key(spec.vary_key))
        throw InputError("--vary " + spec.vary_key +
                         ": a search over your command varies one of its own values, named user.NAME "
                         "and written {user.NAME} in the command (e.g. --vary user.norm=layernorm,rmsnorm)");
}

// The searched key must hold a real number in the base config (train.lr, not train.steps).
void check_real_key(const EdgeSpec& spec, const SweepPlan& plan) {
    const nlohmann::json value = config_value(plan.base, spec.key);
    if (!value.is_number_float())
        throw InputError("--axis " + spec.key +
                         ": an edge search bisects a real-valued config key such as "
                         "train.lr; " +
                         spec.key + (value.is_null() ? " is not a config key" : " holds " + value.dump()));
}
}  // namespace

std::vector<std::string> edge_variant_labels(const EdgeSpec& spec) {
    if (spec.vary_key.empty()) return {"base"};
    std::vector<std::string> labels;
    for (const nlohmann::json& value : spec.vary_values) labels.push_back(override_text(value));
    return labels;
}

std::vector<EdgeSearchRef> edge_searches(const EdgeSpec& spec) {
    std::vector<EdgeSearchRef> searches;
    const std::vector<std::string> labels = edge_variant_labels(spec);
    for (size_t v = 0; v < labels.size(); ++v)
        for (uint64_t seed : spec.seeds) {
            const std::string name =
                (spec.vary_key.empty() ? "" : file_name_slug(labels[v]) + "-") + "s" + std::to_string(seed);
            searches.push_back({v, labels[v], seed, "searches/" + name});
        }
    return searches;
}

SweepSpec edge_sweep_spec(const EdgeSpec& spec, const EdgeSearchRef& search,
                          const std::vector<double>& values) {
    SweepSpec sweep = spec.base;
    std::vector<nlohmann::json> axis_values(values.begin(), values.end());
    sweep.axes = {SweepAxis{{spec.key}, {axis_values}, {}}};
    if (!spec.vary_key.empty()) {
        const nlohmann::json& value = spec.vary_values.at(search.variant);
        if (spec.base.command) {  // the command takes no base: the variant's value is a one-value axis
            sweep.axes.push_back(SweepAxis{{spec.vary_key}, {{value}}, {}});
        } else {
            sweep.set[spec.vary_key] = value;
        }
    }
    sweep.seeds = {search.seed};
    return sweep;
}

SweepPlan plan_edge_sweep(const EdgeSpec& spec, const EdgeSearchRef& search,
                          const std::vector<double>& values) {
    SweepPlan plan = plan_sweep(edge_sweep_spec(spec, search, values));
    plan.paths_from_command_line = spec.paths_from_command_line;
    check_sweep_paths(plan, "sweep edge");
    return plan;
}

void check_edge_spec(const EdgeSpec& spec) {
    check_range(spec);
    check_keys_apart(spec);
    if (spec.base.command) check_command_keys(spec);
    for (const EdgeSearchRef& search : edge_searches(spec)) {
        if (search.seed != spec.seeds.front()) continue;  // a seed changes no config's validity
        if (spec.base.command) {
            check_command_template(*spec.base.command, edge_sweep_spec(spec, search, {1.0}).axes);
        } else {
            check_real_key(spec, plan_sweep(edge_sweep_spec(spec, search, {})));  // the base alone
        }
        plan_edge_sweep(spec, search, {spec.bounds.low, spec.bounds.high});
    }
}

ojson edge_spec_to_json(const EdgeSpec& spec) {
    ojson json = {{"format", "normlab-edge"}, {"version", 1}};
    if (spec.base.command) {
        json["command"] = *spec.base.command;
    } else {
        json["base"] = sweep_spec_to_json(spec.base)["base"];
        if (spec.base.steps) json["steps"] = *spec.base.steps;
    }
    json["axis"] = {{"key", spec.key}, {"low", spec.bounds.low}, {"high", spec.bounds.high}};
    if (!spec.vary_key.empty()) json["vary"] = {{"key", spec.vary_key}, {"values", spec.vary_values}};
    json["seeds"] = spec.seeds;
    json["criterion"] = to_string(spec.criterion);
    json["tolerance"] = spec.bounds.tolerance;
    if (!spec.paths_from_command_line.empty()) json["paths_from_command_line"] = spec.paths_from_command_line;
    return json;
}

EdgeSpec edge_spec_from_json(const ojson& json, const std::string& source) {
    EdgeSpec spec;
    try {
        if (!json.is_object() || json.value("format", "") != "normlab-edge" || json.value("version", 0) != 1)
            throw InputError(source +
                             " is not a version 1 NormLab edge search (made by normlab-cli sweep edge)");
        if (json.contains("command")) {
            if (!json["command"].is_string())
                throw InputError(source + " is damaged: its command is not text");
            spec.base.command = json["command"].get<std::string>();
        } else {
            ojson as_sweep = {{"base", json.at("base")}, {"axes", {{"train.lr", {1}}}}};
            if (json.contains("steps")) as_sweep["steps"] = json["steps"];
            spec.base = sweep_spec_from_json(as_sweep);
            spec.base.axes.clear();
        }
        spec.key = json.at("axis").at("key").get<std::string>();
        spec.bounds = {json.at("axis").at("low").get<double>(), json.at("axis").at("high").get<double>(),
                       json.at("tolerance").get<double>()};
        if (json.contains("vary")) {
            spec.vary_key = json["vary"].at("key").get<std::string>();
            for (const ojson& value : json["vary"].at("values"))
                spec.vary_values.push_back(nlohmann::json::parse(value.dump()));
        }
        spec.seeds = json.at("seeds").get<std::vector<uint64_t>>();
        spec.criterion = parse_edge_criterion(json.at("criterion").get<std::string>());
        if (json.contains("paths_from_command_line"))
            spec.paths_from_command_line = json["paths_from_command_line"].get<std::vector<std::string>>();
    } catch (const nlohmann::json::exception& error) {
        throw InputError(source + " is damaged: " + error.what());
    }
    check_edge_spec(spec);
    return spec;
}

void write_edge_spec(const std::string& dir, const EdgeSpec& spec) {
    const fs::path file = fs::path(dir) / "edge.json";
    const std::string text = edge_spec_to_json(spec).dump(2) + "\n";
    std::error_code error;
    if (fs::exists(file, error)) {
        if (read_small_file(file.string(), kMaxJsonFileBytes, "edge file") == text)
            return;  // the same search
        throw InputError(dir +
                         " already holds a different edge search (edge.json); continue it with "
                         "normlab-cli sweep edge " +
                         dir + ", or give a new --out folder");
    }
    if (fs::exists(fs::path(dir) / "sweep.json", error))
        throw InputError(dir + " is a sweep folder (sweep.json); give an edge search a folder of its own");
    for (const char* run_file : {"summary.json", "metrics.jsonl"})
        if (fs::exists(fs::path(dir) / run_file, error))
            throw InputError(dir + " holds a run (" + run_file +
                             "); give an edge search a folder of its own (--out)");
    fs::create_directories(dir, error);
    if (error) throw InputError("cannot create " + dir + ": " + error.message());
    write_file_atomically(file.string(), text);
}

std::optional<EdgeSpec> load_edge_spec(const std::string& dir) {
    const fs::path file = fs::path(dir) / "edge.json";
    const std::optional<std::string> text =
        read_small_file_if_present(file.string(), kMaxJsonFileBytes, "edge file");
    if (!text) return std::nullopt;
    return edge_spec_from_json(parse_json<ojson>(*text, file.string()), file.string());
}

}  // namespace normlab
