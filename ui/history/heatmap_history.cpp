// Column merging for the block x step heatmaps: per block the larger value wins (NaN/inf included,
// so a non-finite block stays marked).
#include "ui/history/heatmap_history.h"

#include <algorithm>
#include <cmath>

namespace normlab::ui {

void HeatColumn::absorb(const HeatColumn& later) {
    x_last = later.x_last;
    if (values.size() < later.values.size()) values.resize(later.values.size(), 0.0);
    for (size_t block = 0; block < later.values.size(); ++block) {
        const double value = later.values[block];
        if (!std::isfinite(value) || value > values[block]) values[block] = value;
    }
}

}  // namespace normlab::ui
