// LayerNorm, RMSNorm and DyT on the GPU, forward and backward: one warp per row with double
// accumulators (the CPU's per-element maths from kernel_maths.h); gain, bias and DyT-alpha gradients
// are summed per fixed 32-row chunk and then across chunks in order (deterministic, no atomics).
#include "engine/backend/cuda/cuda_backend.h"
#include "engine/backend/cuda/cuda_check.h"
#include "engine/backend/cuda/cuda_device.cuh"
#include "engine/backend/kernel_maths.h"

namespace normlab {

namespace {
using cuda::kRowsPerBlock;
using cuda::kThreads;
using cuda::kWarp;
using cuda::row_blocks;
using cuda::scale_value;
using cuda::warp_sum;

constexpr int kRowsPerChunk = 32;      // rows per partial of the gain / bias gradients
constexpr int kColumnsPerBlock = 128;  // columns kernel: one thread per column

// y[n, d] = norm(x[n, d]); stats[n, 2] = (mean, rstd) for LayerNorm / RMSNorm. One warp per row. A
// frozen_rstd > 0 replaces each row's own 1/std (frozen_norm_forward).
__global__ void norm_forward_kernel(NormType type, float* y, float* stats, const float* x, const float* w,
                                    const float* b, ScaleRef alpha, int n, int d, float eps,
                                    float frozen_rstd) {
    const int row = blockIdx.x * kRowsPerBlock + threadIdx.x / kWarp;
    const int lane = threadIdx.x % kWarp;
    if (row >= n) return;  // the whole warp: row is the same for its lanes
    const float* in = x + static_cast<size_t>(row) * d;
    float* out = y + static_cast<size_t>(row) * d;
    if (type == NormType::DyT) {
        const float dyt_alpha = scale_value(alpha);
        for (int i = lane; i < d; i += kWarp) out[i] = dyt_value(in[i], w[i], b[i], dyt_alpha);
        return;
    }
    double mean = 0.0;
    if (type == NormType::LayerNorm) {
        for (int i = lane; i < d; i += kWarp) mean += in[i];
        mean = warp_sum(mean) / d;
    }
    double second_moment = 0.0;
    for (int i = lane; i < d; i += kWarp) second_moment += (in[i] - mean) * (in[i] - mean);
    second_moment = warp_sum(second_moment);
    const double rstd = frozen_rstd > 0.0f ? frozen_rstd : 1.0 / sqrt(second_moment / d + eps);
    if (lane == 0) {
        stats[2 * static_cast<size_t>(row)] = static_cast<float>(mean);
        stats[2 * static_cast<size_t>(row) + 1] = static_cast<float>(rstd);
    }
    const bool has_bias = type == NormType::LayerNorm && b;  // QK-norm's LayerNorm has none
    for (int i = lane; i < d; i += kWarp)
        out[i] = norm_value(type, in[i], mean, rstd, w[i], has_bias ? b[i] : 0.0f);
}

// Per 32-row chunk and column: partials[chunk, 0:d) = sum dy * xhat (DyT: dy * tanh(alpha x)) and, when
// has_bias, partials[chunk, d:2d) = sum dy. Reads only dy, x and stats (runs before dx is written).
// Grid: (chunk, column tile); chunks go in x, which takes 2^31 - 1 blocks (y stops at 65535, i.e. at
// about 2.1M rows).
__global__ void norm_backward_columns_kernel(NormType type, double* partials, const float* dy, const float* x,
                                             const float* stats, ScaleRef alpha, int n, int d,
                                             bool has_bias) {
    const int column = blockIdx.y * blockDim.x + threadIdx.x;
    const int chunk = blockIdx.x;
    if (column >= d) return;
    const int width = has_bias ? 2 * d : d;
    const int row_end = min(n, (chunk + 1) * kRowsPerChunk);
    const float dyt_alpha = type == NormType::DyT ? scale_value(alpha) : 0.0f;
    double gain = 0.0;
    double bias = 0.0;
    for (int row = chunk * kRowsPerChunk; row < row_end; ++row) {
        const size_t at = static_cast<size_t>(row) * d + column;
        const float grad_out = dy[at];
        if (type == NormType::DyT) {
            gain += grad_out * std::tanh(dyt_alpha * x[at]);
        } else {
            const double mean = stats[2 * static_cast<size_t>(row)];
            const double rstd = stats[2 * static_cast<size_t>(row) + 1];
            gain += grad_out * ((x[at] - mean) * rstd);
        }
        bias += grad_out;
    }
    partials[static_cast<size_t>(chunk) * width + column] = gain;
    if (has_bias) partials[static_cast<size_t>(chunk) * width + d + column] = bias;
}

// dx[n, d] (+)= the input gradient, one warp per row; DyT also writes its row's alpha term. A lane
// reads and writes only its own columns after the row sums, so dx may alias dy. With frozen_scale the
// row's scale is a constant (no path through it).
__global__ void norm_backward_rows_kernel(NormType type, float* dx, double* alpha_rows, const float* dy,
                                          const float* x, const float* stats, const float* w, ScaleRef alpha,
                                          int n, int d, bool accumulate, bool frozen_scale) {
    const int row = blockIdx.x * kRowsPerBlock + threadIdx.x / kWarp;
    const int lane = threadIdx.x % kWarp;
    if (row >= n) return;
    const size_t offset = static_cast<size_t>(row) * d;
    const float* grad_out = dy + offset;
    const float* in = x + offset;
    float* grad_in = dx + offset;
    if (type == NormType::DyT) {
        const float dyt_alpha = scale_value(alpha);
        double alpha_sum = 0.0;
        for (int i = lane; i < d; i += kWarp) {
            const float t = std::tanh(dyt_alpha * in[i]);
            const float dpre = dyt_pre_grad(grad_out[i], w[i], t);
            alpha_sum += static_cast<double>(dpre) * in[i];
            const float value = dpre * dyt_alpha;
            grad_in[i] = accumulate ? grad_in[i] + value : value;
        }
        alpha_sum = warp_sum(alpha_sum);
        if (lane == 0) alpha_rows[row] = alpha_sum;
        return;
    }
    const double mean = stats[2 * static_cast<size_t>(row)];
    const double rstd = stats[2 * static_cast<size_t>(row) + 1];
    double mean_dxhat = 0.0;
    double mean_dxhat_xhat = 0.0;
    for (int i = lane; i < d; i += kWarp) {
        const double xhat = (in[i] - mean) * rstd;
        const double dxhat = static_cast<double>(grad_out[i]) * w[i];
        mean_dxhat += dxhat;
        mean_dxhat_xhat += dxhat * xhat;
    }
    mean_dxhat = type == NormType::LayerNorm ? warp_sum(mean_dxhat) / d : 0.0;
    mean_dxhat_xhat = frozen_scale ? 0.0 : warp_sum(mean_dxhat_xhat) / d;
    for (int i = lane; i < d; i += kWarp) {
        const double xhat = (in[i] - mean) * rstd;
        const double dxhat = static_cast<double>(grad_out[i]) * w[i];
        const float value = norm_input_grad(rstd, dxhat, xhat, mean_dxhat, mean_dxhat_xhat);
        grad_in[i] = accumulate ? grad_in[i] + value : value;
    }
}

// dw[d] += sum over chunks of partials (db likewise), in chunk order.
__global__ void norm_backward_finish_kernel(float* dw, float* db, const double* partials, int chunks, int d,
                                            bool has_bias) {
    const int column = blockIdx.x * blockDim.x + threadIdx.x;
    if (column >= d) return;
    const int width = has_bias ? 2 * d : d;
    double gain = 0.0;
    double bias = 0.0;
    for (int chunk = 0; chunk < chunks; ++chunk) {
        gain += partials[static_cast<size_t>(chunk) * width + column];
        if (has_bias) bias += partials[static_cast<size_t>(chunk) * width + d + column];
    }
    if (dw) dw[column] += static_cast<float>(gain);
    if (has_bias) db[column] += static_cast<float>(bias);
}

// *dalpha += sum of the rows' alpha terms (one block, fixed order).
__global__ void dyt_alpha_grad_kernel(float* dalpha, const double* alpha_rows, int n) {
    __shared__ double shared[kWarp];
    double total = 0.0;
    for (int row = threadIdx.x; row < n; row += blockDim.x) total += alpha_rows[row];
    total = cuda::block_sum(total, shared);
    if (threadIdx.x == 0) *dalpha += static_cast<float>(total);
}
}  // namespace

void CudaBackend::norm_forward(NormType type, float* y, float* stats, const float* x, const float* w,
                               const float* b, ScaleRef alpha, int n, int d, float eps) {
    norm_rows_forward(type, y, stats, x, w, b, alpha, n, d, eps, 0.0f);
}

void CudaBackend::frozen_norm_forward(NormType type, float* y, float* stats, const float* x, const float* w,
                                      const float* b, float rstd, int n, int d) {
    check_frozen_norm(type, rstd);
    norm_rows_forward(type, y, stats, x, w, b, ScaleRef{}, n, d, 0.0f, rstd);
}

void CudaBackend::norm_backward(NormType type, float* dx, float* dw, float* db, float* dalpha,
                                const float* dy, const float* x, const float* stats, const float* w,
                                ScaleRef alpha, int n, int d, bool accumulate_dx) {
    norm_rows_backward(type, dx, dw, db, dalpha, dy, x, stats, w, alpha, n, d, accumulate_dx, false);
}

void CudaBackend::frozen_norm_backward(NormType type, float* dx, float* dw, float* db, const float* dy,
                                       const float* x, const float* stats, const float* w, int n, int d,
                                       bool accumulate_dx) {
    check_frozen_norm(type, 1.0f);
    norm_rows_backward(type, dx, dw, db, nullptr, dy, x, stats, w, ScaleRef{}, n, d, accumulate_dx, true);
}

void CudaBackend::norm_rows_forward(NormType type, float* y, float* stats, const float* x, const float* w,
                                    const float* b, ScaleRef alpha, int n, int d, float eps,
                                    float frozen_rstd) {
    if (n == 0) return;
    norm_forward_kernel<<<row_blocks(n), kRowsPerBlock * kWarp, 0, m_stream>>>(type, y, stats, x, w, b, alpha,
                                                                               n, d, eps, frozen_rstd);
    NORMLAB_CUDA_CHECK_LAUNCH("norm_forward_kernel");
}

void CudaBackend::norm_rows_backward(NormType type, float* dx, float* dw, float* db, float* dalpha,
                                     const float* dy, const float* x, const float* stats, const float* w,
                                     ScaleRef alpha, int n, int d, bool accumulate_dx, bool frozen_scale) {
    if (n == 0) return;
    const int chunks = (n + kRowsPerChunk - 1) / kRowsPerChunk;
    const bool has_bias = type != NormType::RmsNorm && db;
    const bool wants_alpha = type == NormType::DyT && dalpha;
    const int width = has_bias ? 2 * d : d;  // [dw | db] per chunk
    cuda::WorkspaceLayout layout;
    const size_t partials_at = layout.reserve<double>(static_cast<size_t>(chunks) * width);
    const size_t alpha_at = layout.reserve<double>(static_cast<size_t>(n));
    void* base = workspace(layout.bytes());
    double* partials = layout.at<double>(base, partials_at);
    double* alpha_rows = layout.at<double>(base, alpha_at);

    const unsigned column_tiles = (d + kColumnsPerBlock - 1) / kColumnsPerBlock;
    norm_backward_columns_kernel<<<dim3(chunks, column_tiles), kColumnsPerBlock, 0, m_stream>>>(
        type, partials, dy, x, stats, alpha, n, d, has_bias);
    NORMLAB_CUDA_CHECK_LAUNCH("norm_backward_columns_kernel");
    norm_backward_rows_kernel<<<row_blocks(n), kRowsPerBlock * kWarp, 0, m_stream>>>(
        type, dx, alpha_rows, dy, x, stats, w, alpha, n, d, accumulate_dx, frozen_scale);
    NORMLAB_CUDA_CHECK_LAUNCH("norm_backward_rows_kernel");
    norm_backward_finish_kernel<<<column_tiles, kColumnsPerBlock, 0, m_stream>>>(dw, db, partials, chunks, d,
                                                                                 has_bias);
    NORMLAB_CUDA_CHECK_LAUNCH("norm_backward_finish_kernel");
    if (wants_alpha) {
        dyt_alpha_grad_kernel<<<1, kThreads, 0, m_stream>>>(dalpha, alpha_rows, n);
        NORMLAB_CUDA_CHECK_LAUNCH("dyt_alpha_grad_kernel");
    }
}

}  // namespace normlab
