// A sweep: a base config (preset or config file, plus overrides) and axes of values, expanded into
// points, each a normal run with a stable id derived from its overrides. The sweep file's format and
// the plan written to S/sweep.json are the contract between `normlab-cli sweep plan`, the workers on
// any machine (`sweep run`, `sweep run-point`, Slurm arrays) and the window's map view.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/config/config.h"

namespace normlab {

// One axis: a key with its values, or linked keys whose values change together (value i of every key
// at once), with optional labels naming each step ("Post-LN", ...).
struct SweepAxis {
    std::vector<std::string> keys;
    std::vector<std::vector<nlohmann::json>> values;  // values[k][i]: key k's i-th value
    std::vector<std::string> labels;                  // empty, or one per value
    size_t size() const { return values.empty() ? 0 : values.front().size(); }
    // The name the map view and collect's CSV give the axis: its key, or "key1+key2".
    std::string name() const;
};

struct SweepSpec {
    std::optional<std::string> preset, config_path;                 // the base; neither: quickstart
    nlohmann::ordered_json set = nlohmann::ordered_json::object();  // base overrides, key -> value
    std::vector<SweepAxis> axes;  // in the order given; first varies slowest
    std::vector<uint64_t> seeds;  // empty: the base config's seed
    std::optional<int> steps;
    // A sweep over the user's own command (sweep_command.h): its template; the axes are user.NAME keys
    // and the base config is unused (quickstart).
    std::optional<std::string> command;
};

struct SweepPoint {
    int index = 0;
    std::string id;                   // stable: derived from the overrides and the seed
    nlohmann::ordered_json set;       // key -> value, every axis key of this point
    std::vector<std::string> labels;  // per axis: its label or the value as text
    uint64_t seed = 1;
};

struct SweepPlan {
    SweepSpec spec;
    Config base;  // resolved: preset or file, the base overrides and steps
    std::vector<SweepPoint> points;
    // Path keys whose values the planner gave on the command line (or in the window): only these may
    // be absolute or leave the sweep folder (engine/sweep/sweep_path_policy.h).
    std::vector<std::string> paths_from_command_line;
};

// The most points a sweep may have (seeds included): a larger grid is refused, planned or read.
inline constexpr size_t kMaxSweepPoints = 100000;

// Reads a sweep file's JSON (see docs/formats.md). Throws InputError naming what is wrong (a key in
// two axes included).
SweepSpec sweep_spec_from_json(const nlohmann::ordered_json& json);
nlohmann::ordered_json sweep_spec_to_json(const SweepSpec& spec);
// Expands the grid (axes in order, the first varying slowest, seeds innermost) and validates every
// point's config, so a bad value fails the plan rather than a worker. Deterministic: the same spec
// gives the same ids in the same order. Throws InputError for a point listed twice (a repeated value
// or seed) and for more than kMaxSweepPoints points.
SweepPlan plan_sweep(const SweepSpec& spec);
// The config of one point: the base with the point's overrides and seed.
Config point_config(const SweepPlan& plan, const SweepPoint& point);
// The text an override's value takes on a command line / in apply_override ("0.001", "post").
std::string override_text(const nlohmann::json& value);
// The inverse, for values typed by a user (--axis, --set, the New sweep dialog): JSON where the text
// reads as a number, true/false or a quoted string, else the word itself. And "V1, V2, ..." as a list.
nlohmann::ordered_json value_from_text(const std::string& text);
nlohmann::ordered_json values_from_text(const std::string& list);
// A value as a file-name-safe word (point ids, edge search folders): letters, digits, '.', '+', '-'
// kept; anything else '_'.
std::string file_name_slug(const std::string& text);

// S/sweep.json: the spec, the resolved base config and the points.
nlohmann::ordered_json sweep_plan_to_json(const SweepPlan& plan);
// Throws InputError unless the points are exactly the grid of the spec (ids, values, labels, seeds) and
// each a valid run whose paths obey check_sweep_paths: a sweep.json from another machine or edited by
// hand is checked like a new plan.
SweepPlan sweep_plan_from_json(const nlohmann::ordered_json& json, const std::string& source);

}  // namespace normlab
