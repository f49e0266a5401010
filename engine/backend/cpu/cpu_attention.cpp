// Multi-head attention on the CPU (causal self-attention, an encoder's bidirectional self-attention and
// cross-attention alike): one (batch, head) pair per OpenMP work item, Eigen products on strided views
// of the q, k, v sources. probs keeps softmax(q k^T / sqrt(hd)) over each query's allowed keys.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "engine/backend/cpu/attention_heads.h"
#include "engine/backend/cpu/cpu_reference_backend.h"

namespace normlab {

void CpuReferenceBackend::attention_forward(float* out, float* probs, const AttentionInputs& in,
                                            const AttentionShape& shape, AttentionStatsRef stats) {
    const int seq = shape.seq;
    const int pairs = shape.batch * shape.heads;
    const float scale = shape.scale();
    std::vector<double> entropy_per_pair(pairs, 0.0);
    std::vector<float> max_per_pair(pairs, -std::numeric_limits<float>::infinity());

#pragma omp parallel for schedule(static)
    for (int pair = 0; pair < pairs; ++pair) {
        const AttentionHead at(pair, shape);
        const auto q = at.rows<ConstStridedView>(in.q, in.q_stride);
        const auto k = at.rows<ConstStridedView>(in.k, in.kv_stride);
        const auto v = at.rows<ConstStridedView>(in.v, in.kv_stride);
        MatrixView p(probs + static_cast<size_t>(pair) * seq * seq, seq, seq);
        p.noalias() = (q * k.transpose()) * scale;

        double entropy = 0.0;
        float largest = -std::numeric_limits<float>::infinity();
        for (int t = 0; t < seq; ++t) {
            const int limit = shape.key_limit(t);
            float* row = p.data() + static_cast<size_t>(t) * seq;
            float row_max = row[0];
            for (int j = 1; j < limit; ++j) row_max = std::max(row_max, row[j]);
            largest = std::max(largest, row_max);
            double total = 0.0;
            for (int j = 0; j < limit; ++j) {
                row[j] = std::exp(row[j] - row_max);
                total += row[j];
            }
            const float inverse = static_cast<float>(1.0 / total);
            for (int j = 0; j < limit; ++j) {
                row[j] *= inverse;
                if (row[j] > 0.0f) entropy -= row[j] * std::log(static_cast<double>(row[j]));
            }
            for (int j = limit; j < seq; ++j) row[j] = 0.0f;
        }
        entropy_per_pair[pair] = entropy;
        max_per_pair[pair] = largest;

        auto o = at.output<StridedView>(out);
        o.noalias() = p * v;
    }

    if (stats.entropy_sum) {
        double entropy = 0.0;
        for (double value : entropy_per_pair) entropy += value;
        *stats.entropy_sum = static_cast<float>(entropy);
    }
    if (stats.max_logit) {
        std::fill(stats.max_logit, stats.max_logit + shape.heads, -std::numeric_limits<float>::infinity());
        for (int pair = 0; pair < pairs; ++pair) {
            float& head_max = stats.max_logit[pair % shape.heads];  // pair = batch row x heads + head
            head_max = std::max(head_max, max_per_pair[pair]);
        }
    }
}

void CpuReferenceBackend::attention_backward(const AttentionGrads& grads, const float* dout,
                                             const AttentionInputs& in, const float* probs,
                                             const AttentionShape& shape) {
    const int seq = shape.seq;
    const int pairs = shape.batch * shape.heads;
    const float scale = shape.scale();

#pragma omp parallel
    {
        RowMatrix grad_scores(seq, seq);
#pragma omp for schedule(static)
        for (int pair = 0; pair < pairs; ++pair) {
            const AttentionHead at(pair, shape);
            const auto q = at.rows<ConstStridedView>(in.q, in.q_stride);
            const auto k = at.rows<ConstStridedView>(in.k, in.kv_stride);
            const auto v = at.rows<ConstStridedView>(in.v, in.kv_stride);
            const auto grad_o = at.output<ConstStridedView>(dout);
            ConstMatrixView p(probs + static_cast<size_t>(pair) * seq * seq, seq, seq);
            auto grad_q = at.rows<StridedView>(grads.q, grads.q_stride);
            auto grad_k = at.rows<StridedView>(grads.k, grads.kv_stride);
            auto grad_v = at.rows<StridedView>(grads.v, grads.kv_stride);

            grad_v.noalias() = p.transpose() * grad_o;
            grad_scores.noalias() = grad_o * v.transpose();  // dP
            for (int t = 0; t < seq; ++t) {
                const int limit = shape.key_limit(t);
                float* row = grad_scores.data() + static_cast<size_t>(t) * seq;
                const float* prob_row = p.data() + static_cast<size_t>(t) * seq;
                double weighted = 0.0;
                for (int j = 0; j < limit; ++j) weighted += static_cast<double>(row[j]) * prob_row[j];
                for (int j = 0; j < limit; ++j)
                    row[j] = prob_row[j] * (row[j] - static_cast<float>(weighted)) * scale;
                for (int j = limit; j < seq; ++j) row[j] = 0.0f;
            }
            grad_q.noalias() = grad_scores * k;
            grad_k.noalias() = grad_scores.transpose() * q;
        }
    }
}

}  // namespace normlab
