// How much each norm actually normalises: the mean and coefficient of variation over tokens of its
// per-token scale 1/std (the rstd its forward pass keeps in its statistics), per decoder block for the
// attention and FFN sub-layers' norms (docs/formats.md#metricsjsonl).
#include <algorithm>
#include <cmath>

#include "engine/model/model.h"

namespace normlab {

namespace {
// The statistics of a sub-layer's norm, which Post-LN takes after the sum and Pre-/Peri-LN before the
// branch; none without a norm or with DyT, which has no per-token scale.
const float* norm_statistics(NormPlacement placement, NormType type, const float* normed_stats,
                             const float* output_stats) {
    if (type == NormType::DyT) return nullptr;
    if (placement == NormPlacement::Post) return output_stats;
    return has_input_norm(placement) ? normed_stats : nullptr;
}
}  // namespace

void Model::measure_norm_scales(int n) {
    const SublayerSlots slots(m_config);
    const size_t sublayers = static_cast<size_t>(slots.decoder_count());  // the decoder's, by slot
    m_stats.norm_scale_mean.assign(sublayers, 0.0);
    m_stats.norm_scale_cv.assign(sublayers, 0.0);
    m_norm_scale_slices.clear();
    m_norm_scale_owner.clear();
    for (int slot = 0; slot < slots.decoder_count(); ++slot) {
        const SublayerActivations& acts = m_sublayers[slot];
        const float* stats = norm_statistics(plan_step(slot).placement, m_config.norm_type, acts.normed_stats,
                                             acts.output_stats);
        if (!stats) continue;
        const size_t rstd = static_cast<size_t>(stats - m_activations) + 1;  // (mean, rstd) per row
        for (int row = 0; row < n; ++row)
            m_norm_scale_slices.push_back({rstd + 2 * static_cast<size_t>(row), 1});
        m_norm_scale_owner.push_back(static_cast<size_t>(slot));
    }
    if (m_norm_scale_slices.empty()) return;
    m_norm_scale_sums.resize(m_norm_scale_slices.size());
    m_norm_scale_squares.resize(m_norm_scale_slices.size());
    m_backend->sum_values_and_squares(m_activations, m_norm_scale_slices, m_norm_scale_sums.data(),
                                      m_norm_scale_squares.data());
    for (size_t k = 0; k < m_norm_scale_owner.size(); ++k) {
        double sum = 0.0, squares = 0.0;
        for (size_t i = k * n; i < (k + 1) * static_cast<size_t>(n); ++i) {
            sum += m_norm_scale_sums[i];
            squares += m_norm_scale_squares[i];
        }
        const double mean = sum / n;
        const double variance = std::max(0.0, squares / n - mean * mean);
        m_stats.norm_scale_mean[m_norm_scale_owner[k]] = mean;
        m_stats.norm_scale_cv[m_norm_scale_owner[k]] = mean > 0.0 ? std::sqrt(variance) / mean : 0.0;
    }
}

}  // namespace normlab
