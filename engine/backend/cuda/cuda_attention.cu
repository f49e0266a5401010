// Causal multi-head attention on the GPU: q, k, v are rearranged from the packed rows qkv[n, 3d] into
// head-major scratch [3][batch * heads][seq][head_dim] (attention_layout.h), products are strided-batched
// cuBLAS calls (gemm_plans.h; one matrix per (batch, head) pair), and a warp per row does the causal
// softmax and its backward with the CPU reference's arithmetic. Scratch comes from the backend's workspace.
#include <cmath>

#include "engine/backend/cuda/attention_layout.h"
#include "engine/backend/cuda/cuda_backend.h"
#include "engine/backend/cuda/cuda_check.h"
#include "engine/backend/cuda/cuda_device.cuh"
#include "engine/backend/cuda/cuda_gemm.h"

namespace normlab {

namespace {
using cuda::grid_for;
using cuda::kRowsPerBlock;
using cuda::kThreads;
using cuda::kWarp;
using cuda::row_blocks;
using cuda::warp_max;
using cuda::warp_sum;

// heads_major[parts][pairs][seq][hd] <- rows[n, parts * d]
__global__ void pack_heads_kernel(float* heads_major, const float* rows, int parts, HeadShape shape) {
    const size_t count = shape.head_elements() * parts;
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<size_t>(gridDim.x) * blockDim.x) {
        heads_major[head_major_index(i, parts, shape)] = rows[i];
    }
}

// rows[n, parts * d] <- heads_major[parts][pairs][seq][hd] (every element of rows is written)
__global__ void unpack_heads_kernel(float* rows, const float* heads_major, int parts, HeadShape shape) {
    const size_t count = shape.head_elements() * parts;
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<size_t>(gridDim.x) * blockDim.x) {
        rows[i] = heads_major[head_major_index(i, parts, shape)];
    }
}

// Row r = pair * seq + t of probs[pairs, seq, seq] holds scaled logits; becomes softmax over j <= t with
// zeros above the diagonal. Records the row's entropy and largest logit. One warp per row.
__global__ void causal_softmax_kernel(float* probs, double* entropy_rows, float* max_rows, size_t rows,
                                      int seq) {
    const size_t r = blockIdx.x * static_cast<size_t>(kRowsPerBlock) + threadIdx.x / kWarp;
    const int lane = threadIdx.x % kWarp;
    if (r >= rows) return;
    const int t = static_cast<int>(r % seq);
    float* row = probs + r * seq;
    float row_max = -INFINITY;
    for (int j = lane; j <= t; j += kWarp) row_max = fmaxf(row_max, row[j]);
    row_max = warp_max(row_max);
    double total = 0.0;
    for (int j = lane; j <= t; j += kWarp) {
        row[j] = std::exp(row[j] - row_max);
        total += row[j];
    }
    total = warp_sum(total);
    const float inverse = static_cast<float>(1.0 / total);
    double entropy = 0.0;
    for (int j = lane; j <= t; j += kWarp) {
        row[j] *= inverse;
        if (row[j] > 0.0f) entropy -= row[j] * std::log(static_cast<double>(row[j]));
    }
    for (int j = t + 1 + lane; j < seq; j += kWarp) row[j] = 0.0f;
    entropy = warp_sum(entropy);
    if (lane == 0) {
        entropy_rows[r] = entropy;
        max_rows[r] = row_max;
    }
}

// stats = (sum of the rows' entropies, largest row maximum); one block, fixed order.
__global__ void attention_stats_kernel(AttentionStatsRef stats, const double* entropy_rows,
                                       const float* max_rows, size_t rows) {
    __shared__ double shared_sum[kWarp];
    __shared__ float shared_max[kWarp];
    double entropy = 0.0;
    float largest = -INFINITY;
    for (size_t r = threadIdx.x; r < rows; r += blockDim.x) {
        entropy += entropy_rows[r];
        largest = fmaxf(largest, max_rows[r]);
    }
    entropy = cuda::block_sum(entropy, shared_sum);
    largest = cuda::block_max(largest, shared_max);
    if (threadIdx.x == 0) {
        if (stats.entropy_sum) *stats.entropy_sum = static_cast<float>(entropy);
        if (stats.max_logit) *stats.max_logit = largest;
    }
}

// In place on grad[pairs, seq, seq] holding dP: dS = P (dP - sum_j dP P) scale for j <= t, 0 above.
__global__ void causal_softmax_backward_kernel(float* grad, const float* probs, size_t rows, int seq,
                                               float scale) {
    const size_t r = blockIdx.x * static_cast<size_t>(kRowsPerBlock) + threadIdx.x / kWarp;
    const int lane = threadIdx.x % kWarp;
    if (r >= rows) return;
    const int t = static_cast<int>(r % seq);
    float* row = grad + r * seq;
    const float* prob_row = probs + r * seq;
    double weighted = 0.0;
    for (int j = lane; j <= t; j += kWarp) weighted += static_cast<double>(row[j]) * prob_row[j];
    const float weighted_sum = static_cast<float>(warp_sum(weighted));
    for (int j = lane; j <= t; j += kWarp) row[j] = prob_row[j] * (row[j] - weighted_sum) * scale;
    for (int j = t + 1 + lane; j < seq; j += kWarp) row[j] = 0.0f;
}

}  // namespace

void CudaBackend::attention_forward(float* out, float* probs, const float* qkv, int batch, int seq, int heads,
                                    int head_dim, AttentionStatsRef stats) {
    const HeadShape shape{batch, seq, heads, head_dim};
    const size_t nd = shape.head_elements();
    const size_t rows = static_cast<size_t>(shape.pairs()) * seq;  // softmax rows
    if (rows == 0) return;
    const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
    cuda::WorkspaceLayout layout;
    const size_t qkv_at = layout.reserve<float>(3 * nd);     // [3][pairs][seq][hd]
    const size_t output_at = layout.reserve<float>(nd);      // [pairs][seq][hd]
    const size_t entropy_at = layout.reserve<double>(rows);  // per softmax row
    const size_t max_at = layout.reserve<float>(rows);
    void* base = workspace(layout.bytes());
    float* q = layout.at<float>(base, qkv_at);
    float* k = q + nd;
    float* v = q + 2 * nd;
    float* o = layout.at<float>(base, output_at);
    double* entropy_rows = layout.at<double>(base, entropy_at);
    float* max_rows = layout.at<float>(base, max_at);

    pack_heads_kernel<<<grid_for(3 * nd), kThreads, 0, m_stream>>>(q, qkv, 3, shape);
    NORMLAB_CUDA_CHECK_LAUNCH("pack_heads_kernel (qkv)");
    const int pairs = shape.pairs();
    // S_p = scale Q_p K_p^T, written straight into probs
    run_gemm(m_cublas, attention_scores_plan(seq, head_dim), scale, k, q, 0.0f, probs, pairs);
    causal_softmax_kernel<<<row_blocks(rows), kRowsPerBlock * kWarp, 0, m_stream>>>(probs, entropy_rows,
                                                                                    max_rows, rows, seq);
    NORMLAB_CUDA_CHECK_LAUNCH("causal_softmax_kernel");
    if (stats.entropy_sum || stats.max_logit) {
        attention_stats_kernel<<<1, kThreads, 0, m_stream>>>(stats, entropy_rows, max_rows, rows);
        NORMLAB_CUDA_CHECK_LAUNCH("attention_stats_kernel");
    }
    // O_p = P_p V_p
    run_gemm(m_cublas, attention_apply_plan(seq, head_dim), 1.0f, v, probs, 0.0f, o, pairs);
    unpack_heads_kernel<<<grid_for(nd), kThreads, 0, m_stream>>>(out, o, 1, shape);
    NORMLAB_CUDA_CHECK_LAUNCH("unpack_heads_kernel (out)");
}

void CudaBackend::attention_backward(float* dqkv, const float* dout, const float* qkv, const float* probs,
                                     int batch, int seq, int heads, int head_dim) {
    const HeadShape shape{batch, seq, heads, head_dim};
    const size_t nd = shape.head_elements();
    const size_t rows = static_cast<size_t>(shape.pairs()) * seq;
    if (rows == 0) return;
    const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
    cuda::WorkspaceLayout layout;
    const size_t qkv_at = layout.reserve<float>(3 * nd);         // Q, K, V [3][pairs][seq][hd]
    const size_t dout_at = layout.reserve<float>(nd);            // dO [pairs][seq][hd]
    const size_t grads_at = layout.reserve<float>(3 * nd);       // dQ, dK, dV [3][pairs][seq][hd]
    const size_t scores_at = layout.reserve<float>(rows * seq);  // dP, then dS [pairs][seq][seq]
    void* base = workspace(layout.bytes());
    float* q = layout.at<float>(base, qkv_at);
    float* k = q + nd;
    float* v = q + 2 * nd;
    float* grad_o = layout.at<float>(base, dout_at);
    float* grad_q = layout.at<float>(base, grads_at);
    float* grad_k = grad_q + nd;
    float* grad_v = grad_q + 2 * nd;
    float* grad_scores = layout.at<float>(base, scores_at);

    pack_heads_kernel<<<grid_for(3 * nd), kThreads, 0, m_stream>>>(q, qkv, 3, shape);
    NORMLAB_CUDA_CHECK_LAUNCH("pack_heads_kernel (qkv)");
    pack_heads_kernel<<<grid_for(nd), kThreads, 0, m_stream>>>(grad_o, dout, 1, shape);
    NORMLAB_CUDA_CHECK_LAUNCH("pack_heads_kernel (dout)");
    const int pairs = shape.pairs();
    // dV_p = P_p^T dO_p
    run_gemm(m_cublas, attention_apply_transposed_plan(seq, head_dim), 1.0f, grad_o, probs, 0.0f, grad_v,
             pairs);
    // dP_p = dO_p V_p^T
    run_gemm(m_cublas, attention_scores_plan(seq, head_dim), 1.0f, v, grad_o, 0.0f, grad_scores, pairs);
    causal_softmax_backward_kernel<<<row_blocks(rows), kRowsPerBlock * kWarp, 0, m_stream>>>(
        grad_scores, probs, rows, seq, scale);
    NORMLAB_CUDA_CHECK_LAUNCH("causal_softmax_backward_kernel");
    // dQ_p = dS_p K_p
    run_gemm(m_cublas, attention_apply_plan(seq, head_dim), 1.0f, k, grad_scores, 0.0f, grad_q, pairs);
    // dK_p = dS_p^T Q_p
    run_gemm(m_cublas, attention_apply_transposed_plan(seq, head_dim), 1.0f, q, grad_scores, 0.0f, grad_k,
             pairs);
    // dqkv[n, 3d] is overwritten (q, k and v blocks), as the CPU does
    unpack_heads_kernel<<<grid_for(3 * nd), kThreads, 0, m_stream>>>(dqkv, grad_q, 3, shape);
    NORMLAB_CUDA_CHECK_LAUNCH("unpack_heads_kernel (dqkv)");
}

}  // namespace normlab
