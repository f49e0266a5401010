// Attention over depth on the GPU (model.residual=attn_res): a thread per token for the softmax over
// sources, a thread per value for the weighted sum and the values' gradient, and a warp per (source,
// token) row for the scores' gradient (a fixed-order warp sum: the same inputs give the same bits).
#include "engine/backend/cuda/cuda_backend.h"
#include "engine/backend/cuda/cuda_check.h"
#include "engine/backend/cuda/cuda_device.cuh"

namespace normlab {

namespace {
using cuda::grid_for;
using cuda::kRowsPerBlock;
using cuda::kThreads;
using cuda::kWarp;
using cuda::row_blocks;
using cuda::warp_sum;

__global__ void depth_softmax_forward_kernel(float* p, const float* logits, int sources, int n) {
    const size_t rows = static_cast<size_t>(n);
    for (size_t r = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; r < rows;
         r += static_cast<size_t>(gridDim.x) * blockDim.x) {
        float largest = logits[r];
        for (int s = 1; s < sources; ++s) largest = fmaxf(largest, logits[s * rows + r]);
        double total = 0.0;
        for (int s = 0; s < sources; ++s) total += exp(static_cast<double>(logits[s * rows + r] - largest));
        for (int s = 0; s < sources; ++s)
            p[s * rows + r] =
                static_cast<float>(exp(static_cast<double>(logits[s * rows + r] - largest)) / total);
    }
}

__global__ void depth_softmax_backward_kernel(float* dlogits, const float* dp, const float* p, int sources,
                                              int n) {
    const size_t rows = static_cast<size_t>(n);
    for (size_t r = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; r < rows;
         r += static_cast<size_t>(gridDim.x) * blockDim.x) {
        double expected = 0.0;
        for (int s = 0; s < sources; ++s) expected += static_cast<double>(p[s * rows + r]) * dp[s * rows + r];
        for (int s = 0; s < sources; ++s)
            dlogits[s * rows + r] = static_cast<float>(p[s * rows + r] * (dp[s * rows + r] - expected));
    }
}

// h[r][c] = sum over s of p[s][r] v[s][r][c], a thread per (r, c).
__global__ void depth_mix_forward_kernel(float* h, const float* p, const float* v, int sources, int n,
                                         int d) {
    const size_t rows = static_cast<size_t>(n), width = static_cast<size_t>(d), count = rows * width;
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<size_t>(gridDim.x) * blockDim.x) {
        const size_t r = i / width;
        float total = 0.0f;
        for (int s = 0; s < sources; ++s) total += p[s * rows + r] * v[s * count + i];
        h[i] = total;
    }
}

// dv[s][r][c] += p[s][r] dh[r][c], a thread per value of v.
__global__ void depth_mix_values_grad_kernel(float* dv, const float* dh, const float* p, int sources, int n,
                                             int d) {
    const size_t rows = static_cast<size_t>(n), width = static_cast<size_t>(d), count = rows * width;
    const size_t total = count * static_cast<size_t>(sources);
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < total;
         i += static_cast<size_t>(gridDim.x) * blockDim.x) {
        const size_t within = i % count;
        dv[i] += p[(i / count) * rows + within / width] * dh[within];
    }
}

// dp[s][r] = <dh[r], v[s][r]>, a warp per (s, r) row of v.
__global__ void depth_mix_scores_grad_kernel(float* dp, const float* dh, const float* v, int sources, int n,
                                             int d) {
    const size_t row = blockIdx.x * static_cast<size_t>(kRowsPerBlock) + threadIdx.x / kWarp;
    const int lane = threadIdx.x % kWarp;
    if (row >= static_cast<size_t>(sources) * n) return;  // the whole warp
    const float* values = v + row * d;
    const float* grad = dh + (row % static_cast<size_t>(n)) * d;
    double dot = 0.0;
    for (int c = lane; c < d; c += kWarp) dot += static_cast<double>(grad[c]) * values[c];
    dot = warp_sum(dot);
    if (lane == 0) dp[row] = static_cast<float>(dot);
}
}  // namespace

void CudaBackend::depth_softmax_forward(float* p, const float* logits, int sources, int n) {
    depth_softmax_forward_kernel<<<grid_for(static_cast<size_t>(n)), kThreads, 0, m_stream>>>(p, logits,
                                                                                              sources, n);
    NORMLAB_CUDA_CHECK_LAUNCH("depth_softmax_forward_kernel");
}

void CudaBackend::depth_softmax_backward(float* dlogits, const float* dp, const float* p, int sources,
                                         int n) {
    depth_softmax_backward_kernel<<<grid_for(static_cast<size_t>(n)), kThreads, 0, m_stream>>>(dlogits, dp, p,
                                                                                               sources, n);
    NORMLAB_CUDA_CHECK_LAUNCH("depth_softmax_backward_kernel");
}

void CudaBackend::depth_mix_forward(float* h, const float* p, const float* v, int sources, int n, int d) {
    const size_t count = static_cast<size_t>(n) * d;
    depth_mix_forward_kernel<<<grid_for(count), kThreads, 0, m_stream>>>(h, p, v, sources, n, d);
    NORMLAB_CUDA_CHECK_LAUNCH("depth_mix_forward_kernel");
}

void CudaBackend::depth_mix_backward(float* dv, float* dp, const float* dh, const float* p, const float* v,
                                     int sources, int n, int d) {
    const size_t rows = static_cast<size_t>(sources) * n;
    depth_mix_scores_grad_kernel<<<row_blocks(rows), kRowsPerBlock * kWarp, 0, m_stream>>>(dp, dh, v, sources,
                                                                                           n, d);
    NORMLAB_CUDA_CHECK_LAUNCH("depth_mix_scores_grad_kernel");
    depth_mix_values_grad_kernel<<<grid_for(rows * d), kThreads, 0, m_stream>>>(dv, dh, p, sources, n, d);
    NORMLAB_CUDA_CHECK_LAUNCH("depth_mix_values_grad_kernel");
}

}  // namespace normlab
