// The per-block values the block charts draw (the four matrices' gradient norms and resid) at the
// first logged step, the newest, and a bounded set of steps between: every step until kCapacity are
// kept, then the spacing doubles (steps on multiples of it stay), so the kept steps spread evenly over
// any run length and a chart can show the profile at a chosen step (the stall at step 100).
#pragma once
#include <cstdint>
#include <vector>

#include "engine/train/telemetry.h"

namespace normlab::ui {

struct BlockValues {
    double w_qkv = 0.0, w_o = 0.0, w_1 = 0.0, w_2 = 0.0;  // gradient norms of the block's matrices
    double resid = 0.0;                                   // E||s||^2/d of its output residual sum
};

struct BlockProfile {
    int64_t step = 0;
    std::vector<BlockValues> blocks;
};

class BlockProfiles {
  public:
    static constexpr size_t kCapacity = 256;  // 48 blocks: about 0.5 MB a run

    void absorb(int64_t step, const std::vector<normlab::LayerTelemetry>& layers);
    void clear();
    bool empty() const { return m_first.blocks.empty(); }
    const BlockProfile& first() const { return m_first; }
    const BlockProfile& latest() const { return m_latest; }
    // The kept profile at the largest step <= `step` (the newest for a step past it, the first for
    // one before any), from the first, the kept and the newest. Must not be empty().
    const BlockProfile& atOrBefore(int64_t step) const;
    int64_t spacing() const { return m_spacing; }
    size_t keptCount() const { return m_kept.size(); }

  private:
    BlockProfile m_first, m_latest;
    std::vector<BlockProfile> m_kept;  // ascending steps, on multiples of m_spacing
    int64_t m_spacing = 1;
};

}  // namespace normlab::ui
