// Norm-free inference (Heimersheim 2024, "fake LayerNorm"): any of the model's norms can divide by a
// fixed standard deviation instead of each token's own. Here: the model's norm calls, which take the
// frozen path for a frozen norm, the list of norms with a per-token scale, and their mean scales.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "engine/model/model.h"

namespace normlab {

void Model::apply_norm(const NormIndex& norm, float* y, float* stats, const float* x, int n) {
    if (is_feature_norm(m_config.norm_type)) {
        apply_feature_norm(norm, y, x, n);
        return;
    }
    const float frozen = m_frozen_rstd[norm.weight];
    if (frozen > 0.0f) {
        m_backend->frozen_norm_forward(m_config.norm_type, y, stats, x, entry_ptr(norm.weight),
                                       entry_ptr(norm.bias), frozen, n, m_config.d_model);
        return;
    }
    m_backend->norm_forward(m_config.norm_type, y, stats, x, entry_ptr(norm.weight), entry_ptr(norm.bias),
                            {0.0f, entry_ptr(norm.alpha)}, n, m_config.d_model,
                            static_cast<float>(m_config.norm_eps));
}

void Model::apply_norm_backward(const NormIndex& norm, float* dx, const float* dy, const float* x,
                                const float* stats, int n, bool accumulate_dx) {
    if (is_feature_norm(m_config.norm_type)) {
        m_backend->feature_norm_backward(m_config.norm_type, dx, grad_ptr(norm.weight), grad_ptr(norm.bias),
                                         dy, x, entry_ptr(norm.weight), feature_state(norm.weight),
                                         m_feature_norms.mode, n, m_config.d_model, accumulate_dx);
        return;
    }
    if (m_frozen_rstd[norm.weight] > 0.0f) {
        m_backend->frozen_norm_backward(m_config.norm_type, dx, grad_ptr(norm.weight), grad_ptr(norm.bias),
                                        dy, x, stats, entry_ptr(norm.weight), n, m_config.d_model,
                                        accumulate_dx);
        return;
    }
    m_backend->norm_backward(m_config.norm_type, dx, grad_ptr(norm.weight), grad_ptr(norm.bias),
                             grad_ptr(norm.alpha), dy, x, stats, entry_ptr(norm.weight),
                             {0.0f, entry_ptr(norm.alpha)}, n, m_config.d_model, accumulate_dx);
}

std::vector<Model::NormSite> Model::norm_sites() const {
    std::vector<NormSite> sites;
    fill_norm_sites(sites);
    return sites;
}

void Model::fill_norm_sites(std::vector<NormSite>& sites) const {
    sites.clear();
    // no per-token scale to freeze: DyT, and the feature norms (BatchNorm, PowerNorm) scale per feature
    if (m_config.norm_type == NormType::DyT || is_feature_norm(m_config.norm_type)) return;
    for (size_t i = 0; i < m_plan.size(); ++i) {
        const SublayerStep& step = m_plan[i];
        // the activation views exist once a pass has carved them (statistics are for after a pass)
        auto stats = [&](float* SublayerActivations::*view) -> const float* {
            return m_sublayers.empty() ? nullptr : m_sublayers[step.slot].*view;
        };
        const BlockIndex& index = block_index(step);
        const int in = input_norm_of(index, step.kind).weight;
        if (step.placement == NormPlacement::Post)
            sites.push_back({in, stats(&SublayerActivations::output_stats), step.kind, step.slot});
        else if (has_input_norm(step.placement))
            sites.push_back({in, stats(&SublayerActivations::normed_stats), step.kind, step.slot});
        if (step.placement == NormPlacement::Peri) {
            sites.push_back({output_norm_of(index, step.kind).weight,
                             stats(&SublayerActivations::branch_stats), step.kind, step.slot, true});
        }
        if (static_cast<int>(i) + 1 == m_encoder_steps && has_final_norm(m_config, true))
            sites.push_back({m_layout.encoder_final_norm.weight, m_memory_stats, -1, -1, false, true});
    }
    if (has_final_norm(m_config, false)) sites.push_back({m_layout.final_norm.weight, m_final_stats, -1});
}

int Model::scaled_norm_sublayer(int entry) const {
    for (const NormSite& site : norm_sites())
        if (site.entry == entry) return site.sublayer;
    throw std::invalid_argument("entry " + std::to_string(entry) + " is not a norm with a per-token scale");
}

std::vector<int> Model::scaled_norms() const {
    std::vector<int> entries;
    for (const NormSite& site : norm_sites()) entries.push_back(site.entry);
    return entries;
}

void Model::freeze_norm(int entry, double std) {
    const std::vector<int> norms = scaled_norms();
    if (std::find(norms.begin(), norms.end(), entry) == norms.end())
        throw std::invalid_argument("entry " + std::to_string(entry) +
                                    " is not a norm with a per-token scale");
    if (!(std >= 0.0) || !std::isfinite(std))
        throw std::invalid_argument(
            "a frozen norm's standard deviation must be finite and > 0 (0 unfreezes)");
    m_frozen_rstd[entry] = std > 0.0 ? static_cast<float>(1.0 / std) : 0.0f;
}

std::vector<Model::NormStdSums> Model::norm_std_sums() {
    if (!m_activations) throw std::logic_error("norm_std_sums needs a forward pass first");
    const size_t rows = static_cast<size_t>(m_batch) * m_seq;
    std::vector<float> stats(2 * rows);
    std::vector<NormStdSums> sums;
    for (const NormSite& site : norm_sites()) {
        m_backend->download(stats.data(), site.stats, stats.size());
        NormStdSums norm;
        for (size_t row = 0; row < rows; ++row) {
            const double std = 1.0 / stats[2 * row + 1];  // (mean, rstd) per row
            norm.sum += std;
            norm.squares += std * std;
        }
        norm.tokens = rows;
        sums.push_back(norm);
    }
    return sums;
}

}  // namespace normlab
