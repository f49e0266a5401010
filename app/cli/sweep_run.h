// Running sweep points: `sweep run` launches `sweep run-point` children N at a time over the points
// of its shard that are not done; `sweep run-point` claims one point and trains it into its folder.
// run_point_jobs is the same launcher for any list of points (an edge search's rounds use it).
#pragma once
#include <string>
#include <vector>

#include "app/cli/cli_options.h"
#include "engine/sweep/sweep_plan.h"

namespace normlab::cli {

// Exit code of run-point when another live worker holds the point's claim (nothing was run).
constexpr int kClaimedElsewhere = 3;

// The cores this process may run on (a Slurm or cgroup CPU set, else the machine's).
int64_t usable_cores();

// How a worker runs points: --jobs N, --threads-per-job K, --quiet.
struct SweepRunOptions {
    int64_t jobs = usable_cores(), threads = 1;
    bool quiet = false;
    // Consumes the flag (and its value) if it is one of these; returns whether it did.
    bool consume(const std::string& flag, ArgReader& reader);
};

// One point of one sweep folder.
struct PointJob {
    std::string dir;
    SweepPoint point;
};

// Runs each job in a `sweep run-point` child, options.jobs at a time, until done or interrupted
// (SIGINT, SIGTERM: sweep_interrupted() says so); reports each as it ends unless quiet. A point
// another worker holds is left to it (not a failure). Returns how many failed.
int run_point_jobs(const std::vector<PointJob>& todo, const SweepRunOptions& options);
bool sweep_interrupted();

int run_points(ArgReader& reader);
int run_one_point(ArgReader& reader);

}  // namespace normlab::cli
