// LayerNorm, RMSNorm and DyT on the CPU, forward and backward, with double accumulators per row.
// Gain/bias gradients are summed per fixed row chunk, then across chunks in order (deterministic).
#include <algorithm>
#include <vector>

#include "engine/backend/cpu/cpu_kernels.h"
#include "engine/backend/cpu/cpu_reference_backend.h"

namespace normlab {

namespace {
constexpr int kRowsPerChunk = 32;  // fixed, so gain gradients do not depend on the thread count
}  // namespace

void CpuReferenceBackend::norm_forward(NormType type, float* y, float* stats, const float* x, const float* w,
                                       const float* b, ScaleRef alpha, int n, int d, float eps) {
    const float dyt_alpha = type == NormType::DyT ? resolve(alpha) : 0.0f;
#pragma omp parallel for schedule(static)
    for (int row = 0; row < n; ++row) {
        norm_forward_row(type, y + static_cast<size_t>(row) * d, stats + 2 * static_cast<size_t>(row),
                         x + static_cast<size_t>(row) * d, w, b, dyt_alpha, d, eps);
    }
}

void CpuReferenceBackend::norm_backward(NormType type, float* dx, float* dw, float* db, float* dalpha,
                                        const float* dy, const float* x, const float* stats, const float* w,
                                        ScaleRef alpha, int n, int d, bool accumulate_dx) {
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
            const size_t at = static_cast<size_t>(row) * d;
            alpha_partials[chunk] += norm_backward_row(type, dx + at, partial, dy + at, x + at,
                                                       stats + 2 * static_cast<size_t>(row), w, dyt_alpha, d,
                                                       has_bias, accumulate_dx);
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
