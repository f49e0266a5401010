// Causal multi-head self-attention on the CPU: one (batch, head) pair per OpenMP work item, Eigen
// products on strided views of the packed qkv rows. probs keeps softmax(q k^T / sqrt(hd)) for backward.
#include <cmath>
#include <limits>
#include <vector>

#include "engine/backend/cpu/attention_heads.h"
#include "engine/backend/cpu/cpu_reference_backend.h"

namespace normlab {

void CpuReferenceBackend::attention_forward(float* out, float* probs, const float* qkv, int batch, int seq,
                                            int heads, int head_dim, AttentionStatsRef stats) {
    const int pairs = batch * heads;
    const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
    std::vector<double> entropy_per_pair(pairs, 0.0);
    std::vector<float> max_per_pair(pairs, -std::numeric_limits<float>::infinity());

#pragma omp parallel for schedule(static)
    for (int pair = 0; pair < pairs; ++pair) {
        const HeadOffsets at(pair, seq, heads, head_dim);
        const auto q = at.packed<ConstStridedView>(qkv, at.q);
        const auto k = at.packed<ConstStridedView>(qkv, at.k);
        const auto v = at.packed<ConstStridedView>(qkv, at.v);
        MatrixView p(probs + static_cast<size_t>(pair) * seq * seq, seq, seq);
        p.noalias() = (q * k.transpose()) * scale;

        double entropy = 0.0;
        float largest = -std::numeric_limits<float>::infinity();
        for (int t = 0; t < seq; ++t) {
            float* row = p.data() + static_cast<size_t>(t) * seq;
            float row_max = row[0];
            for (int j = 1; j <= t; ++j) row_max = std::max(row_max, row[j]);
            largest = std::max(largest, row_max);
            double total = 0.0;
            for (int j = 0; j <= t; ++j) {
                row[j] = std::exp(row[j] - row_max);
                total += row[j];
            }
            const float inverse = static_cast<float>(1.0 / total);
            for (int j = 0; j <= t; ++j) {
                row[j] *= inverse;
                if (row[j] > 0.0f) entropy -= row[j] * std::log(static_cast<double>(row[j]));
            }
            for (int j = t + 1; j < seq; ++j) row[j] = 0.0f;
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
        float largest = -std::numeric_limits<float>::infinity();
        for (float value : max_per_pair) largest = std::max(largest, value);
        *stats.max_logit = largest;
    }
}

void CpuReferenceBackend::attention_backward(float* dqkv, const float* dout, const float* qkv,
                                             const float* probs, int batch, int seq, int heads,
                                             int head_dim) {
    const int pairs = batch * heads;
    const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));

#pragma omp parallel
    {
        RowMatrix grad_scores(seq, seq);
#pragma omp for schedule(static)
        for (int pair = 0; pair < pairs; ++pair) {
            const HeadOffsets at(pair, seq, heads, head_dim);
            const auto q = at.packed<ConstStridedView>(qkv, at.q);
            const auto k = at.packed<ConstStridedView>(qkv, at.k);
            const auto v = at.packed<ConstStridedView>(qkv, at.v);
            const auto grad_o = at.output<ConstStridedView>(dout);
            ConstMatrixView p(probs + static_cast<size_t>(pair) * seq * seq, seq, seq);
            auto grad_q = at.packed<StridedView>(dqkv, at.q);
            auto grad_k = at.packed<StridedView>(dqkv, at.k);
            auto grad_v = at.packed<StridedView>(dqkv, at.v);

            grad_v.noalias() = p.transpose() * grad_o;
            grad_scores.noalias() = grad_o * v.transpose();  // dP
            for (int t = 0; t < seq; ++t) {
                float* row = grad_scores.data() + static_cast<size_t>(t) * seq;
                const float* prob_row = p.data() + static_cast<size_t>(t) * seq;
                double weighted = 0.0;
                for (int j = 0; j <= t; ++j) weighted += static_cast<double>(row[j]) * prob_row[j];
                for (int j = 0; j <= t; ++j)
                    row[j] = prob_row[j] * (row[j] - static_cast<float>(weighted)) * scale;
                for (int j = t + 1; j < seq; ++j) row[j] = 0.0f;
            }
            grad_q.noalias() = grad_scores * k;
            grad_k.noalias() = grad_scores.transpose() * q;
        }
    }
}

}  // namespace normlab
