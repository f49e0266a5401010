// comparison_text: plain string building over the estimates; no I/O.
#include "engine/analysis/comparison_text.h"

#include <cmath>
#include <cstdio>

namespace normlab {

std::string comparison_number(double value) {
    if (std::isnan(value)) return "n/a";
    char text[32];
    std::snprintf(text, sizeof text, "%.6g", value);
    return text;
}

std::string missing_interval(const stats::Estimate& estimate, bool welch) {
    if (estimate.ci) return "";
    if (welch) return estimate.n == 0 ? "no runs used" : "n/a, one seed in a group";
    return estimate.n == 0 ? "no runs used" : "n/a, one seed";
}

std::string estimate_line(const stats::Estimate& estimate, bool welch) {
    std::string line = "mean " + comparison_number(estimate.mean);
    if (estimate.sd) line += ", sd " + comparison_number(*estimate.sd);
    if (welch && estimate.se) line += ", se " + comparison_number(*estimate.se);
    if (!estimate.ci) return line + ", 95% CI " + missing_interval(estimate, welch);
    return line + ", 95% CI [" + comparison_number(estimate.ci->low) + ", " +
           comparison_number(estimate.ci->high) + "] (t " + comparison_number(*estimate.t) + ", " +
           comparison_number(*estimate.dof) + " dof)";
}

std::string difference_line(const GroupSummary& a, const GroupSummary& b, const GroupDifference& d) {
    std::string line;
    if (d.paired) {
        line = "B - A, paired by seed (" + d.why + "): n " + std::to_string(d.estimate.n) +
               (d.estimate.n == 1 ? " pair" : " pairs");
        if (d.pairs_left_out) line += " (" + std::to_string(d.pairs_left_out) + " left out: a run not used)";
    } else {
        line = "B - A, unpaired (Welch; " + d.why + "): n " + std::to_string(a.estimate.n) + " + " +
               std::to_string(b.estimate.n);
    }
    return line + ", " + estimate_line(d.estimate, !d.paired);
}

}  // namespace normlab
