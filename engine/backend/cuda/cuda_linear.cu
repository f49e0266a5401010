// Linear layers and embeddings on the GPU: cuBLAS products from gemm_plans.h (y = x W^T + b, dx = dy W,
// dW += dy^T x), db += dy^T 1 as a matrix-vector product. Embedding gradients are summed in row order,
// exactly as the CPU does, with no atomics (a stable radix sort groups the rows by token first).
#include <cub/device/device_radix_sort.cuh>

#include "engine/backend/cuda/cuda_backend.h"
#include "engine/backend/cuda/cuda_check.h"
#include "engine/backend/cuda/cuda_device.cuh"
#include "engine/backend/cuda/cuda_gemm.h"

namespace normlab {

namespace {
using cuda::grid_for;
using cuda::kThreads;

constexpr int kColumnsPerBlock = 128;  // embedding backward: one thread per column of a row

// y[n, out] += b[out] broadcast over rows.
__global__ void add_bias_kernel(float* y, const float* b, size_t n, int out) {
    const size_t count = n * out;
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<size_t>(gridDim.x) * blockDim.x) {
        y[i] += b[i % out];
    }
}

// x[n, d] = wte[tokens[row], :] + wpe[row % seq, :] (no wpe: the token embedding alone)
__global__ void embedding_forward_kernel(float* x, const int32_t* tokens, const float* wte, const float* wpe,
                                         size_t n, int seq, int d) {
    const size_t count = n * d;
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<size_t>(gridDim.x) * blockDim.x) {
        const size_t row = i / d;
        const size_t column = i % d;
        const float position = wpe ? wpe[(row % seq) * d + column] : 0.0f;
        x[i] = wte[static_cast<size_t>(tokens[row]) * d + column] + position;
    }
}

// dwpe[pos, :] += dx[b * seq + pos, :] for b = 0, 1, ... in order (one thread per (pos, column)).
__global__ void embedding_position_grad_kernel(float* dwpe, const float* dx, int batch, int seq, int d) {
    const size_t count = static_cast<size_t>(seq) * d;
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<size_t>(gridDim.x) * blockDim.x) {
        float total = dwpe[i];
        for (int b = 0; b < batch; ++b) total += dx[static_cast<size_t>(b) * count + i];
        dwpe[i] = total;
    }
}

// Row indices 0..n-1 (the values the token sort carries along).
__global__ void row_index_kernel(int32_t* rows, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) rows[i] = i;
}

// dwte[token, :] += dx[row, :] over the rows holding `token`, in row order. The rows come sorted by
// token (a stable sort, so each token's rows stay in row order); the thread at the start of a token's
// run sums the run. No two threads touch the same dwte element: no atomics, and the CPU's order.
// Grid: (sorted position, column tile).
__global__ void embedding_token_grad_kernel(float* dwte, const float* dx, const int32_t* sorted_tokens,
                                            const int32_t* sorted_rows, int n, int d) {
    const int start = blockIdx.x;
    const int column = blockIdx.y * blockDim.x + threadIdx.x;
    const int32_t token = sorted_tokens[start];
    if (column >= d || (start > 0 && sorted_tokens[start - 1] == token)) return;
    float* grad = dwte + static_cast<size_t>(token) * d + column;
    float total = *grad;
    for (int at = start; at < n && sorted_tokens[at] == token; ++at)
        total += dx[static_cast<size_t>(sorted_rows[at]) * d + column];
    *grad = total;
}
}  // namespace

void CudaBackend::set_linear_operand_format(NumberFormat format) {
    m_linear_compute = CUBLAS_COMPUTE_32F;
    if (!m_native_products) return;
    if (format == NumberFormat::Bf16) m_linear_compute = CUBLAS_COMPUTE_32F_FAST_16BF;
    if (format == NumberFormat::Fp16) m_linear_compute = CUBLAS_COMPUTE_32F_FAST_16F;
}

void CudaBackend::linear_forward(float* y, const float* x, const float* w, const float* b, int n, int in,
                                 int out) {
    run_gemm(m_cublas, linear_forward_plan(n, in, out), 1.0f, w, x, 0.0f, y, 1, m_linear_compute);
    if (b) {
        const size_t count = static_cast<size_t>(n) * out;
        add_bias_kernel<<<grid_for(count), kThreads, 0, m_stream>>>(y, b, static_cast<size_t>(n), out);
        NORMLAB_CUDA_CHECK_LAUNCH("add_bias_kernel");
    }
}

void CudaBackend::linear_backward(float* dx, float* dw, float* db, const float* dy, const float* x,
                                  const float* w, int n, int in, int out, bool accumulate_dx) {
    if (dx)
        run_gemm(m_cublas, linear_input_grad_plan(n, in, out), 1.0f, w, dy, accumulate_dx ? 1.0f : 0.0f, dx,
                 1, m_linear_compute);
    run_gemm(m_cublas, linear_weight_grad_plan(n, in, out), 1.0f, x, dy, 1.0f, dw, 1, m_linear_compute);
    if (db) {
        // db[out] += dy^T[out, n] 1[n] (dy read column-major is dy^T)
        const float one = 1.0f;
        NORMLAB_CUBLAS_CHECK(cublasSgemv(m_cublas, CUBLAS_OP_N, out, n, &one, dy, out,
                                         ones(static_cast<size_t>(n)), 1, &one, db, 1));
    }
}

void CudaBackend::embedding_forward(float* x, const int32_t* tokens, const float* wte, const float* wpe,
                                    int batch, int seq, int d) {
    const size_t n = static_cast<size_t>(batch) * seq;
    embedding_forward_kernel<<<grid_for(n * d), kThreads, 0, m_stream>>>(x, tokens, wte, wpe, n, seq, d);
    NORMLAB_CUDA_CHECK_LAUNCH("embedding_forward_kernel");
}

void CudaBackend::embedding_backward(float* dwte, float* dwpe, const float* dx, const int32_t* tokens,
                                     int batch, int seq, int d) {
    const int n = batch * seq;
    if (n == 0) return;
    size_t sort_bytes = 0;
    NORMLAB_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
        nullptr, sort_bytes, tokens, static_cast<int32_t*>(nullptr), static_cast<const int32_t*>(nullptr),
        static_cast<int32_t*>(nullptr), n, 0, 32, m_stream));
    cuda::WorkspaceLayout layout;
    const size_t rows_at = layout.reserve<int32_t>(n);
    const size_t sorted_tokens_at = layout.reserve<int32_t>(n);
    const size_t sorted_rows_at = layout.reserve<int32_t>(n);
    const size_t sort_at = layout.reserve<char>(sort_bytes);
    void* base = workspace(layout.bytes());
    int32_t* rows = layout.at<int32_t>(base, rows_at);
    int32_t* sorted_tokens = layout.at<int32_t>(base, sorted_tokens_at);
    int32_t* sorted_rows = layout.at<int32_t>(base, sorted_rows_at);

    row_index_kernel<<<grid_for(n), kThreads, 0, m_stream>>>(rows, n);
    NORMLAB_CUDA_CHECK_LAUNCH("row_index_kernel");
    NORMLAB_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(layout.at<char>(base, sort_at), sort_bytes, tokens,
                                                       sorted_tokens, rows, sorted_rows, n, 0, 32, m_stream));
    const dim3 token_grid(n, (d + kColumnsPerBlock - 1) / kColumnsPerBlock);
    embedding_token_grad_kernel<<<token_grid, kColumnsPerBlock, 0, m_stream>>>(dwte, dx, sorted_tokens,
                                                                               sorted_rows, n, d);
    NORMLAB_CUDA_CHECK_LAUNCH("embedding_token_grad_kernel");
    if (!dwpe) return;
    const size_t positions = static_cast<size_t>(seq) * d;
    embedding_position_grad_kernel<<<grid_for(positions), kThreads, 0, m_stream>>>(dwpe, dx, batch, seq, d);
    NORMLAB_CUDA_CHECK_LAUNCH("embedding_position_grad_kernel");
}

}  // namespace normlab
