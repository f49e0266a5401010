// An edge search (normlab-cli sweep edge): the base config, the key bisected and its range, the
// variants compared, the seeds, the criterion and the tolerance, kept in S/edge.json. Each (variant,
// seed) is one bisection whose probes are the points of an ordinary sweep folder S/searches/<name>/
// (one train.lr axis, one seed), so claims, workers, resume and the map all work on probes unchanged.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/sweep/edge_search.h"
#include "engine/sweep/sweep_plan.h"

namespace normlab {

struct EdgeSpec {
    // preset or config, set and steps (no axes, no seeds); or the user's command template alone, whose
    // user.NAME values the search bisects and varies
    // (docs/cli.md#sweep-edge-the-largest-learning-rate-that-still-trains)
    SweepSpec base;
    std::string key = "train.lr";
    EdgeBounds bounds;
    std::string vary_key;                     // empty: a single variant
    std::vector<nlohmann::json> vary_values;  // one variant per value
    std::vector<uint64_t> seeds;
    EdgeCriterion criterion;
    std::vector<std::string> paths_from_command_line;  // as in SweepPlan
};

// One bisection: a variant (by index and label) and a seed, searched in S/<folder>.
struct EdgeSearchRef {
    size_t variant = 0;
    std::string label;  // the variant's value as text ("rmsnorm"), or "base" without variants
    uint64_t seed = 1;
    std::string folder;  // "searches/rmsnorm-s3", relative to S
};
// Every search: variants in the order given, seeds innermost.
std::vector<EdgeSearchRef> edge_searches(const EdgeSpec& spec);
std::vector<std::string> edge_variant_labels(const EdgeSpec& spec);

// The sweep of one search with the probe values `values` (in the order they were first probed).
SweepSpec edge_sweep_spec(const EdgeSpec& spec, const EdgeSearchRef& search,
                          const std::vector<double>& values);
// Plans the search's sweep with `values`, every point validated; the paths policy as the spec says.
SweepPlan plan_edge_sweep(const EdgeSpec& spec, const EdgeSearchRef& search,
                          const std::vector<double>& values);

// Throws InputError naming what to change: a range that is not 0 < low < high, a key that is not a
// real-valued config key, a tolerance outside [0.5%, 100%], no seeds, a vary or set key that clashes
// with the searched key, variants whose folder names would collide, or a probe that is not a valid run.
void check_edge_spec(const EdgeSpec& spec);

nlohmann::ordered_json edge_spec_to_json(const EdgeSpec& spec);
EdgeSpec edge_spec_from_json(const nlohmann::ordered_json& json, const std::string& source);

// Writes S/edge.json (creating S); the same search again is a no-op, a different one an InputError.
void write_edge_spec(const std::string& dir, const EdgeSpec& spec);
// S/edge.json, checked; nothing when S has none.
std::optional<EdgeSpec> load_edge_spec(const std::string& dir);

}  // namespace normlab
