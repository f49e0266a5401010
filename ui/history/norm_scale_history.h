// The norms' mean per-token scale 1/std over steps, by family: each sub-layer's input norm (with the
// decoder's final norm), Peri-LN's output norms, the cross-attention sub-layers' norms and the encoder's
// (with its final norm). A family the run does not have stays empty; steps without attention statistics
// leave gaps.
#pragma once
#include <QString>
#include <array>
#include <vector>

#include "engine/train/telemetry.h"
#include "ui/history/decimated_series.h"

namespace normlab::ui {

// BatchStatisticsGap is not a scale: BatchNorm's gap between each sub-layer norm's batch statistics and
// its running ones (norm1_stat_gap, norm2_stat_gap), drawn on the same chart.
enum class NormFamily { Inputs, PeriOutputs, CrossAttention, Encoder, BatchStatisticsGap };
inline constexpr std::array kNormFamilies = {NormFamily::Inputs, NormFamily::PeriOutputs,
                                             NormFamily::CrossAttention, NormFamily::Encoder,
                                             NormFamily::BatchStatisticsGap};

// What a family's series are, for menus, legends and exports.
struct NormFamilyNames {
    QString family;  // "Sub-layer inputs"
    QString first;   // the per-block solid lines' norm: " attention"
    QString second;  // the dashed lines' norm: " FFN"
    QString final;   // the single line's norm, or empty: "final norm"
};
NormFamilyNames normFamilyNames(NormFamily family);

struct NormScaleSeries {
    std::vector<DecimatedSeries> first, second;  // per block: the family's two norms of each block
    DecimatedSeries final;                       // the stack's final norm (inputs and encoder only)
    bool empty() const { return first.empty() && final.empty(); }
};

class NormScaleHistory {
  public:
    // A logged step's norm scales; per-block series hold `capacity` buckets each.
    void absorb(double x, const normlab::StepRecord& record, int capacity);
    const NormScaleSeries& of(NormFamily family) const { return m_families[static_cast<size_t>(family)]; }
    void clear();

  private:
    std::array<NormScaleSeries, kNormFamilies.size()> m_families;
};

}  // namespace normlab::ui
