// One point of a sweep over the user's own command (engine/sweep/sweep_command.h): the command runs in
// a child shell with NORMLAB_RUN_DIR set to the point's folder, where the bridge writes the run.
#pragma once
#include <string>

#include "engine/sweep/point_claim.h"
#include "engine/sweep/sweep_plan.h"

namespace normlab::cli {

// Runs `point`'s command into `folder` (emptied first: a killed attempt's files go), beating the claim
// while it runs and stopping the command (SIGTERM) if the claim is lost or this worker dies; on
// Ctrl-C, SIGTERM or a hang-up it stops the command and waits for it to end. Its output goes to
// folder/command.log. A command that exits non-zero, or exits without finishing the run (no
// summary.json, or one still "running"), or was stopped, leaves the point failed with the reason and
// the log's last lines in summary.json. Returns 0, or 130 when stopped (the point's state is in its
// folder).
int run_command_point(const SweepPlan& plan, const SweepPoint& point, const std::string& folder, bool quiet,
                      PointClaim& claim);

}  // namespace normlab::cli
