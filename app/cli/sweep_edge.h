// `normlab-cli sweep edge`: the learning-rate edge of each variant by bisection (engine/sweep/
// edge_*.h), its rounds run as sweep points by the sweep launcher, and the report of what it found.
// `sweep run S` on an edge folder continues the search the same way.
#pragma once
#include <string>

#include "app/cli/cli_options.h"
#include "app/cli/sweep_run.h"

namespace normlab::cli {

// Whether S holds an edge search (S/edge.json).
bool is_edge_folder(const std::string& dir);

// Runs the search in S to its end, round by round, then writes S/edge_result.json and prints the
// report (as JSON with `json`). 130 when interrupted, 1 when a probe failed, else 0.
int continue_edge_search(const std::string& dir, const SweepRunOptions& options, bool json = false);

// sweep edge ... (cmd_sweep_edge.cpp).
int run_edge(ArgReader& reader);

}  // namespace normlab::cli
