// How much each norm actually normalises: the mean and coefficient of variation over tokens of its
// per-token scale 1/std (the rstd its forward pass keeps in its statistics), for every sub-layer's norm
// (Norm_in, or Post-LN's after the sum), Peri-LN's output norms and the decoder's and the encoder's final
// norms: every norm of norm_sites() (docs/formats.md#metricsjsonl).
#include <algorithm>
#include <cmath>

#include "engine/model/model.h"

namespace normlab {

Model::NormScaleTarget Model::norm_scale_target(const NormSite& site) {
    ForwardStats& stats = m_stats;
    if (site.slot < 0 && site.encoder)
        return {&stats.encoder_final_norm_scale_mean, &stats.encoder_final_norm_scale_cv};
    if (site.slot < 0) return {&stats.final_norm_scale_mean, &stats.final_norm_scale_cv};
    const size_t slot = static_cast<size_t>(site.slot);
    if (site.output) return {&stats.norm_out_scale_mean[slot], &stats.norm_out_scale_cv[slot]};
    return {&stats.norm_scale_mean[slot], &stats.norm_scale_cv[slot]};
}

void Model::measure_norm_scales(int n) {
    ForwardStats& stats = m_stats;
    const size_t slots = m_sublayers.size();
    for (std::vector<double>* list :
         {&stats.norm_scale_mean, &stats.norm_scale_cv, &stats.norm_out_scale_mean, &stats.norm_out_scale_cv})
        list->assign(slots, 0.0);
    stats.final_norm_scale_mean = stats.final_norm_scale_cv = 0.0;
    stats.encoder_final_norm_scale_mean = stats.encoder_final_norm_scale_cv = 0.0;
    m_telemetry.norm_scale_slices.clear();
    m_telemetry.norm_scale_targets.clear();
    fill_norm_sites(m_telemetry.norm_sites);  // none with DyT, which has no per-token scale
    for (const NormSite& site : m_telemetry.norm_sites) {
        const size_t rstd = static_cast<size_t>(site.stats - m_activations) + 1;  // (mean, rstd) per row
        for (int row = 0; row < n; ++row)
            m_telemetry.norm_scale_slices.push_back({rstd + 2 * static_cast<size_t>(row), 1});
        m_telemetry.norm_scale_targets.push_back(norm_scale_target(site));
    }
    if (m_telemetry.norm_scale_slices.empty()) return;
    m_telemetry.norm_scale_sums.resize(m_telemetry.norm_scale_slices.size());
    m_telemetry.norm_scale_squares.resize(m_telemetry.norm_scale_slices.size());
    m_backend->sum_values_and_squares(m_activations, m_telemetry.norm_scale_slices,
                                      m_telemetry.norm_scale_sums.data(),
                                      m_telemetry.norm_scale_squares.data());
    for (size_t k = 0; k < m_telemetry.norm_scale_targets.size(); ++k) {
        double sum = 0.0, squares = 0.0;
        for (size_t i = k * n; i < (k + 1) * static_cast<size_t>(n); ++i) {
            sum += m_telemetry.norm_scale_sums[i];
            squares += m_telemetry.norm_scale_squares[i];
        }
        const double mean = sum / n;
        const double variance = std::max(0.0, squares / n - mean * mean);
        *m_telemetry.norm_scale_targets[k].mean = mean;
        *m_telemetry.norm_scale_targets[k].cv = mean > 0.0 ? std::sqrt(variance) / mean : 0.0;
    }
}

}  // namespace normlab
