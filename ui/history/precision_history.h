// A run's emulated-precision telemetry (train.precision other than fp32; docs/precision.md): per block
// the shares of its matmul activations and gradients that overflowed or underflowed and its residual
// stream's headroom, and the run's loss scale. A run in fp32 records none of it and keeps nothing here.
#pragma once
#include <array>
#include <vector>

#include "engine/train/telemetry.h"
#include "ui/history/decimated_series.h"

namespace normlab::ui {

enum class PrecisionQuantity { GradUnderflow, ActUnderflow, GradOverflow, ActOverflow, StreamHeadroom };
inline constexpr size_t kPrecisionQuantities = 5;

class PrecisionHistory {
  public:
    // A step's values (its per-block ones on logged steps); per-block series hold `capacity` buckets.
    void absorb(double x, const normlab::StepRecord& record, int capacity);
    const std::vector<DecimatedSeries>& perBlock(PrecisionQuantity quantity) const {
        return m_perBlock[static_cast<size_t>(quantity)];
    }
    const DecimatedSeries& lossScale() const { return m_lossScale; }
    void clear();

  private:
    std::array<std::vector<DecimatedSeries>, kPrecisionQuantities> m_perBlock;
    DecimatedSeries m_lossScale;
};

}  // namespace normlab::ui
