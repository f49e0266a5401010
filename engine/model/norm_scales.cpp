// How much each norm actually normalises: the mean and coefficient of variation over tokens of its
// per-token scale 1/std (the rstd its forward pass keeps in its statistics), for every sub-layer's norm
// (Norm_in, or Post-LN's after the sum), Peri-LN's output norms and the decoder's and the encoder's final
// norms: every norm of norm_sites() (docs/formats.md#metricsjsonl).
#include <algorithm>
#include <cmath>

#include "engine/model/model.h"

namespace normlab {

Model::NormScaleTarget Model::norm_scale_target(const NormSite& site) {
    if (site.slot < 0) {
        StackStats& stack = site.encoder ? m_stats.encoder : m_stats.decoder;
        return {&stack.final_norm_scale_mean, &stack.final_norm_scale_cv};
    }
    SublayerStats& sublayers = m_stats.sublayers;
    const size_t slot = static_cast<size_t>(site.slot);
    if (site.output) return {&sublayers.norm_out_scale_mean[slot], &sublayers.norm_out_scale_cv[slot]};
    return {&sublayers.norm_scale_mean[slot], &sublayers.norm_scale_cv[slot]};
}

// Every pass has emptied the lists and marked the final norms' scales unrecorded
// (ForwardStats::clear_telemetry), which a stack without a final norm (or with DyT) keeps.
void Model::measure_norm_scales(int n) {
    SublayerStats& sublayers = m_stats.sublayers;
    TelemetryScratch& scratch = m_telemetry;
    for (std::vector<double>* list : {&sublayers.norm_scale_mean, &sublayers.norm_scale_cv,
                                      &sublayers.norm_out_scale_mean, &sublayers.norm_out_scale_cv})
        list->assign(m_sublayers.size(), kNotRecorded);  // a slot without a norm keeps it
    scratch.norm_scale_slices.clear();
    scratch.norm_scale_targets.clear();
    fill_norm_sites(scratch.norm_sites);  // none with DyT, which has no per-token scale
    for (const NormSite& site : scratch.norm_sites) {
        const size_t rstd = static_cast<size_t>(site.stats - m_activations) + 1;  // (mean, rstd) per row
        for (int row = 0; row < n; ++row)
            scratch.norm_scale_slices.push_back({rstd + 2 * static_cast<size_t>(row), 1});
        scratch.norm_scale_targets.push_back(norm_scale_target(site));
    }
    if (scratch.norm_scale_slices.empty()) return;
    scratch.norm_scale_sums.resize(scratch.norm_scale_slices.size());
    scratch.norm_scale_squares.resize(scratch.norm_scale_slices.size());
    m_backend->sum_values_and_squares(m_activations, scratch.norm_scale_slices,
                                      scratch.norm_scale_sums.data(), scratch.norm_scale_squares.data());
    for (size_t k = 0; k < scratch.norm_scale_targets.size(); ++k) {
        double sum = 0.0, squares = 0.0;
        for (size_t i = k * n; i < (k + 1) * static_cast<size_t>(n); ++i) {
            sum += scratch.norm_scale_sums[i];
            squares += scratch.norm_scale_squares[i];
        }
        const double mean = sum / n;
        const double variance = std::max(0.0, squares / n - mean * mean);
        *scratch.norm_scale_targets[k].mean = mean;
        *scratch.norm_scale_targets[k].cv = mean > 0.0 ? std::sqrt(variance) / mean : 0.0;
    }
}

}  // namespace normlab
