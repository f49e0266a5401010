// Sweep specs: parsing with messages that say what to change, grid expansion, point ids (readable
// values plus an FNV-1a hash of the canonical overrides), and the plan's JSON form.
#include "engine/sweep/sweep_plan.h"
#include "engine/config/config_source.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <set>

#include "engine/core/errors.h"
#include "engine/core/json_read.h"
#include "engine/sweep/sweep_command.h"
#include "engine/sweep/sweep_path_policy.h"

namespace normlab {

namespace {
using ojson = nlohmann::ordered_json;

uint64_t fnv1a(const std::string& text) {
    uint64_t hash = 1469598103934665603ull;
    for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
    return hash;
}

std::string point_id(const ojson& set, uint64_t seed) {
    std::vector<std::string> canonical;
    std::string readable;
    for (const auto& [key, value] : set.items()) {
        canonical.push_back(key + "=" + override_text(value));
        if (!readable.empty()) readable += '_';
        readable += file_name_slug(override_text(value));
    }
    std::sort(canonical.begin(), canonical.end());
    std::string joined;
    for (const std::string& entry : canonical) joined += entry + "\n";
    joined += "seed=" + std::to_string(seed);
    if (readable.size() > 48) readable.resize(48);
    char hash[9];
    std::snprintf(hash, sizeof hash, "%08x", static_cast<unsigned>(fnv1a(joined) & 0xffffffffu));
    return (readable.empty() ? std::string() : readable + "_") + "s" + std::to_string(seed) + "-" + hash;
}

std::vector<nlohmann::json> value_list(const ojson& json, const std::string& key) {
    if (!json.is_array() || json.empty())
        throw InputError("sweep axis \"" + key + "\" needs a non-empty list of values, e.g. [1e-3, 3e-3]");
    std::vector<nlohmann::json> values;
    for (const ojson& value : json) {
        if (value.is_object() || value.is_array() || value.is_null())
            throw InputError("sweep axis \"" + key + "\": each value is a number, a word or true/false");
        values.push_back(nlohmann::json::parse(value.dump()));
    }
    return values;
}

SweepAxis linked_axis(const ojson& group) {
    if (!group.is_object() || group.empty())
        throw InputError("each entry of \"linked\" is an object of keys to lists of the same length");
    SweepAxis axis;
    for (const auto& [key, values] : group.items()) {
        if (key == "label") {
            for (const ojson& label : values)
                axis.labels.push_back(label.is_string() ? label.get<std::string>() : label.dump());
            continue;
        }
        axis.keys.push_back(key);
        axis.values.push_back(value_list(values, key));
    }
    if (axis.keys.empty())
        throw InputError("each entry of \"linked\" needs at least one key besides \"label\"");
    for (const auto& values : axis.values)
        if (values.size() != axis.size())
            throw InputError("linked axis " + axis.name() +
                             ": every key needs as many values as the first (" + std::to_string(axis.size()) +
                             ")");
    if (!axis.labels.empty() && axis.labels.size() != axis.size())
        throw InputError("linked axis " + axis.name() + ": \"label\" needs one name per value");
    return axis;
}

void check_keys(const ojson& json, std::initializer_list<const char*> allowed, const std::string& where) {
    for (const auto& item : json.items()) {
        const std::string& key = item.key();  // not a structured binding: clang 14 cannot capture those
        if (std::find_if(allowed.begin(), allowed.end(), [&key](const char* name) { return key == name; }) ==
            allowed.end()) {
            std::string names;
            for (const char* name : allowed) names += std::string(names.empty() ? "" : ", ") + name;
            throw InputError("unknown key \"" + key + "\" in " + where + "; the keys are " + names);
        }
    }
}

// The text `json[key]` holds, or an InputError saying what `what` is.
std::string text_of(const ojson& json, const char* key, const std::string& what) {
    if (!json[key].is_string()) throw InputError(what + ", got " + json[key].dump());
    return json[key].get<std::string>();
}

// A key in two axes would take two values in one point: refused.
void check_distinct_keys(const std::vector<SweepAxis>& axes) {
    std::vector<std::string> seen;
    for (const SweepAxis& axis : axes)
        for (const std::string& key : axis.keys) {
            if (std::find(seen.begin(), seen.end(), key) != seen.end())
                throw InputError("sweep key \"" + key +
                                 "\" is in two axes; give each key's values in one axis");
            seen.push_back(key);
        }
}

// The number of points, or an InputError past kMaxSweepPoints (also before size_t could overflow).
size_t grid_size(const std::vector<SweepAxis>& axes, size_t seeds) {
    size_t points = seeds;
    for (const SweepAxis& axis : axes) {
        if (axis.size() > 0 && points > kMaxSweepPoints / axis.size())
            throw InputError("the sweep has more than " + std::to_string(kMaxSweepPoints) +
                             " points; split it into several sweeps or give fewer values or seeds");
        points *= axis.size();
    }
    return points;
}

// Every point of the grid (axes in order, the first varying slowest, seeds innermost), not yet
// validated; an InputError when two points are the same run (a value or a seed listed twice).
std::vector<SweepPoint> grid_points(const SweepSpec& spec, uint64_t base_seed) {
    const std::vector<uint64_t> seeds = spec.seeds.empty() ? std::vector<uint64_t>{base_seed} : spec.seeds;
    const size_t combinations = grid_size(spec.axes, 1);
    grid_size(spec.axes, seeds.size());
    std::vector<SweepPoint> points;
    std::set<std::string> ids;
    for (size_t combination = 0; combination < combinations; ++combination) {
        // Mixed-radix digits of `combination`, the last axis varying fastest.
        std::vector<size_t> at(spec.axes.size());
        for (size_t rest = combination, a = spec.axes.size(); a-- > 0;) {
            at[a] = rest % spec.axes[a].size();
            rest /= spec.axes[a].size();
        }
        for (uint64_t seed : seeds) {
            SweepPoint point;
            point.index = static_cast<int>(points.size());
            point.seed = seed;
            point.set = ojson::object();
            for (size_t a = 0; a < spec.axes.size(); ++a) {
                const SweepAxis& axis = spec.axes[a];
                for (size_t k = 0; k < axis.keys.size(); ++k) point.set[axis.keys[k]] = axis.values[k][at[a]];
                point.labels.push_back(axis.labels.empty() ? override_text(axis.values[0][at[a]])
                                                           : axis.labels[at[a]]);
            }
            point.id = point_id(point.set, seed);
            if (!ids.insert(point.id).second)
                throw InputError("the sweep has the point " + point.id +
                                 " twice (a value or a seed is listed twice); list each once");
            points.push_back(std::move(point));
        }
    }
    return points;
}

// A point's config must be a valid run, so that a bad value fails the plan rather than a worker.
void check_point(const SweepPlan& plan, const SweepPoint& point) {
    try {
        validate(point_config(plan, point));
    } catch (const InputError& error) {
        std::string values;
        for (const auto& [key, value] : point.set.items())
            values += (values.empty() ? "" : ", ") + key + "=" + override_text(value);
        throw InputError("the sweep point " + values + " (seed " + std::to_string(point.seed) +
                         ") is not a valid run: " + error.what());
    }
}

// The points sweep.json lists must be exactly the grid of its spec (what readers index by axis).
void check_points_match(const SweepPlan& plan, const std::string& source) {
    const std::vector<SweepPoint> grid = grid_points(plan.spec, plan.base.train.seed);
    bool same = grid.size() == plan.points.size();
    for (size_t i = 0; same && i < grid.size(); ++i) {
        const SweepPoint &expected = grid[i], &point = plan.points[i];
        same = point.index == expected.index && point.id == expected.id && point.seed == expected.seed &&
               point.labels == expected.labels && point.set.dump() == expected.set.dump();
    }
    if (!same)
        throw InputError(source +
                         " is damaged: its points are not the grid of its spec; plan the sweep again");
}
// "command": a sweep over the user's own command takes user.NAME axes and no base or steps (the command
// sets its own training); any other sweep takes no user.NAME axis.
void read_command(const ojson& json, SweepSpec& spec) {
    if (!json.contains("command")) {
        for (const SweepAxis& axis : spec.axes)
            for (const std::string& key : axis.keys)
                if (is_user_key(key))
                    throw InputError("axis " + key +
                                     " names a value of your own command: give the sweep a "
                                     "\"command\" with {" +
                                     key + "} in it (sweep plan --command '...')");
        return;
    }
    if (!json["command"].is_string() ||
        json["command"].get<std::string>().find_first_not_of(" \t") == std::string::npos)
        throw InputError(
            "\"command\" is the command line to run per point, e.g. \"python train.py --lr "
            "{user.lr} --seed {seed}\"");
    for (const char* key : {"base", "steps"})
        if (json.contains(key))
            throw InputError(std::string("a sweep with a \"command\" (--command) takes no \"") + key +
                             "\" (" + (std::string(key) == "base" ? "--preset, --config, --set" : "--steps") +
                             "): the command sets its own training; put the value in the command");
    spec.command = json["command"].get<std::string>();
    check_command_template(*spec.command, spec.axes);
}
}  // namespace

std::string file_name_slug(const std::string& text) {
    std::string out;
    for (char c : text)
        out += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '+' || c == '-') ? c : '_';
    return out;
}

std::string SweepAxis::name() const {
    std::string joined;
    for (const std::string& key : keys) joined += (joined.empty() ? "" : "+") + key;
    return joined;
}

std::string override_text(const nlohmann::json& value) {
    return value.is_string() ? value.get<std::string>() : value.dump();
}

ojson value_from_text(const std::string& text) {
    const std::optional<ojson> parsed = parse_json_or_nothing<ojson>(text);
    return !parsed || parsed->is_structured() ? ojson(text) : *parsed;
}

ojson values_from_text(const std::string& list) {
    ojson values = ojson::array();
    size_t start = 0;
    while (start <= list.size()) {
        const size_t comma = std::min(list.find(',', start), list.size());
        std::string item = list.substr(start, comma - start);
        item.erase(0, item.find_first_not_of(" \t"));
        item.erase(item.find_last_not_of(" \t") + 1);
        if (!item.empty()) values.push_back(value_from_text(item));
        start = comma + 1;
    }
    return values;
}

SweepSpec sweep_spec_from_json(const ojson& json) {
    if (!json.is_object()) throw InputError("a sweep file is a JSON object with \"base\" and \"axes\"");
    check_keys(json, {"base", "axes", "linked", "seeds", "steps", "command"}, "the sweep file");
    SweepSpec spec;
    const ojson base = json.value("base", ojson::object());
    if (!base.is_object())
        throw InputError("\"base\" is an object with \"preset\" or \"config\" and \"set\"");
    check_keys(base, {"preset", "config", "set"}, "\"base\"");
    if (base.contains("preset"))
        spec.preset = text_of(base, "preset", "\"base\".\"preset\" is a preset's name");
    if (base.contains("config"))
        spec.config_path = text_of(base, "config", "\"base\".\"config\" is a file's path");
    if (spec.preset && spec.config_path)
        throw InputError("\"base\" takes \"preset\" or \"config\", not both");
    if (base.contains("set")) {
        if (!base["set"].is_object()) throw InputError("\"base\".\"set\" is an object of key: value");
        spec.set = base["set"];
    }
    const ojson axes = json.value("axes", ojson::object()), linked = json.value("linked", ojson::array());
    if (!axes.is_object()) throw InputError("\"axes\" is an object of key: [values]");
    if (!linked.is_array()) throw InputError("\"linked\" is a list of {key: [values], ...} objects");
    for (const auto& [key, values] : axes.items())
        spec.axes.push_back(SweepAxis{{key}, {value_list(values, key)}, {}});
    for (const ojson& group : linked) spec.axes.push_back(linked_axis(group));
    if (spec.axes.empty()) throw InputError("a sweep needs at least one axis in \"axes\" or \"linked\"");
    check_distinct_keys(spec.axes);
    if (json.contains("seeds")) {
        const ojson& seeds = json["seeds"];
        if (seeds.is_number_integer() && seeds.get<int64_t>() >= 1 && seeds.get<int64_t>() <= 1000) {
            for (uint64_t s = 1; s <= seeds.get<uint64_t>(); ++s) spec.seeds.push_back(s);
        } else if (seeds.is_array() && !seeds.empty()) {
            for (const ojson& seed : seeds) {
                if (!seed.is_number_unsigned()) throw InputError("\"seeds\" lists whole numbers >= 0");
                spec.seeds.push_back(seed.get<uint64_t>());
            }
        } else {
            throw InputError("\"seeds\" is a count from 1 to 1000 (seeds 1..N) or a list of seeds");
        }
    }
    if (json.contains("steps")) {
        if (!json["steps"].is_number_integer() || json["steps"] < 1 || json["steps"] > INT_MAX)
            throw InputError("\"steps\" is a whole number from 1 to " + std::to_string(INT_MAX));
        spec.steps = json["steps"].get<int>();
    }
    read_command(json, spec);
    return spec;
}

ojson sweep_spec_to_json(const SweepSpec& spec) {
    ojson base = ojson::object();
    if (spec.preset) base["preset"] = *spec.preset;
    if (spec.config_path) base["config"] = *spec.config_path;
    if (!spec.set.empty()) base["set"] = spec.set;
    ojson out = {{"base", base}};
    ojson axes = ojson::object(), linked = ojson::array();
    for (const SweepAxis& axis : spec.axes) {
        if (axis.keys.size() == 1 && axis.labels.empty() && linked.empty()) {  // else it would move first
            axes[axis.keys[0]] = axis.values[0];
            continue;
        }
        ojson group = ojson::object();
        for (size_t k = 0; k < axis.keys.size(); ++k) group[axis.keys[k]] = axis.values[k];
        if (!axis.labels.empty()) group["label"] = axis.labels;
        linked.push_back(group);
    }
    out["axes"] = axes;
    if (!linked.empty()) out["linked"] = linked;
    if (!spec.seeds.empty()) out["seeds"] = spec.seeds;
    if (spec.steps) out["steps"] = *spec.steps;
    if (spec.command) {
        out.erase("base");
        out["command"] = *spec.command;
    }
    return out;
}

Config point_config(const SweepPlan& plan, const SweepPoint& point) {
    Config config = plan.base;
    for (const auto& [key, value] : point.set.items())
        if (!is_user_key(key)) apply_override(config, key + "=" + override_text(value));
    config.train.seed = point.seed;
    return config;
}

SweepPlan plan_sweep(const SweepSpec& spec) {
    SweepPlan plan;
    plan.spec = spec;
    Config base = base_config(spec.config_path, spec.preset);
    for (const auto& [key, value] : spec.set.items()) apply_override(base, key + "=" + override_text(value));
    if (spec.steps) base.train.steps = *spec.steps;
    validate(base);
    plan.base = base;
    plan.points = grid_points(spec, base.train.seed);
    for (const SweepPoint& point : plan.points) check_point(plan, point);
    return plan;
}

ojson sweep_plan_to_json(const SweepPlan& plan) {
    ojson points = ojson::array();
    for (const SweepPoint& point : plan.points)
        points.push_back({{"index", point.index},
                          {"id", point.id},
                          {"set", point.set},
                          {"labels", point.labels},
                          {"seed", point.seed}});
    ojson json = {{"format", "normlab-sweep"},
                  {"version", 1},
                  {"spec", sweep_spec_to_json(plan.spec)},
                  {"base_config", ojson::parse(config_to_json(plan.base).dump())},
                  {"points", points}};
    if (!plan.paths_from_command_line.empty()) json["paths_from_command_line"] = plan.paths_from_command_line;
    return json;
}

SweepPlan sweep_plan_from_json(const ojson& json, const std::string& source) {
    if (!json.is_object() || !json.contains("format") || json["format"] != "normlab-sweep")
        throw InputError(source + " is not a NormLab sweep plan (made by normlab-cli sweep plan)");
    if (!json.contains("version") || json["version"] != 1)
        throw InputError(source + ": sweep plan version " + json.value("version", ojson()).dump() +
                         " is not one this NormLab reads (1)");
    SweepPlan plan;
    try {
        plan.spec = sweep_spec_from_json(json.at("spec"));
        plan.base = config_from_json_text(json.at("base_config").dump(), source);
        for (const ojson& entry : json.at("points")) {
            SweepPoint point;
            // Checked before get<>: a float beyond int's range would be undefined behaviour.
            if (!entry.at("index").is_number_integer() || !entry.at("seed").is_number_unsigned())
                throw InputError(source + " is damaged: a point's index or seed is not a whole number");
            point.index = entry.at("index").get<int>();
            point.id = entry.at("id").get<std::string>();
            point.set = entry.at("set");
            point.labels = entry.at("labels").get<std::vector<std::string>>();
            point.seed = entry.at("seed").get<uint64_t>();
            plan.points.push_back(std::move(point));
        }
        if (json.contains("paths_from_command_line"))
            plan.paths_from_command_line = json["paths_from_command_line"].get<std::vector<std::string>>();
    } catch (const nlohmann::json::exception& error) {
        throw InputError(source + " is damaged: " + error.what());
    }
    check_points_match(plan, source);
    for (const SweepPoint& point : plan.points) check_point(plan, point);
    check_sweep_paths(plan, source);
    return plan;
}

}  // namespace normlab
