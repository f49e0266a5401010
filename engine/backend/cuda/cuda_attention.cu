// Multi-head attention on the GPU (causal, bidirectional, cross): q, k, v are gathered from their strided
// rows (packed qkv[n, 3d], or q[n, d] and kv[n, 2d]) into head-major scratch [3][batch * heads][seq][hd]
// (attention_layout.h), products are strided-batched cuBLAS calls (gemm_plans.h; one matrix per (batch,
// head) pair), and a warp per row does the masked softmax and its backward with the CPU reference's
// arithmetic. Scratch comes from the backend's workspace.
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

// part[pairs][seq][hd] (head-major) <- rows [n, d] read with a row stride of `stride` floats
__global__ void gather_heads_kernel(float* part, const float* rows, int stride, HeadShape shape) {
    const size_t count = shape.head_elements();
    const int d = shape.d();
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<size_t>(gridDim.x) * blockDim.x) {
        part[head_major_index(i, 1, shape)] = rows[(i / d) * stride + i % d];
    }
}

// rows [n, d] with a row stride of `stride` floats <- part[pairs][seq][hd] (every row element written)
__global__ void scatter_heads_kernel(float* rows, int stride, const float* part, HeadShape shape) {
    const size_t count = shape.head_elements();
    const int d = shape.d();
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<size_t>(gridDim.x) * blockDim.x) {
        rows[(i / d) * stride + i % d] = part[head_major_index(i, 1, shape)];
    }
}

// Row r = pair * seq + t of probs[pairs, seq, seq] holds scaled logits; becomes softmax over the allowed
// keys j < mask.key_limit(t) with zeros beyond. Records the row's entropy and largest logit. One warp
// per row.
__global__ void masked_softmax_kernel(float* probs, double* entropy_rows, float* max_rows, size_t rows,
                                      AttentionShape mask) {
    const int seq = mask.seq;
    const size_t r = blockIdx.x * static_cast<size_t>(kRowsPerBlock) + threadIdx.x / kWarp;
    const int lane = threadIdx.x % kWarp;
    if (r >= rows) return;
    const int limit = mask.key_limit(static_cast<int>(r % seq));
    float* row = probs + r * seq;
    float row_max = -INFINITY;
    for (int j = lane; j < limit; j += kWarp) row_max = fmaxf(row_max, row[j]);
    row_max = warp_max(row_max);
    double total = 0.0;
    for (int j = lane; j < limit; j += kWarp) {
        row[j] = std::exp(row[j] - row_max);
        total += row[j];
    }
    total = warp_sum(total);
    const float inverse = static_cast<float>(1.0 / total);
    double entropy = 0.0;
    for (int j = lane; j < limit; j += kWarp) {
        row[j] *= inverse;
        if (row[j] > 0.0f) entropy -= row[j] * std::log(static_cast<double>(row[j]));
    }
    for (int j = limit + lane; j < seq; j += kWarp) row[j] = 0.0f;
    entropy = warp_sum(entropy);
    if (lane == 0) {
        entropy_rows[r] = entropy;
        max_rows[r] = row_max;
    }
}

// stats = (sum of the rows' entropies, each head's largest row maximum); block h takes head h (rows
// r = pair seq + t, pair = batch row x heads + head), block 0 also the entropy; fixed order.
__global__ void attention_stats_kernel(AttentionStatsRef stats, const double* entropy_rows,
                                       const float* max_rows, size_t rows, int seq, int heads) {
    __shared__ double shared_sum[kWarp];
    __shared__ float shared_max[kWarp];
    const int head = blockIdx.x;
    double entropy = 0.0;
    float largest = -INFINITY;
    for (size_t r = threadIdx.x; r < rows; r += blockDim.x) {
        if (head == 0) entropy += entropy_rows[r];
        if (static_cast<int>((r / seq) % heads) == head) largest = fmaxf(largest, max_rows[r]);
    }
    entropy = cuda::block_sum(entropy, shared_sum);
    largest = cuda::block_max(largest, shared_max);
    if (threadIdx.x == 0) {
        if (stats.entropy_sum && head == 0) *stats.entropy_sum = static_cast<float>(entropy);
        if (stats.max_logit) stats.max_logit[head] = largest;
    }
}

// In place on grad[pairs, seq, seq] holding dP: dS = P (dP - sum_j dP P) scale over the allowed keys,
// 0 beyond.
__global__ void masked_softmax_backward_kernel(float* grad, const float* probs, size_t rows,
                                               AttentionShape mask, float scale) {
    const int seq = mask.seq;
    const size_t r = blockIdx.x * static_cast<size_t>(kRowsPerBlock) + threadIdx.x / kWarp;
    const int lane = threadIdx.x % kWarp;
    if (r >= rows) return;
    const int limit = mask.key_limit(static_cast<int>(r % seq));
    float* row = grad + r * seq;
    const float* prob_row = probs + r * seq;
    double weighted = 0.0;
    for (int j = lane; j < limit; j += kWarp) weighted += static_cast<double>(row[j]) * prob_row[j];
    const float weighted_sum = static_cast<float>(warp_sum(weighted));
    for (int j = lane; j < limit; j += kWarp) row[j] = prob_row[j] * (row[j] - weighted_sum) * scale;
    for (int j = limit + lane; j < seq; j += kWarp) row[j] = 0.0f;
}

}  // namespace

void CudaBackend::gather_attention_inputs(float* q, const AttentionInputs& in, const HeadShape& shape) {
    const size_t nd = shape.head_elements();
    const float* sources[3] = {in.q, in.k, in.v};
    const int strides[3] = {in.q_stride, in.kv_stride, in.kv_stride};
    for (int part = 0; part < 3; ++part) {
        gather_heads_kernel<<<grid_for(nd), kThreads, 0, m_stream>>>(q + part * nd, sources[part],
                                                                     strides[part], shape);
        NORMLAB_CUDA_CHECK_LAUNCH("gather_heads_kernel (q, k, v)");
    }
}

void CudaBackend::attention_forward(float* out, float* probs, const AttentionInputs& in,
                                    const AttentionShape& mask, AttentionStatsRef stats) {
    const int seq = mask.seq;
    const HeadShape shape{mask.batch, seq, mask.heads, mask.head_dim};
    const size_t nd = shape.head_elements();
    const size_t rows = static_cast<size_t>(shape.pairs()) * seq;  // softmax rows
    if (rows == 0) return;
    const float scale = mask.scale();
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

    gather_attention_inputs(q, in, shape);
    const int pairs = shape.pairs();
    // S_p = scale Q_p K_p^T, written straight into probs
    run_gemm(m_cublas, attention_scores_plan(seq, mask.head_dim), scale, k, q, 0.0f, probs, pairs);
    masked_softmax_kernel<<<row_blocks(rows), kRowsPerBlock * kWarp, 0, m_stream>>>(probs, entropy_rows,
                                                                                    max_rows, rows, mask);
    NORMLAB_CUDA_CHECK_LAUNCH("masked_softmax_kernel");
    if (stats.entropy_sum || stats.max_logit) {
        attention_stats_kernel<<<mask.heads, kThreads, 0, m_stream>>>(stats, entropy_rows, max_rows, rows,
                                                                      seq, mask.heads);
        NORMLAB_CUDA_CHECK_LAUNCH("attention_stats_kernel");
    }
    // O_p = P_p V_p
    run_gemm(m_cublas, attention_apply_plan(seq, mask.head_dim), 1.0f, v, probs, 0.0f, o, pairs);
    scatter_heads_kernel<<<grid_for(nd), kThreads, 0, m_stream>>>(out, shape.d(), o, shape);
    NORMLAB_CUDA_CHECK_LAUNCH("scatter_heads_kernel (out)");
}

void CudaBackend::attention_backward(const AttentionGrads& grads, const float* dout,
                                     const AttentionInputs& in, const float* probs,
                                     const AttentionShape& mask) {
    const int seq = mask.seq;
    const HeadShape shape{mask.batch, seq, mask.heads, mask.head_dim};
    const size_t nd = shape.head_elements();
    const size_t rows = static_cast<size_t>(shape.pairs()) * seq;
    if (rows == 0) return;
    const float scale = mask.scale();
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

    gather_attention_inputs(q, in, shape);
    gather_heads_kernel<<<grid_for(nd), kThreads, 0, m_stream>>>(grad_o, dout, shape.d(), shape);
    NORMLAB_CUDA_CHECK_LAUNCH("gather_heads_kernel (dout)");
    const int pairs = shape.pairs();
    const int head_dim = mask.head_dim;
    // dV_p = P_p^T dO_p
    run_gemm(m_cublas, attention_apply_transposed_plan(seq, head_dim), 1.0f, grad_o, probs, 0.0f, grad_v,
             pairs);
    // dP_p = dO_p V_p^T
    run_gemm(m_cublas, attention_scores_plan(seq, head_dim), 1.0f, v, grad_o, 0.0f, grad_scores, pairs);
    masked_softmax_backward_kernel<<<row_blocks(rows), kRowsPerBlock * kWarp, 0, m_stream>>>(
        grad_scores, probs, rows, mask, scale);
    NORMLAB_CUDA_CHECK_LAUNCH("masked_softmax_backward_kernel");
    // dQ_p = dS_p K_p
    run_gemm(m_cublas, attention_apply_plan(seq, head_dim), 1.0f, k, grad_scores, 0.0f, grad_q, pairs);
    // dK_p = dS_p^T Q_p
    run_gemm(m_cublas, attention_apply_transposed_plan(seq, head_dim), 1.0f, q, grad_scores, 0.0f, grad_k,
             pairs);
    // dq, dk and dv are overwritten through their strides, as the CPU does
    float* destinations[3] = {grads.q, grads.k, grads.v};
    const int strides[3] = {grads.q_stride, grads.kv_stride, grads.kv_stride};
    for (int part = 0; part < 3; ++part) {
        scatter_heads_kernel<<<grid_for(nd), kThreads, 0, m_stream>>>(destinations[part], strides[part],
                                                                      grad_q + part * nd, shape);
        NORMLAB_CUDA_CHECK_LAUNCH("scatter_heads_kernel (dq, dk, dv)");
    }
}

}  // namespace normlab
