// A seed group's band on a chart: the spread of its seeds' training or validation loss around the
// mean line, named in the legend with what it is ("G: 95% CI over 5 seeds").
#pragma once
#include "ui/history/run_history.h"
#include "ui/plots/plot_content.h"

namespace normlab::ui {

// Adds `group`'s band (its training loss's, or with `validation` its validation loss's) to `content`,
// in the group's colour; nothing where fewer than two seeds logged any step.
void addSeedBand(PlotContent& content, const RunHistory& group, bool validation);

}  // namespace normlab::ui
