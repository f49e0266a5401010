// LayerNorm, RMSNorm and DyT on the CPU, forward and backward, with double accumulators per row.
// Gain/bias gradients are summed per fixed row chunk, then across chunks in order (deterministic).
#include <cmath>
#include <vector>

#include <algorithm>
#include "engine/backend/cpu/cpu_backend.h"

namespace normlab {

namespace {
constexpr int kRowsPerChunk = 32;  // fixed, so gain gradients do not depend on the thread count
}  // namespace

void CpuBackend::norm_forward(NormType type, float* y, float* stats, const float* x, const float* w,
                              const float* b, ScaleRef alpha, int n, int d, float eps) {
    const float dyt_alpha = type == NormType::DyT ? resolve(alpha) : 0.0f;
#pragma omp parallel for schedule(static)
    for (int row = 0; row < n; ++row) {
        const float* in = x + static_cast<size_t>(row) * d;
        float* out = y + static_cast<size_t>(row) * d;
        if (type == NormType::DyT) {
            for (int i = 0; i < d; ++i) out[i] = w[i] * std::tanh(dyt_alpha * in[i]) + b[i];
            continue;
        }
        double mean = 0.0;
        if (type == NormType::LayerNorm) {
            for (int i = 0; i < d; ++i) mean += in[i];
            mean /= d;
        }
        double second_moment = 0.0;
        for (int i = 0; i < d; ++i) second_moment += (in[i] - mean) * (in[i] - mean);
        const double rstd = 1.0 / std::sqrt(second_moment / d + eps);
        stats[2 * row] = static_cast<float>(mean);
        stats[2 * row + 1] = static_cast<float>(rstd);
        for (int i = 0; i < d; ++i) {
            const float normalized = static_cast<float>((in[i] - mean) * rstd);
            out[i] = type == NormType::LayerNorm ? w[i] * normalized + b[i] : w[i] * normalized;
        }
    }
}

void CpuBackend::norm_backward(NormType type, float* dx, float* dw, float* db, float* dalpha, const float* dy,
                               const float* x, const float* stats, const float* w, ScaleRef alpha, int n,
                               int d, bool accumulate_dx) {
    const int chunks = (n + kRowsPerChunk - 1) / kRowsPerChunk;
    const bool has_bias = type != NormType::RmsNorm && db;
    const int width = has_bias ? 2 * d : d;  // [dw | db] per chunk
    std::vector<double> partials(static_cast<size_t>(chunks) * width, 0.0);
    std::vector<double> alpha_partials(chunks, 0.0);
    const float dyt_alpha = type == NormType::DyT ? resolve(alpha) : 0.0f;

#pragma omp parallel for schedule(static)
    for (int chunk = 0; chunk < chunks; ++chunk) {
        double* partial = partials.data() + static_cast<size_t>(chunk) * width;
        const int row_end = std::min(n, (chunk + 1) * kRowsPerChunk);
        for (int row = chunk * kRowsPerChunk; row < row_end; ++row) {
            const float* in = x + static_cast<size_t>(row) * d;
            const float* grad_out = dy + static_cast<size_t>(row) * d;
            float* grad_in = dx + static_cast<size_t>(row) * d;
            if (type == NormType::DyT) {
                double alpha_sum = 0.0;
                for (int i = 0; i < d; ++i) {
                    const float t = std::tanh(dyt_alpha * in[i]);
                    partial[i] += grad_out[i] * t;
                    if (has_bias) partial[d + i] += grad_out[i];
                    const float dpre = grad_out[i] * w[i] * (1.0f - t * t);
                    alpha_sum += static_cast<double>(dpre) * in[i];
                    const float value = dpre * dyt_alpha;
                    grad_in[i] = accumulate_dx ? grad_in[i] + value : value;
                }
                alpha_partials[chunk] += alpha_sum;
                continue;
            }
            const double mean = stats[2 * row];
            const double rstd = stats[2 * row + 1];
            double mean_dxhat = 0.0;
            double mean_dxhat_xhat = 0.0;
            for (int i = 0; i < d; ++i) {
                const double xhat = (in[i] - mean) * rstd;
                const double dxhat = static_cast<double>(grad_out[i]) * w[i];
                partial[i] += grad_out[i] * xhat;
                if (has_bias) partial[d + i] += grad_out[i];
                mean_dxhat += dxhat;
                mean_dxhat_xhat += dxhat * xhat;
            }
            mean_dxhat = type == NormType::LayerNorm ? mean_dxhat / d : 0.0;
            mean_dxhat_xhat /= d;
            for (int i = 0; i < d; ++i) {
                const double xhat = (in[i] - mean) * rstd;
                const double dxhat = static_cast<double>(grad_out[i]) * w[i];
                const float value = static_cast<float>(rstd * (dxhat - mean_dxhat - xhat * mean_dxhat_xhat));
                grad_in[i] = accumulate_dx ? grad_in[i] + value : value;
            }
        }
    }
    for (int chunk = 0; chunk < chunks; ++chunk) {
        const double* partial = partials.data() + static_cast<size_t>(chunk) * width;
        for (int i = 0; i < d; ++i) dw[i] += static_cast<float>(partial[i]);
        if (has_bias) {
            for (int i = 0; i < d; ++i) db[i] += static_cast<float>(partial[d + i]);
        }
        if (dalpha) *dalpha += static_cast<float>(alpha_partials[chunk]);
    }
}

}  // namespace normlab
