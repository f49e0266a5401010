// BatchNorm and PowerNorm in the model (model.norm_type batchnorm / powernorm): each norm's running
// statistics and its pass's statistics in one backend buffer, by the layout entry of its gain, and the
// mode (FeatureStatistics) the trainer sets around its training and validation passes.
#include <cmath>
#include <stdexcept>
#include <string>

#include "engine/core/not_recorded.h"
#include "engine/model/model.h"

namespace normlab {

namespace {
// Per norm: running mean, running variance (PowerNorm: psi^2), nu, then the pass's mean and rstd.
constexpr size_t kStateVectors = 5;
}  // namespace

void Model::allocate_feature_norms() {
    FeatureNorms& norms = m_feature_norms;
    norms.offsets.assign(m_layout.entries.size(), FeatureNorms::kNone);
    for (size_t i = 0; i < m_layout.entries.size(); ++i) {
        if (m_layout.entries[i].role != ParamRole::NormWeight) continue;
        norms.offsets[i] = norms.total;
        norms.total += kStateVectors * m_layout.entries[i].count;
    }
    norms.buffer = m_backend->allocate(std::max<size_t>(norms.total, 1));
}

FeatureNormState Model::feature_state(int entry) const {
    const size_t offset = m_feature_norms.offsets.at(static_cast<size_t>(entry));
    if (offset == FeatureNorms::kNone)
        throw std::logic_error("feature-norm state of an entry that is no gain");
    const size_t d = m_layout.entries[entry].count;
    float* base = m_feature_norms.buffer + offset;
    return {base,
            base + d,
            base + 2 * d,
            base + 3 * d,
            base + 4 * d,
            static_cast<float>(m_config.bn_momentum),
            static_cast<float>(m_config.norm_eps)};
}

// PowerNorm's first training pass after a reset (a new model, a live switch to it) first sets psi^2 to
// its batch's quadratic mean (momentum 1), then normalises with it: psi^2 = 1 would divide a stream of
// another scale by 1 (a live switch at step 50 diverged at once). The authors' code starts its running
// average the same way; Algorithm 1 leaves psi_0 open.
void Model::apply_feature_norm(const NormIndex& norm, float* y, const float* x, int n) {
    const FeatureNormState state = feature_state(norm.weight);
    const float* w = entry_ptr(norm.weight);
    const float* b = entry_ptr(norm.bias);
    FeatureStatistics mode = m_feature_norms.mode;
    if (m_config.norm_type == NormType::PowerNorm && mode == FeatureStatistics::BatchUpdating &&
        m_feature_norms.seed_pending) {
        FeatureNormState seed = state;
        seed.momentum = 1.0f;
        m_backend->feature_norm_forward(m_config.norm_type, y, x, w, b, seed, mode, n, m_config.d_model);
        mode = FeatureStatistics::Batch;  // psi^2 is the batch's now: normalise with it, move it no further
    }
    m_backend->feature_norm_forward(m_config.norm_type, y, x, w, b, state, mode, n, m_config.d_model);
}

void Model::reset_feature_norms() {
    for (size_t i = 0; i < m_feature_norms.offsets.size(); ++i) {
        if (m_feature_norms.offsets[i] == FeatureNorms::kNone) continue;
        const FeatureNormState state = feature_state(static_cast<int>(i));
        const size_t d = m_layout.entries[i].count;
        m_backend->fill(state.running_mean, 0.0f, d);
        m_backend->fill(state.running_var, 1.0f, d);
        m_backend->fill(state.nu, 0.0f, d);
    }
    m_feature_norms.seed_pending = true;
}

void Model::measure_feature_norm_gaps() {
    std::vector<double>& gaps = m_stats.sublayers.norm_stat_gap;
    gaps.assign(m_sublayers.size(), kNotRecorded);
    if (m_config.norm_type != NormType::BatchNorm || m_feature_norms.mode == FeatureStatistics::Running)
        return;
    const size_t d = static_cast<size_t>(m_config.d_model);
    std::vector<float>& host = m_telemetry.feature_state_host;
    host.resize(5 * d);
    const double eps = m_config.norm_eps;
    for (const SublayerStep& step : m_plan) {
        if (step.placement != NormPlacement::Post && !has_input_norm(step.placement)) continue;
        const FeatureNormState state = feature_state(input_norm_of(block_index(step), step.kind).weight);
        m_backend->download(host.data(), state.running_mean, host.size());  // the five vectors in a row
        const float *running_mean = host.data(), *running_var = running_mean + d, *mean = running_var + 2 * d,
                    *rstd = mean + d;
        double sum = 0.0;
        for (size_t c = 0; c < d; ++c) {
            const double sigma_running = std::sqrt(running_var[c] + eps), sigma_batch = 1.0 / rstd[c];
            const double shift = mean[c] - running_mean[c], spread = sigma_batch - sigma_running;
            sum += (shift * shift + spread * spread) / (sigma_running * sigma_running);
        }
        gaps[static_cast<size_t>(step.slot)] = std::sqrt(sum / static_cast<double>(d));
    }
}

std::vector<Model::StateBuffer> Model::feature_norm_buffers() const {
    std::vector<StateBuffer> buffers;
    if (!is_feature_norm(m_config.norm_type)) return buffers;
    const bool batch_norm = m_config.norm_type == NormType::BatchNorm;
    for (size_t i = 0; i < m_feature_norms.offsets.size(); ++i) {
        if (m_feature_norms.offsets[i] == FeatureNorms::kNone || !m_active[i]) continue;
        const ParamEntry& gain = m_layout.entries[i];
        const std::string norm = gain.name.substr(0, gain.name.rfind('.'));  // "blocks.0.norm1"
        const auto count = static_cast<int64_t>(gain.count);
        const FeatureNormState state = feature_state(static_cast<int>(i));
        if (batch_norm) {
            buffers.push_back({norm + ".running_mean", count, state.running_mean});
            buffers.push_back({norm + ".running_var", count, state.running_var});
        } else {
            buffers.push_back({norm + ".running_phi", count, state.running_var});
            buffers.push_back({norm + ".nu", count, state.nu});
        }
    }
    return buffers;
}

}  // namespace normlab
