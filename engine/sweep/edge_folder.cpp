// Edge search folders (edge_folder.h): a search's probe results from its sweep folder, and its sweep
// planned or grown by the sweep code (plan, extend) so probes are ordinary sweep points.
#include "engine/sweep/edge_folder.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <stdexcept>

#include "engine/core/errors.h"
#include "engine/sweep/sweep_collect.h"
#include "engine/sweep/sweep_extend.h"
#include "engine/sweep/sweep_folder.h"

namespace normlab {

namespace {
namespace fs = std::filesystem;

std::string search_dir(const std::string& dir, const EdgeSearchRef& search) {
    return (fs::path(dir) / search.folder).string();
}

bool has_sweep(const std::string& sweep_dir) {
    std::error_code error;
    return fs::exists(fs::path(sweep_dir) / "sweep.json", error);
}

bool holds(const SweepPlan& plan, const std::string& key, double value) {
    return std::any_of(plan.points.begin(), plan.points.end(),
                       [&](const SweepPoint& point) { return point.set.at(key).get<double>() == value; });
}

// The values of `values` the plan lacks, in order.
std::vector<double> missing_values(const SweepPlan& plan, const std::string& key,
                                   const std::vector<double>& values) {
    std::vector<double> missing;
    for (double value : values)
        if (!holds(plan, key, value)) missing.push_back(value);
    return missing;
}
}  // namespace

EdgeSearchState read_edge_search(const std::string& dir, const EdgeSpec& spec, const EdgeSearchRef& search) {
    const std::string sweep_dir = search_dir(dir, search);
    std::map<double, ProbeResult> results;
    if (has_sweep(sweep_dir)) {
        const SweepPlan plan = load_sweep(sweep_dir);
        for (const CollectedPoint& point : collect_sweep(sweep_dir, plan)) {
            if (!is_finished(point.progress.state)) continue;
            results[point.point.set.at(spec.key).get<double>()] = {
                point.progress.state == PointState::Diverged, point.final_loss()};
        }
    }
    return replay_edge_search(spec.bounds, spec.criterion,
                              [&results](double value) -> std::optional<ProbeResult> {
                                  const auto found = results.find(value);
                                  if (found == results.end()) return std::nullopt;
                                  return found->second;
                              });
}

SweepPlan plan_edge_probes(const std::string& dir, const EdgeSpec& spec, const EdgeSearchRef& search,
                           const std::vector<double>& values) {
    const std::string sweep_dir = search_dir(dir, search);
    if (!has_sweep(sweep_dir)) {
        const SweepPlan plan = plan_edge_sweep(spec, search, values);
        write_sweep(sweep_dir, plan);  // another driver that wrote the same plan first: a no-op
        return plan;
    }
    for (int attempt = 0;; ++attempt) {
        std::string text;
        const SweepPlan plan = load_sweep(sweep_dir, &text);
        const std::vector<double> missing = missing_values(plan, spec.key, values);
        if (missing.empty()) return plan;
        SweepExtension extension;
        extension.values.push_back({spec.key, nlohmann::ordered_json(missing)});
        const SweepPlan extended = extend_sweep(plan, extension);
        try {
            write_extended_sweep(sweep_dir, text, extended);
            return extended;
        } catch (const InputError&) {
            if (attempt >= 10) throw;  // sweep.json changed under us: read it again
        }
    }
}

const SweepPoint& edge_probe_point(const SweepPlan& plan, const std::string& key, double value) {
    for (const SweepPoint& point : plan.points)
        if (point.set.at(key).get<double>() == value) return point;
    throw std::logic_error("edge search: no probe of " + key + " at the value wanted");
}

std::vector<EdgeSearchState> read_edge_searches(const std::string& dir, const EdgeSpec& spec) {
    std::vector<EdgeSearchState> states;
    for (const EdgeSearchRef& search : edge_searches(spec))
        states.push_back(read_edge_search(dir, spec, search));
    return states;
}

}  // namespace normlab
