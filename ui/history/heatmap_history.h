// Block x step history for the heatmaps (gradient norm, resid): one column of per-block values per
// logged step, bounded by merging neighbouring columns (keeping each block's maximum, so a blow-up
// in one block at one step stays visible however long the run).
#pragma once
#include <vector>

#include "ui/history/bucket_history.h"

namespace normlab::ui {

struct HeatColumn {
    double x_first = 0.0, x_last = 0.0;
    std::vector<double> values;  // per block

    void absorb(const HeatColumn& later);
    bool operator==(const HeatColumn&) const = default;
};

class HeatmapHistory {
  public:
    explicit HeatmapHistory(int capacity = 1024) : m_history(capacity) {}

    void append(double x, std::vector<double> values) { m_history.append({x, x, std::move(values)}); }
    void clear() { m_history.clear(); }
    const std::vector<HeatColumn>& columns() const { return m_history.buckets(); }
    int blocks() const { return columns().empty() ? 0 : static_cast<int>(columns().front().values.size()); }

  private:
    BucketHistory<HeatColumn> m_history;
};

}  // namespace normlab::ui
