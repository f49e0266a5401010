// Fast multi-head attention: (batch, head) pairs split statically across threads; every product goes
// through the backend's GEMM (cpu_gemm.h) on the pair's strided rows, over the keys any query may see
// (a causal call computes the whole square and the softmax keeps the triangle: at the models' head sizes
// the register kernel's full square is cheaper than a general triangular product). Softmax rows with
// Eigen's vectorised exp; row entropies only on telemetry steps, as log Z - sum p (s - max) (no log per
// element, one exp). Scratch comes from the workspace.
#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/backend/cpu/attention_heads.h"
#include "engine/backend/cpu/cpu_backend.h"
#include "engine/backend/cpu/cpu_gemm.h"
#include "engine/backend/cpu/cpu_parallel.h"

namespace normlab {

namespace {
using ShiftedRow = Eigen::Map<Eigen::Array<float, 1, Eigen::Dynamic>>;
using RowSums = Eigen::Map<Eigen::Array<float, Eigen::Dynamic, 1>>;  // one value per query row
constexpr float kMaskedShiftedLogit = -80.0f;  // exp(-80) is a normal float: no slow denormal path

// Where one (batch, head) pair's rows start in a strided source, as a GEMM operand.
GemmOperand head_rows(const float* base, int stride, const AttentionHead& at, bool transposed = false) {
    return {base + at.row0 * stride + at.column, stride, transposed};
}

// Zeroes rows [from, seq) of a pair's head columns (keys past a memory's valid length get no gradient).
void zero_head_rows(float* base, int stride, const AttentionHead& at, int from) {
    for (int j = from; j < at.seq; ++j) {
        float* row = base + (at.row0 + j) * stride + at.column;
        std::fill(row, row + at.head_dim, 0.0f);
    }
}
}  // namespace

void CpuBackend::attention_forward(float* out, float* probs, const AttentionInputs& in,
                                   const AttentionShape& shape, AttentionStatsRef stats) {
    const int seq = shape.seq;
    const int pairs = shape.batch * shape.heads;
    const float scale = shape.scale();
    const bool want_stats = stats.entropy_sum || stats.max_logit;
    double* pair_stats = scratch_doubles(2 * static_cast<size_t>(pairs));  // entropy, largest logit
    const int64_t work = static_cast<int64_t>(pairs) * seq * seq * shape.head_dim;
    // per thread: room to pack k^T (see cpu_gemm.h), one row of shifted logits (so that each
    // probability takes one exp), and each row's exp total and weighted sum (their logs in one pass)
    const size_t packing =
        packed_size(std::max(seq, shape.head_dim), std::max(seq, shape.head_dim), m_other_kernel);
    const size_t per_thread = packing + 3 * static_cast<size_t>(seq);
    float* thread_scratch = scratch_floats(static_cast<size_t>(m_threads) * per_thread);

    parallel_ranges(m_pool, pairs, work, 1, [&](int, Range range) {
        float* pack = thread_scratch + TaskPool::slot() * per_thread;
        float* shifted = want_stats ? pack + packing : nullptr;
        RowSums totals(pack + packing + seq, seq), weighted(pack + packing + 2 * seq, seq);
        for (int pair = static_cast<int>(range.begin); pair < range.end; ++pair) {
            const AttentionHead at(pair, shape);
            const int keys = shape.key_limit(seq - 1);  // the most keys any query sees
            float* scores = probs + static_cast<size_t>(pair) * seq * seq;
            gemm(scores, seq, head_rows(in.q, in.q_stride, at), head_rows(in.k, in.kv_stride, at, true), seq,
                 keys, shape.head_dim, false, pack, m_other_kernel);
            MatrixView p(scores, seq, seq);

            float largest = -std::numeric_limits<float>::infinity();
            for (int t = 0; t < seq; ++t) {
                const int limit = shape.key_limit(t);
                auto whole = p.row(t).array();  // the visible keys, then the masked ones
                auto row = whole.head(limit);
                row *= scale;
                const float row_max = row.maxCoeff();
                largest = std::max(largest, row_max);
                row -= row_max;
                if (want_stats) ShiftedRow(shifted, limit) = row;
                // exp over the whole row in vector steps (a row cut at `limit` would leave a scalar
                // tail); the masked keys' stand-in logit keeps their exp a normal float, then they get 0
                whole.tail(seq - limit).setConstant(kMaskedShiftedLogit);
                whole = whole.exp();
                whole.tail(seq - limit).setZero();
                const float total = whole.sum();
                if (want_stats) {
                    totals[t] = total;
                    weighted[t] = (row * ShiftedRow(shifted, limit)).sum();
                }
                whole *= 1.0f / total;
            }
            // each row's entropy is log Z - sum p (s - max)
            pair_stats[2 * pair] = want_stats ? (totals.log() - weighted / totals).cast<double>().sum() : 0.0;
            pair_stats[2 * pair + 1] = largest;

            gemm(out + at.row0 * at.d + at.column, at.d, {scores, seq}, head_rows(in.v, in.kv_stride, at),
                 seq, shape.head_dim, keys, false, pack, m_other_kernel);
        }
    });

    if (stats.entropy_sum) {
        double entropy = 0.0;
        for (int pair = 0; pair < pairs; ++pair) entropy += pair_stats[2 * pair];
        *stats.entropy_sum = static_cast<float>(entropy);
    }
    if (stats.max_logit) {
        std::fill(stats.max_logit, stats.max_logit + shape.heads, -std::numeric_limits<float>::infinity());
        for (int pair = 0; pair < pairs; ++pair) {
            float& head_max = stats.max_logit[pair % shape.heads];  // pair = batch row x heads + head
            head_max = std::max(head_max, static_cast<float>(pair_stats[2 * pair + 1]));
        }
    }
}

void CpuBackend::attention_backward(const AttentionGrads& grads, const float* dout, const AttentionInputs& in,
                                    const float* probs, const AttentionShape& shape) {
    const int seq = shape.seq;
    const int pairs = shape.batch * shape.heads;
    const float scale = shape.scale();
    const size_t square = static_cast<size_t>(seq) * seq;
    // per thread: dP / dS, and room to pack v^T (see cpu_gemm.h)
    const size_t packing =
        packed_size(std::max(seq, shape.head_dim), std::max(seq, shape.head_dim), m_other_kernel);
    const size_t per_thread = square + packing;
    float* thread_scratch = scratch_floats(static_cast<size_t>(m_threads) * per_thread);
    const int64_t work = static_cast<int64_t>(pairs) * seq * seq * shape.head_dim * 2;

    parallel_ranges(m_pool, pairs, work, 1, [&](int, Range range) {
        float* mine = thread_scratch + TaskPool::slot() * per_thread;
        MatrixView grad_scores(mine, seq, seq);
        float* pack = mine + square;
        for (int pair = static_cast<int>(range.begin); pair < range.end; ++pair) {
            const AttentionHead at(pair, shape);
            const int keys = shape.key_limit(seq - 1);
            const int head_dim = shape.head_dim;
            const float* prob_rows = probs + static_cast<size_t>(pair) * square;
            ConstMatrixView p(prob_rows, seq, seq);
            const GemmOperand grad_o = head_rows(dout, at.d, at);
            // dV = P^T dO over the keys; dP = dO V^T
            gemm(grads.v + at.row0 * grads.kv_stride + at.column, grads.kv_stride, {prob_rows, seq, true},
                 grad_o, keys, head_dim, seq, false, pack, m_other_kernel);
            zero_head_rows(grads.v, grads.kv_stride, at, keys);
            gemm(grad_scores.data(), seq, grad_o, head_rows(in.v, in.kv_stride, at, true), seq, keys,
                 head_dim, false, pack, m_other_kernel);
            for (int t = 0; t < seq; ++t) {
                const int limit = shape.key_limit(t);
                auto row = grad_scores.row(t).head(limit).array();
                const auto prob_row = p.row(t).head(limit).array();
                const float weighted = (row * prob_row).sum();
                row = prob_row * (row - weighted) * scale;
                grad_scores.row(t).tail(seq - limit).setZero();
            }
            // dQ = dS K; dK = dS^T Q over the keys
            gemm(grads.q + at.row0 * grads.q_stride + at.column, grads.q_stride, {grad_scores.data(), seq},
                 head_rows(in.k, in.kv_stride, at), seq, head_dim, keys, false, pack, m_other_kernel);
            gemm(grads.k + at.row0 * grads.kv_stride + at.column, grads.kv_stride,
                 {grad_scores.data(), seq, true}, head_rows(in.q, in.q_stride, at), keys, head_dim, seq,
                 false, pack, m_other_kernel);
            zero_head_rows(grads.k, grads.kv_stride, at, keys);
        }
    });
}

}  // namespace normlab
