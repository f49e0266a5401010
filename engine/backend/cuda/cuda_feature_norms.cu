// BatchNorm and PowerNorm on the GPU (feature norms: each column of x[n, d] over the pass's rows). A
// block owns 32 columns and every row: its 8 row lanes sum strided rows in double (reads coalesced across
// the columns), combine in shared memory in a fixed order, then normalise their rows. Maths: kernel_maths.h.
#include "engine/backend/cuda/cuda_backend.h"
#include "engine/backend/cuda/cuda_check.h"
#include "engine/backend/kernel_maths.h"

namespace normlab {

namespace {
constexpr int kColumns = 32;  // columns per block (threadIdx.x)
constexpr int kLanes = 8;     // row lanes per block (threadIdx.y)

// Sums `value` over the block's row lanes for each column; every thread gets its column's total.
__device__ double lane_total(double value, double (*shared)[kColumns]) {
    shared[threadIdx.y][threadIdx.x] = value;
    __syncthreads();
    double total = 0.0;
    for (int lane = 0; lane < kLanes; ++lane) total += shared[lane][threadIdx.x];
    __syncthreads();
    return total;
}

__global__ void feature_norm_forward_kernel(NormType type, float* y, const float* x, const float* w,
                                            const float* b, FeatureNormState state, FeatureStatistics mode,
                                            int n, int d) {
    __shared__ double shared[kLanes][kColumns];
    const int c = blockIdx.x * kColumns + threadIdx.x;
    const bool column = c < d;
    double mean = 0.0, var = 0.0;
    if (needs_batch_statistics(type, mode)) {
        if (type == NormType::BatchNorm) {
            double sum = 0.0;
            for (int r = threadIdx.y; column && r < n; r += kLanes) sum += x[static_cast<size_t>(r) * d + c];
            mean = lane_total(sum, shared) / n;
        }
        double squares = 0.0;
        for (int r = threadIdx.y; column && r < n; r += kLanes) {
            const double dev = x[static_cast<size_t>(r) * d + c] - mean;
            squares += dev * dev;
        }
        var = lane_total(squares, shared) / n;
    }
    if (column && threadIdx.y == 0) feature_forward_column(type, state, mode, c, mean, var, n);
    __syncthreads();
    if (!column) return;
    const float centre = state.mean[c], rstd = state.rstd[c];
    for (int r = threadIdx.y; r < n; r += kLanes) {
        const size_t at = static_cast<size_t>(r) * d + c;
        y[at] = w[c] * ((x[at] - centre) * rstd) + (b ? b[c] : 0.0f);
    }
}

__global__ void feature_norm_backward_kernel(NormType type, float* dx, float* dw, float* db, const float* dy,
                                             const float* x, const float* w, FeatureNormState state,
                                             FeatureStatistics mode, int n, int d, bool accumulate_dx) {
    __shared__ double shared[kLanes][kColumns];
    __shared__ float terms[2][kColumns];  // shift, slope per column
    const int c = blockIdx.x * kColumns + threadIdx.x;
    const bool column = c < d;
    const float centre = column ? state.mean[c] : 0.0f, rstd = column ? state.rstd[c] : 0.0f;
    double sum_dy = 0.0, sum_dy_xhat = 0.0, sum_xhat2 = 0.0;
    for (int r = threadIdx.y; column && r < n; r += kLanes) {
        const size_t at = static_cast<size_t>(r) * d + c;
        const double xhat = (x[at] - centre) * rstd;
        sum_dy += dy[at];
        sum_dy_xhat += dy[at] * xhat;
        sum_xhat2 += xhat * xhat;
    }
    sum_dy = lane_total(sum_dy, shared);
    sum_dy_xhat = lane_total(sum_dy_xhat, shared);
    sum_xhat2 = lane_total(sum_xhat2, shared);
    if (column && threadIdx.y == 0) {
        dw[c] += static_cast<float>(sum_dy_xhat);
        if (db) db[c] += static_cast<float>(sum_dy);
        feature_backward_column(type, state, mode, c, w[c], sum_dy, sum_dy_xhat, sum_xhat2, n,
                                terms[0][threadIdx.x], terms[1][threadIdx.x]);
    }
    __syncthreads();
    if (!column) return;
    const float shift = terms[0][threadIdx.x], slope = terms[1][threadIdx.x];
    for (int r = threadIdx.y; r < n; r += kLanes) {
        const size_t at = static_cast<size_t>(r) * d + c;
        const float value = norm_input_grad(rstd, w[c] * dy[at], (x[at] - centre) * rstd, shift, slope);
        dx[at] = accumulate_dx ? dx[at] + value : value;
    }
}

unsigned column_blocks(int d) {
    return static_cast<unsigned>((d + kColumns - 1) / kColumns);
}
}  // namespace

void CudaBackend::feature_norm_forward(NormType type, float* y, const float* x, const float* w,
                                       const float* b, const FeatureNormState& state, FeatureStatistics mode,
                                       int n, int d) {
    if (n == 0) return;
    feature_norm_forward_kernel<<<column_blocks(d), dim3(kColumns, kLanes), 0, m_stream>>>(type, y, x, w, b,
                                                                                           state, mode, n, d);
    NORMLAB_CUDA_CHECK_LAUNCH("feature_norm_forward_kernel");
}

void CudaBackend::feature_norm_backward(NormType type, float* dx, float* dw, float* db, const float* dy,
                                        const float* x, const float* w, const FeatureNormState& state,
                                        FeatureStatistics mode, int n, int d, bool accumulate_dx) {
    if (n == 0) return;
    feature_norm_backward_kernel<<<column_blocks(d), dim3(kColumns, kLanes), 0, m_stream>>>(
        type, dx, dw, db, dy, x, w, state, mode, n, d, accumulate_dx);
    NORMLAB_CUDA_CHECK_LAUNCH("feature_norm_backward_kernel");
}

}  // namespace normlab
