// The words of a comparison of two groups, shared by `normlab-cli compare` and the window's difference
// chart so both say the same numbers the same way: an estimate's line, why it has no interval, and
// the difference B - A with how it was taken (paired by seed or Welch).
#pragma once
#include <string>

#include "engine/analysis/group_comparison.h"

namespace normlab {

// "%.6g" of a value; "n/a" for NaN.
std::string comparison_number(double value);
// Why an estimate has no interval ("n/a, one seed", "no runs used"); empty when it has one.
std::string missing_interval(const stats::Estimate& estimate, bool welch);
// "mean 3.414, sd 0.027, 95% CI [3.38, 3.448] (t 2.776, 4 dof)" or "..., 95% CI n/a, one seed".
std::string estimate_line(const stats::Estimate& estimate, bool welch);
// "B - A, paired by seed (both groups hold seeds 1 2 3): n 3 pairs, mean ..." or "B - A, unpaired
// (Welch; the seeds differ (...)): n 3 + 2, mean ...".
std::string difference_line(const GroupSummary& a, const GroupSummary& b, const GroupDifference& d);

}  // namespace normlab
