// Parameter initialisation (Xavier normal / uniform, GPT-2, theory mode, DeepNorm beta, ReZero, Admin),
// live rewiring that keeps parameters, Admin's profiled omegas, and host access to named entries.
#include <algorithm>
#include <cmath>

#include "engine/core/errors.h"
#include "engine/core/rng.h"
#include "engine/model/constants.h"
#include "engine/model/model.h"
#include "engine/model/parametrization.h"

namespace normlab {

namespace {
bool ends_with(const std::string& text, const std::string& suffix) {
    return text.size() >= suffix.size() &&
           text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Packed attention weights whose last rows are V: self-attention's qkv and cross-attention's kv.
bool ends_with_value_rows(const std::string& name) {
    return ends_with(name, "attn.qkv.weight") || ends_with(name, "cross_attn.kv.weight");
}

// Which parameters DeepNorm's beta scales: attention V (the last d rows of qkv / kv), output
// projections (self- and cross-attention), FFN (a gated one's gate too).
bool deepnorm_scaled(const std::string& name) {
    return ends_with(name, "attn.out.weight") || ends_with(name, "ffn.fc1.weight") ||
           ends_with(name, "ffn.fc2.weight") || ends_with(name, "ffn.gate.weight");
}

double variance(const std::vector<float>& values) {
    double mean = 0.0;
    for (float v : values) mean += v;
    mean /= static_cast<double>(values.size());
    double total = 0.0;
    for (float v : values) total += (v - mean) * (v - mean);
    return total / static_cast<double>(values.size());
}

// Draws an entry's values from the model's init scheme, from the entry's own random stream.
struct InitDraw {
    const ModelConfig& config;
    Rng& rng;
    std::vector<float>& values;

    // Rows [row_begin, row_end) of a matrix with `columns` columns, where fan_in / fan_out are those of
    // the (sub-)matrix the rows belong to.
    void rows(size_t row_begin, size_t row_end, size_t columns, double fan_in, double fan_out,
              double gpt2_std, double gain) const {
        for (size_t i = row_begin * columns; i < row_end * columns; ++i) {
            double value;
            if (config.init == InitScheme::XavierUniform) {
                const double bound = std::sqrt(6.0 / (fan_in + fan_out));
                value = (2.0 * rng.uniform() - 1.0) * bound;
            } else if (config.init == InitScheme::Gpt2) {
                value = rng.normal() * gpt2_std;
            } else {
                value = rng.normal() * std::sqrt(2.0 / (fan_in + fan_out));
            }
            values[i] = static_cast<float>(value * gain);
        }
    }
};

void draw_embedding(const InitDraw& draw, const ParamEntry& entry, bool position) {
    const ModelConfig& c = draw.config;
    if (c.theory_mode || c.embedding_std > 0.0) {
        // Theory mode: token + position embeddings with unit variance per coordinate in total,
        // so E||x_0||^2 = d.
        const double std = c.embedding_std > 0.0 ? c.embedding_std : std::sqrt(0.5);
        for (float& v : draw.values) v = static_cast<float>(draw.rng.normal() * std);
        return;
    }
    const size_t rows = static_cast<size_t>(entry.shape[0]);
    draw.rows(0, rows, c.d_model, static_cast<double>(rows), embedding_init_width(c), position ? 0.01 : 0.02,
              1.0);
}

// `beta`: DeepNorm's for the entry's stack (else 1); `gain` the parametrization's (hidden_init_gain).
void draw_matrix(const InitDraw& draw, const ParamEntry& entry, double beta, double gain) {
    const ModelConfig& c = draw.config;
    const int d = c.d_model;
    const size_t rows = static_cast<size_t>(entry.shape[0]);
    const size_t columns = static_cast<size_t>(entry.shape[1]);
    if (ends_with_value_rows(entry.name)) {
        // q, k and v (cross-attention: k and v) are initialised as separate matrices of d rows (k and v of
        // self-attention: key_value_width rows, fewer with grouped-query attention)
        const bool cross = ends_with(entry.name, "cross_attn.kv.weight");
        const size_t kv = cross ? static_cast<size_t>(d) : static_cast<size_t>(key_value_width(c));
        const size_t k_row = cross ? 0 : static_cast<size_t>(d);
        const size_t bounds[4] = {0, k_row, k_row + kv, k_row + 2 * kv};
        for (int part = cross ? 1 : 0; part < 3; ++part) {
            const bool value = part == 2;
            if (c.theory_mode && !value) continue;  // Xiong et al.: W_Q = W_K = 0
            const size_t begin = bounds[part], end = bounds[part + 1];
            draw.rows(begin, end, columns, d, static_cast<double>(end - begin), 0.02,
                      (value ? beta : 1.0) * gain);
        }
        return;
    }
    if (c.theory_mode && ends_with(entry.name, "cross_attn.q.weight"))
        return;  // W_Q = 0 in cross-attention too: uniform attention over the memory
    const double gpt2_residual_std = 0.02 / std::sqrt(static_cast<double>(residual_sublayers(c)));
    const bool residual_output =
        ends_with(entry.name, "attn.out.weight") || ends_with(entry.name, "fc2.weight");
    draw.rows(0, rows, columns, static_cast<double>(columns), static_cast<double>(rows),
              residual_output ? gpt2_residual_std : 0.02, (deepnorm_scaled(entry.name) ? beta : 1.0) * gain);
}
}  // namespace

void Model::initialize_entry(int entry_index, uint64_t seed) {
    const ParamEntry& entry = m_layout.entries[entry_index];
    Rng rng(mix_seed(seed, static_cast<uint64_t>(entry_index)));
    std::vector<float> values(entry.count, 0.0f);
    const ModelConfig& c = m_config;
    const InitDraw draw{c, rng, values};
    switch (entry.role) {
        case ParamRole::Embedding:
            draw_embedding(draw, entry, entry_index == m_layout.wpe);
            break;
        case ParamRole::Matrix: {
            const bool encoder = entry.encoder_block >= 0;
            const double gain =
                width_class(m_layout, entry_index) == WidthClass::Hidden ? hidden_init_gain(c) : 1.0;
            draw_matrix(draw, entry,
                        c.residual == Residual::DeepNorm ? effective_deepnorm_beta(c, encoder) : 1.0, gain);
            break;
        }
        case ParamRole::NormWeight:
        case ParamRole::QkNormWeight:
            for (float& v : values) v = 1.0f;
            break;
        case ParamRole::NormAlpha:
            values[0] = static_cast<float>(c.dyt_alpha);
            break;
        case ParamRole::AdminOmega:
            for (float& v : values) v = static_cast<float>(admin_closed_omega(residual_sublayers(c)));
            break;
        case ParamRole::DenseWeight:  // the identity: the block's own output, as without DenseFormer
            values.back() = 1.0f;
            break;
        case ParamRole::Bias:
        case ParamRole::NormBias:
        case ParamRole::ReZeroAlpha:
        case ParamRole::AttnResQuery:  // zero: every source weighs the same at init (Kimi Team 2026)
            break;
    }
    write_entry(entry_index, values);
}

void Model::initialize(uint64_t seed) {
    m_backend->fill(m_params, 0.0f, m_layout.total);
    for (size_t i = 0; i < m_layout.entries.size(); ++i) initialize_entry(static_cast<int>(i), seed);
    reset_feature_norms();
}

std::vector<int> Model::reinitialize_deepnorm_beta(uint64_t seed) {
    const Residual saved = m_config.residual;
    m_config.residual = Residual::DeepNorm;  // beta applies whatever the current shortcut scheme
    std::vector<int> touched;
    for (size_t i = 0; i < m_layout.entries.size(); ++i) {
        const std::string& name = m_layout.entries[i].name;
        if (deepnorm_scaled(name)) {
            initialize_entry(static_cast<int>(i), seed);
            touched.push_back(static_cast<int>(i));
        } else if (ends_with_value_rows(name)) {
            // Only V (the last d rows) is re-drawn; Q and K keep their trained values.
            std::vector<float> kept = read_entry(static_cast<int>(i));
            initialize_entry(static_cast<int>(i), seed);
            std::vector<float> fresh = read_entry(static_cast<int>(i));
            const size_t value_begin =
                fresh.size() - static_cast<size_t>(m_config.d_model) * m_config.d_model;
            std::copy(fresh.begin() + static_cast<long>(value_begin), fresh.end(),
                      kept.begin() + static_cast<long>(value_begin));
            write_entry(static_cast<int>(i), kept);
            touched.push_back(static_cast<int>(i));
        }
    }
    m_config.residual = saved;
    return touched;
}

std::vector<int> Model::set_wiring(const ModelConfig& wiring) {
    const std::vector<bool> before = m_active;
    m_config.norm_placement = wiring.norm_placement;
    if (wiring.norm_type != m_config.norm_type && is_feature_norm(wiring.norm_type))
        reset_feature_norms();  // a BatchNorm or PowerNorm switched on starts from fresh running statistics
    m_config.norm_type = wiring.norm_type;
    for (const Residual with_buffers :
         {Residual::B2t, Residual::ResiDual, Residual::DenseFormer, Residual::AttnRes}) {
        if ((wiring.residual == with_buffers) != (m_config.residual == with_buffers)) {
            m_config.residual = wiring.residual;
            release_activations();  // B2T's, ResiDual's, DenseFormer's and AttnRes' buffers come and go
        }
    }
    m_config.residual = wiring.residual;
    m_config.deepnorm_alpha = wiring.deepnorm_alpha;
    m_config.deepnorm_beta = wiring.deepnorm_beta;
    if (wiring.qk_norm != m_config.qk_norm) {
        const bool buffers_change = (wiring.qk_norm == QkNorm::None) != (m_config.qk_norm == QkNorm::None);
        m_config.qk_norm = wiring.qk_norm;
        if (buffers_change) release_activations();  // QK-norm's buffers come and go with it
    }
    refresh_active();
    build_plan();  // each sub-layer's placement (Mix-LN's depend on the depth)
    std::fill(m_frozen_rstd.begin(), m_frozen_rstd.end(), 0.0f);  // the norms may have changed
    std::vector<int> activated;
    for (size_t i = 0; i < m_active.size(); ++i) {
        if (m_active[i] && !before[i]) {
            const ParamRole role = m_layout.entries[i].role;
            const bool fresh_value =
                role != ParamRole::Matrix && role != ParamRole::Bias && role != ParamRole::Embedding;
            if (fresh_value) initialize_entry(static_cast<int>(i), 0);
            activated.push_back(static_cast<int>(i));
        }
    }
    return activated;
}

void Model::profile_admin(const Batch& batch) {
    if (m_config.residual != Residual::Admin) return;
    // Walk the sub-layers in forward order (the encoder's, then the decoder's): omega_k = r, then
    // r <- sqrt(Var[x omega_k] + Var[F_k(x)]), r_0 = 1. The decoder starts again from the embeddings.
    ensure_activations(batch.batch, batch.seq);
    m_source_len = source_length(batch);
    const int n = batch.batch * batch.seq;
    const int d = m_config.d_model;
    const size_t nd = static_cast<size_t>(n) * d;
    m_backend->upload_ints(m_tokens, batch.inputs.data(), n);
    m_backend->embedding_forward(m_embedded, m_tokens, entry_ptr(m_layout.wte), entry_ptr(m_layout.wpe),
                                 batch.batch, batch.seq, d);
    const float* x = m_embedded;
    double r = 1.0;
    std::vector<float> host_x(nd);
    std::vector<float> host_f(nd);
    for (size_t i = 0; i < m_plan.size(); ++i) {
        const SublayerStep& step = m_plan[i];
        if (static_cast<int>(i) == m_encoder_steps && m_encoder_steps > 0) {
            finish_memory(batch.batch, batch.seq);
            x = m_embedded;
            r = 1.0;
        }
        const BlockIndex& index = block_index(step);
        const bool cross = step.kind == kCrossAttentionSublayer;
        const int omega_entry = cross ? index.cross_admin_omega : index.admin_omega;
        std::vector<float> omega = read_entry(omega_entry);
        omega[cross ? 0 : step.kind] = static_cast<float>(r);
        write_entry(omega_entry, omega);
        forward_sublayer(step, x, batch.batch, batch.seq, false);
        m_backend->download(host_x.data(), x, nd);
        m_backend->download(host_f.data(), added_branch(step), nd);
        r = std::sqrt(variance(host_x) * r * r + variance(host_f));
        x = sublayer_output(step);
    }
}

std::vector<float> Model::read_entry(int entry, bool gradient) {
    const ParamEntry& e = m_layout.entries.at(entry);
    std::vector<float> values(e.count);
    m_backend->download(values.data(), (gradient ? m_grads : m_params) + e.offset, e.count);
    return values;
}

void Model::write_entry(int entry, const std::vector<float>& values) {
    const ParamEntry& e = m_layout.entries.at(entry);
    if (values.size() != e.count) {
        throw InputError("tensor '" + e.name + "' expects " + std::to_string(e.count) + " values, got " +
                         std::to_string(values.size()));
    }
    m_backend->upload(m_params + e.offset, values.data(), e.count);
}

}  // namespace normlab
