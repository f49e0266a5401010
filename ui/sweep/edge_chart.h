// The chart of an edge search folder (normlab-cli sweep edge): every probe's final loss against the
// searched value, a line per (variant, seed) in the variant's colour, diverged probes as the top row's
// NaN marks; each variant's edge as a labelled vertical marker with its 95% interval shaded, and the
// report's words (each edge, the paired ratios) under the legend.
#pragma once
#include "engine/sweep/edge_report.h"
#include "ui/plots/plot_content.h"

namespace normlab::ui {

PlotContent edgeChartContent(const normlab::EdgeSpec& spec, const normlab::EdgeReport& report);

}  // namespace normlab::ui
