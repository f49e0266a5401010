// What an edge search found: per variant the edge over seeds (the geometric mean of each seed's last
// passing value, with a 95% t interval on log(edge) given back as values), each seed's bracket, and
// each variant's edge against the first one's as a ratio, paired by seed, with its 95% interval.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/stats/estimates.h"
#include "engine/sweep/edge_spec.h"

namespace normlab {

struct EdgeVariantReport {
    std::string label;
    std::vector<EdgeSearchState> seeds;  // in the spec's seed order
    // Over log(last pass) of every seed, when every seed is bracketed; else `note` says why not.
    std::optional<stats::Estimate> log_edge;
    std::string note;
};

struct EdgeRatio {
    std::string label, reference;  // label's edge / reference's edge
    stats::Estimate log_ratio;     // the paired difference of log edges, by seed
};

struct EdgeReport {
    std::vector<EdgeVariantReport> variants;
    std::vector<EdgeRatio> ratios;  // each variant after the first against the first
    bool finished = false;          // no search is still probing
};

// "rmsnorm edge 0.4113 [0.3782, 0.4473] (95% t interval over 5 seeds, geometric mean of last passes)",
// or "rmsnorm no edge: <why>": the words `sweep edge` prints and the window's edge chart shows.
std::string edge_variant_text(const EdgeVariantReport& variant);
// "rmsnorm/layernorm edge ratio 1.546 [1.166, 2.05] (paired by seed, n = 5)".
std::string edge_ratio_text(const EdgeRatio& ratio);

// `states` in edge_searches(spec) order.
EdgeReport edge_report(const EdgeSpec& spec, const std::vector<EdgeSearchState>& states);

// S/edge_result.json's content (docs/formats.md#edge-search-folders); also `sweep edge --json`.
nlohmann::ordered_json edge_report_to_json(const EdgeSpec& spec, const EdgeReport& report);

}  // namespace normlab
