// LayerNorm, RMSNorm and DyT on the CPU, forward and backward, with double accumulators per row.
// Gain/bias gradients are summed per fixed row chunk, then across chunks in order (deterministic).
#include <algorithm>
#include <vector>

#include "engine/backend/cpu/cpu_kernels.h"
#include "engine/backend/cpu/cpu_reference_backend.h"

namespace normlab {

namespace {
constexpr int kRowsPerChunk = 32;  // fixed, so gain gradients do not depend on the thread count

// Both forward ops: every row through norm_forward_row (frozen_rstd 0: each row's own scale).
void forward_rows(NormType type, float* y, float* stats, const float* x, const float* w, const float* b,
                  float dyt_alpha, int n, int d, float eps, float frozen_rstd) {
#pragma omp parallel for schedule(static)
    for (int row = 0; row < n; ++row) {
        norm_forward_row(type, y + static_cast<size_t>(row) * d, stats + 2 * static_cast<size_t>(row),
                         x + static_cast<size_t>(row) * d, w, b, dyt_alpha, d, eps, frozen_rstd);
    }
}

// Both backward ops: per-chunk partial sums of the gain, bias and alpha gradients, then across chunks.
void backward_rows(NormType type, float* dx, float* dw, float* db, float* dalpha, const float* dy,
                   const float* x, const float* stats, const float* w, float dyt_alpha, int n, int d,
                   bool accumulate_dx, bool frozen_scale) {
    const int chunks = (n + kRowsPerChunk - 1) / kRowsPerChunk;
    const bool has_bias = type != NormType::RmsNorm && db;
    const int width = has_bias ? 2 * d : d;  // [dw | db] per chunk
    std::vector<double> partials(static_cast<size_t>(chunks) * width, 0.0);
    std::vector<double> alpha_partials(chunks, 0.0);
#pragma omp parallel for schedule(static)
    for (int chunk = 0; chunk < chunks; ++chunk) {
        double* partial = partials.data() + static_cast<size_t>(chunk) * width;
        const int row_end = std::min(n, (chunk + 1) * kRowsPerChunk);
        for (int row = chunk * kRowsPerChunk; row < row_end; ++row) {
            const size_t at = static_cast<size_t>(row) * d;
            alpha_partials[chunk] += norm_backward_row(type, dx + at, partial, dy + at, x + at,
                                                       stats + 2 * static_cast<size_t>(row), w, dyt_alpha, d,
                                                       has_bias, accumulate_dx, frozen_scale);
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
}  // namespace

void CpuReferenceBackend::norm_forward(NormType type, float* y, float* stats, const float* x, const float* w,
                                       const float* b, ScaleRef alpha, int n, int d, float eps) {
    forward_rows(type, y, stats, x, w, b, type == NormType::DyT ? resolve(alpha) : 0.0f, n, d, eps, 0.0f);
}

void CpuReferenceBackend::norm_backward(NormType type, float* dx, float* dw, float* db, float* dalpha,
                                        const float* dy, const float* x, const float* stats, const float* w,
                                        ScaleRef alpha, int n, int d, bool accumulate_dx) {
    backward_rows(type, dx, dw, db, dalpha, dy, x, stats, w, type == NormType::DyT ? resolve(alpha) : 0.0f, n,
                  d, accumulate_dx, false);
}

void CpuReferenceBackend::frozen_norm_forward(NormType type, float* y, float* stats, const float* x,
                                              const float* w, const float* b, float rstd, int n, int d) {
    check_frozen_norm(type, rstd);
    forward_rows(type, y, stats, x, w, b, 0.0f, n, d, 0.0f, rstd);
}

void CpuReferenceBackend::frozen_norm_backward(NormType type, float* dx, float* dw, float* db,
                                               const float* dy, const float* x, const float* stats,
                                               const float* w, int n, int d, bool accumulate_dx) {
    check_frozen_norm(type, 1.0f);
    backward_rows(type, dx, dw, db, nullptr, dy, x, stats, w, 0.0f, n, d, accumulate_dx, true);
}

}  // namespace normlab
