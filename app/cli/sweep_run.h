// Running sweep points: `sweep run` launches `sweep run-point` children N at a time over the points
// of its shard that are not done; `sweep run-point` claims one point and trains it into its folder.
#pragma once
#include "app/cli/cli_options.h"

namespace normlab::cli {

// Exit code of run-point when another live worker holds the point's claim (nothing was run).
constexpr int kClaimedElsewhere = 3;

int run_points(ArgReader& reader);
int run_one_point(ArgReader& reader);

}  // namespace normlab::cli
