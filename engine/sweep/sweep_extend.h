// Growing a planned sweep in place (normlab-cli sweep extend): more seeds, or more values on an axis.
// Every point already planned keeps its id, its values, its seed and so its run folder, claims and
// results; only new points are added, and the map reads the grown grid.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/sweep/sweep_plan.h"

namespace normlab {

struct SweepExtension {
    std::vector<uint64_t> seeds;  // added after the sweep's own (a seed it has already is ignored)
    // key -> values added at the end of that key's axis (values it has already are ignored)
    std::vector<std::pair<std::string, nlohmann::ordered_json>> values;
};

// The plan with the extension: every old point kept as it was (same id, values, seed), new ones added.
// Throws InputError naming what to change for an axis that does not exist, a linked or labelled
// axis (extend those in the sweep file and plan a new sweep), or an extension that adds nothing.
SweepPlan extend_sweep(const SweepPlan& plan, const SweepExtension& extension);

// Replaces S/sweep.json by `extended` in one atomic rename, if it still holds the text it had when read
// (`read_before`, load_sweep's); else another extension came first: InputError saying to look again.
void write_extended_sweep(const std::string& sweep_dir, const std::string& read_before,
                          const SweepPlan& extended);

}  // namespace normlab
