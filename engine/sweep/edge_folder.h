// An edge search folder S: S/edge.json (the spec) and one sweep folder per (variant, seed) under
// S/searches/, whose points are that search's probes. The search's state is replayed from those
// points' run folders alone (edge_search.h): there is no other state to keep in step.
#pragma once
#include <string>
#include <vector>

#include "engine/sweep/edge_spec.h"
#include "engine/sweep/sweep_plan.h"

namespace normlab {

// The search's state from the probes that have finished in S/<search.folder> (none before its sweep
// is planned). A failed or unfinished probe is wanted again.
EdgeSearchState read_edge_search(const std::string& dir, const EdgeSpec& spec, const EdgeSearchRef& search);

// Every search's state, in edge_searches(spec) order (read only: nothing is planned).
std::vector<EdgeSearchState> read_edge_searches(const std::string& dir, const EdgeSpec& spec);
// The search's sweep with every value of `values` a point: planned with them when it is new, else
// extended by those it lacks (sweep_extend.h: every planned probe keeps its id and folder). Another
// driver extending it at the same moment is tolerated: the plan is read again until it holds them.
SweepPlan plan_edge_probes(const std::string& dir, const EdgeSpec& spec, const EdgeSearchRef& search,
                           const std::vector<double>& values);

// The point of `plan` whose searched key is `value` (values match exactly: they are read back from
// the same JSON). Throws std::logic_error when there is none.
const SweepPoint& edge_probe_point(const SweepPlan& plan, const std::string& key, double value);

}  // namespace normlab
