// BatchNorm and PowerNorm on the CPU, one tile of 16 feature columns (one cache line of a row) at a time:
// each tile sums every row in order in double, so the result does not depend on how tiles are shared out.
// The reference backend spreads the tiles with OpenMP, the fast one over its task pool: the same values.
#pragma once
#include <algorithm>
#include <array>

#include "engine/backend/kernel_maths.h"

namespace normlab {

inline constexpr int kFeatureTile = 16;

inline int feature_tile_count(int d) {
    return (d + kFeatureTile - 1) / kFeatureTile;
}

namespace feature_tiles {
constexpr int kTile = kFeatureTile;

// The batch's mean and variance (BatchNorm: centred; PowerNorm: the quadratic mean) of columns
// [c0, c0 + width).
inline void tile_moments(NormType type, const float* x, int n, int d, int c0, int width,
                         std::array<double, kTile>& mean, std::array<double, kTile>& var) {
    mean.fill(0.0);
    var.fill(0.0);
    if (type == NormType::BatchNorm) {
        for (int r = 0; r < n; ++r) {
            const float* row = x + static_cast<size_t>(r) * d + c0;
            for (int j = 0; j < width; ++j) mean[j] += row[j];
        }
        for (int j = 0; j < width; ++j) mean[j] /= n;
    }
    for (int r = 0; r < n; ++r) {
        const float* row = x + static_cast<size_t>(r) * d + c0;
        for (int j = 0; j < width; ++j) var[j] += (row[j] - mean[j]) * (row[j] - mean[j]);
    }
    for (int j = 0; j < width; ++j) var[j] /= n;
}
}  // namespace feature_tiles

// The forward pass (Backend::feature_norm_forward) of columns [tile * 16, tile * 16 + 16).
inline void feature_norm_forward_tile(NormType type, float* y, const float* x, const float* w, const float* b,
                                      const FeatureNormState& state, FeatureStatistics mode, int n, int d,
                                      int tile) {
    using namespace feature_tiles;
    const int c0 = tile * kTile;
    const int width = std::min(kTile, d - c0);
    std::array<double, kTile> mean{}, var{};
    if (needs_batch_statistics(type, mode)) tile_moments(type, x, n, d, c0, width, mean, var);
    for (int j = 0; j < width; ++j) feature_forward_column(type, state, mode, c0 + j, mean[j], var[j], n);
    for (int r = 0; r < n; ++r) {
        const size_t at = static_cast<size_t>(r) * d + c0;
        for (int j = 0; j < width; ++j) {
            const int c = c0 + j;
            const float xhat = (x[at + j] - state.mean[c]) * state.rstd[c];
            y[at + j] = w[c] * xhat + (b ? b[c] : 0.0f);
        }
    }
}

// The backward pass (Backend::feature_norm_backward) of the same columns.
inline void feature_norm_backward_tile(NormType type, float* dx, float* dw, float* db, const float* dy,
                                       const float* x, const float* w, const FeatureNormState& state,
                                       FeatureStatistics mode, int n, int d, bool accumulate_dx, int tile) {
    using namespace feature_tiles;
    const int c0 = tile * kTile;
    const int width = std::min(kTile, d - c0);
    std::array<double, kTile> sum_dy{}, sum_dy_xhat{}, sum_xhat2{};
    for (int r = 0; r < n; ++r) {
        const size_t at = static_cast<size_t>(r) * d + c0;
        for (int j = 0; j < width; ++j) {
            const double xhat = (x[at + j] - state.mean[c0 + j]) * state.rstd[c0 + j];
            sum_dy[j] += dy[at + j];
            sum_dy_xhat[j] += dy[at + j] * xhat;
            sum_xhat2[j] += xhat * xhat;
        }
    }
    std::array<float, kTile> shift{}, slope{};
    for (int j = 0; j < width; ++j) {
        const int c = c0 + j;
        dw[c] += static_cast<float>(sum_dy_xhat[j]);
        if (db) db[c] += static_cast<float>(sum_dy[j]);
        feature_backward_column(type, state, mode, c, w[c], sum_dy[j], sum_dy_xhat[j], sum_xhat2[j], n,
                                shift[j], slope[j]);
    }
    for (int r = 0; r < n; ++r) {
        const size_t at = static_cast<size_t>(r) * d + c0;
        for (int j = 0; j < width; ++j) {
            const int c = c0 + j;
            const float xhat = (x[at + j] - state.mean[c]) * state.rstd[c];
            const float value = norm_input_grad(state.rstd[c], w[c] * dy[at + j], xhat, shift[j], slope[j]);
            dx[at + j] = accumulate_dx ? dx[at + j] + value : value;
        }
    }
}

}  // namespace normlab
