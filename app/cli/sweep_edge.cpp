// Driving an edge search: each round, every (variant, seed) search that is still probing gets its
// next probes planned into its sweep folder, and the round's probes of all searches run together,
// N at a time; probes another worker holds are waited for. Then the report, in S/edge_result.json.
#include "app/cli/sweep_edge.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <thread>

#include "engine/core/atomic_file.h"
#include "engine/core/errors.h"
#include "engine/sweep/edge_folder.h"
#include "engine/sweep/edge_report.h"
#include "engine/sweep/sweep_folder.h"

namespace normlab::cli {

namespace {
namespace fs = std::filesystem;

// Reads every search's state into `states` and plans the probes of those still probing; returns the
// probes that have not finished.
std::vector<PointJob> plan_round(const std::string& dir, const EdgeSpec& spec,
                                 const std::vector<EdgeSearchRef>& searches,
                                 std::vector<EdgeSearchState>& states) {
    std::vector<PointJob> jobs;
    for (size_t i = 0; i < searches.size(); ++i) {
        states[i] = read_edge_search(dir, spec, searches[i]);
        if (states[i].status != EdgeStatus::Probing) continue;
        const SweepPlan plan = plan_edge_probes(dir, spec, searches[i], states[i].wanted);
        const std::string sweep_dir = (fs::path(dir) / searches[i].folder).string();
        for (double value : states[i].wanted)
            jobs.push_back({sweep_dir, edge_probe_point(plan, spec.key, value)});
    }
    return jobs;
}

bool any_finished(const std::vector<PointJob>& jobs) {
    for (const PointJob& job : jobs)
        if (is_finished(point_progress(job.dir, job.point).state)) return true;
    return false;
}

// Runs rounds until no search is probing; the exit code (0, 1 a probe failed, 130 interrupted).
int run_rounds(const std::string& dir, const EdgeSpec& spec, const SweepRunOptions& options,
               std::vector<EdgeSearchState>& states) {
    const std::vector<EdgeSearchRef> searches = edge_searches(spec);
    states.assign(searches.size(), {});
    // A continued search counts on from the rounds its probes already finished (round 1 judges two).
    size_t judged = 0;
    for (const EdgeSearchState& state : read_edge_searches(dir, spec))
        judged = std::max(judged, state.probes.size());
    for (int round = judged >= 2 ? static_cast<int>(judged) : 1;; ++round) {
        const std::vector<PointJob> jobs = plan_round(dir, spec, searches, states);
        if (jobs.empty()) return 0;
        if (!options.quiet)
            std::cerr << "normlab-cli sweep edge: round " << round << ", " << jobs.size() << " probe(s), "
                      << options.jobs << " at a time\n";
        const int failed = run_point_jobs(jobs, options);
        if (sweep_interrupted()) {
            std::cerr << "normlab-cli sweep edge: interrupted; run the same command (or normlab-cli sweep "
                         "run "
                      << dir << ") to continue the search\n";
            return 130;
        }
        if (failed > 0) {
            std::cerr << "normlab-cli sweep edge: " << failed << " probe(s) failed (their summary.json under "
                      << dir << "/searches says why); run the same command again to retry them\n";
            return 1;
        }
        if (!any_finished(jobs))
            std::this_thread::sleep_for(std::chrono::seconds(2));  // other workers' probes
    }
}

void print_variant(const EdgeSpec& spec, const EdgeVariantReport& variant) {
    std::printf("  %s\n", edge_variant_text(variant).c_str());
    for (size_t s = 0; s < variant.seeds.size(); ++s) {
        const EdgeSearchState& state = variant.seeds[s];
        std::printf("      seed %-4llu %-10s last pass %-10.4g first fail %-10.4g (%zu probes)\n",
                    static_cast<unsigned long long>(spec.seeds[s]), to_string(state.status),
                    state.last_pass.value_or(NAN), state.first_fail.value_or(NAN), state.probes.size());
    }
}

void print_report(const std::string& dir, const EdgeSpec& spec, const EdgeReport& report) {
    std::printf("edge of %s in [%g, %g], criterion %s, tolerance %g%%, seeds %zu:\n", spec.key.c_str(),
                spec.bounds.low, spec.bounds.high, to_string(spec.criterion).c_str(),
                100.0 * spec.bounds.tolerance, spec.seeds.size());
    for (const EdgeVariantReport& variant : report.variants) print_variant(spec, variant);
    for (const EdgeRatio& ratio : report.ratios) std::printf("  %s\n", edge_ratio_text(ratio).c_str());
    std::printf("results: %s\n", (fs::path(dir) / "edge_result.json").string().c_str());
}
}  // namespace

bool is_edge_folder(const std::string& dir) {
    std::error_code error;
    return fs::exists(fs::path(dir) / "edge.json", error);
}

int continue_edge_search(const std::string& dir, const SweepRunOptions& options, bool json) {
    const std::optional<EdgeSpec> spec = load_edge_spec(dir);
    if (!spec)
        throw InputError(dir +
                         " is not an edge search folder (no edge.json); start one with normlab-cli "
                         "sweep edge ... --out " +
                         dir);
    std::vector<EdgeSearchState> states;
    const int code = run_rounds(dir, *spec, options, states);
    if (code != 0) return code;
    const EdgeReport report = edge_report(*spec, states);
    const nlohmann::ordered_json result = edge_report_to_json(*spec, report);
    write_file_atomically((fs::path(dir) / "edge_result.json").string(), result.dump(2) + "\n");
    if (json)
        std::cout << result.dump(2) << "\n";
    else
        print_report(dir, *spec, report);
    return 0;
}

}  // namespace normlab::cli
