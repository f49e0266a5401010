// Fast multi-head attention: (batch, head) pairs split statically across threads. Causal calls use only
// the lower triangle (q k^T into the triangle, triangular p v, and the same in backward, about half the
// flops); bidirectional ones (an encoder, cross-attention) full products with the masked keys zeroed.
// Softmax rows with Eigen's vectorised exp; row entropies only on telemetry steps, as
// log Z - sum p (s - max) (no log per element, one exp). Scratch comes from the workspace.
#include <cmath>
#include <limits>

#include "engine/backend/cpu/attention_heads.h"
#include "engine/backend/cpu/cpu_backend.h"
#include "engine/backend/cpu/cpu_parallel.h"

namespace normlab {

namespace {
using ShiftedRow = Eigen::Map<Eigen::Array<float, 1, Eigen::Dynamic>>;
}  // namespace

void CpuBackend::attention_forward(float* out, float* probs, const AttentionInputs& in,
                                   const AttentionShape& shape, AttentionStatsRef stats) {
    const int seq = shape.seq;
    const int pairs = shape.batch * shape.heads;
    const float scale = 1.0f / std::sqrt(static_cast<float>(shape.head_dim));
    const bool want_stats = stats.entropy_sum || stats.max_logit;
    double* pair_stats = scratch_doubles(2 * static_cast<size_t>(pairs));  // entropy, largest logit
    const int64_t work = static_cast<int64_t>(pairs) * seq * seq * shape.head_dim;
    // per thread: one row of shifted logits, so that each probability takes one exp
    float* thread_logits = want_stats ? scratch_floats(static_cast<size_t>(m_threads) * seq) : nullptr;

    parallel_ranges(m_pool, pairs, work, 1, [&](int, Range range) {
        float* shifted = want_stats ? thread_logits + TaskPool::slot() * seq : nullptr;
        for (int pair = static_cast<int>(range.begin); pair < range.end; ++pair) {
            const AttentionHead at(pair, shape);
            const auto q = at.rows<ConstStridedView>(in.q, in.q_stride);
            const auto k = at.rows<ConstStridedView>(in.k, in.kv_stride);
            const auto v = at.rows<ConstStridedView>(in.v, in.kv_stride);
            MatrixView p(probs + static_cast<size_t>(pair) * seq * seq, seq, seq);
            if (shape.causal) {
                p.setZero();
                p.triangularView<Eigen::Lower>() += scale * q * k.transpose();
            } else {
                p.noalias() = scale * q * k.transpose();
            }

            double entropy = 0.0;
            float largest = -std::numeric_limits<float>::infinity();
            for (int t = 0; t < seq; ++t) {
                const int limit = shape.key_limit(t);
                auto row = p.row(t).head(limit).array();
                const float row_max = row.maxCoeff();
                largest = std::max(largest, row_max);
                row -= row_max;
                if (want_stats) ShiftedRow(shifted, limit) = row;
                row = row.exp();
                const float total = row.sum();
                if (want_stats) {
                    const double weighted = (row * ShiftedRow(shifted, limit)).sum();
                    entropy += std::log(static_cast<double>(total)) - weighted / total;
                }
                row *= 1.0f / total;
                // masked keys to zero (a causal row's upper part already is, from setZero)
                if (!shape.causal || limit < t + 1) p.row(t).tail(seq - limit).setZero();
            }
            pair_stats[2 * pair] = entropy;
            pair_stats[2 * pair + 1] = largest;

            auto o = at.output<StridedView>(out);
            if (shape.causal) {
                o.noalias() = p.triangularView<Eigen::Lower>() * v;
            } else {
                o.noalias() = p * v;
            }
        }
    });

    if (stats.entropy_sum) {
        double entropy = 0.0;
        for (int pair = 0; pair < pairs; ++pair) entropy += pair_stats[2 * pair];
        *stats.entropy_sum = static_cast<float>(entropy);
    }
    if (stats.max_logit) {
        float largest = -std::numeric_limits<float>::infinity();
        for (int pair = 0; pair < pairs; ++pair)
            largest = std::max(largest, static_cast<float>(pair_stats[2 * pair + 1]));
        *stats.max_logit = largest;
    }
}

void CpuBackend::attention_backward(const AttentionGrads& grads, const float* dout, const AttentionInputs& in,
                                    const float* probs, const AttentionShape& shape) {
    const int seq = shape.seq;
    const int pairs = shape.batch * shape.heads;
    const float scale = 1.0f / std::sqrt(static_cast<float>(shape.head_dim));
    const size_t square = static_cast<size_t>(seq) * seq;
    float* thread_scores = scratch_floats(static_cast<size_t>(m_threads) * square);
    const int64_t work = static_cast<int64_t>(pairs) * seq * seq * shape.head_dim * 2;

    parallel_ranges(m_pool, pairs, work, 1, [&](int, Range range) {
        MatrixView grad_scores(thread_scores + TaskPool::slot() * square, seq, seq);
        for (int pair = static_cast<int>(range.begin); pair < range.end; ++pair) {
            const AttentionHead at(pair, shape);
            const auto q = at.rows<ConstStridedView>(in.q, in.q_stride);
            const auto k = at.rows<ConstStridedView>(in.k, in.kv_stride);
            const auto v = at.rows<ConstStridedView>(in.v, in.kv_stride);
            const auto grad_o = at.output<ConstStridedView>(dout);
            ConstMatrixView p(probs + static_cast<size_t>(pair) * square, seq, seq);
            auto grad_q = at.rows<StridedView>(grads.q, grads.q_stride);
            auto grad_k = at.rows<StridedView>(grads.k, grads.kv_stride);
            auto grad_v = at.rows<StridedView>(grads.v, grads.kv_stride);

            if (shape.causal) {
                grad_v.noalias() = p.transpose().triangularView<Eigen::Upper>() * grad_o;
                grad_scores.setZero();
                grad_scores.triangularView<Eigen::Lower>() += grad_o * v.transpose();  // dP
            } else {
                grad_v.noalias() = p.transpose() * grad_o;
                grad_scores.noalias() = grad_o * v.transpose();  // dP
            }
            for (int t = 0; t < seq; ++t) {
                const int limit = shape.key_limit(t);
                auto row = grad_scores.row(t).head(limit).array();
                const auto prob_row = p.row(t).head(limit).array();
                const float weighted = (row * prob_row).sum();
                row = prob_row * (row - weighted) * scale;
                grad_scores.row(t).tail(seq - limit).setZero();
            }
            if (shape.causal) {
                grad_q.noalias() = grad_scores.triangularView<Eigen::Lower>() * k;
                grad_k.noalias() = grad_scores.transpose().triangularView<Eigen::Upper>() * q;
            } else {
                grad_q.noalias() = grad_scores * k;
                grad_k.noalias() = grad_scores.transpose() * q;
            }
        }
    });
}

}  // namespace normlab
