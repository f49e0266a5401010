// BatchNorm and PowerNorm on the CPU (feature norms: each column of x[n, d] over the pass's rows): the
// reference backend's tiles spread with OpenMP, the fast backend's over its task pool. The per-tile work
// is feature_norm_tiles.h's, so both give the same values for any thread count.
#include "engine/backend/cpu/cpu_backend.h"
#include "engine/backend/cpu/cpu_parallel.h"
#include "engine/backend/cpu/feature_norm_tiles.h"

namespace normlab {

void CpuReferenceBackend::feature_norm_forward(NormType type, float* y, const float* x, const float* w,
                                               const float* b, const FeatureNormState& state,
                                               FeatureStatistics mode, int n, int d) {
    const int tiles = feature_tile_count(d);
#pragma omp parallel for schedule(static)
    for (int tile = 0; tile < tiles; ++tile)
        feature_norm_forward_tile(type, y, x, w, b, state, mode, n, d, tile);
}

void CpuReferenceBackend::feature_norm_backward(NormType type, float* dx, float* dw, float* db,
                                                const float* dy, const float* x, const float* w,
                                                const FeatureNormState& state, FeatureStatistics mode, int n,
                                                int d, bool accumulate_dx) {
    const int tiles = feature_tile_count(d);
#pragma omp parallel for schedule(static)
    for (int tile = 0; tile < tiles; ++tile)
        feature_norm_backward_tile(type, dx, dw, db, dy, x, w, state, mode, n, d, accumulate_dx, tile);
}

void CpuBackend::feature_norm_forward(NormType type, float* y, const float* x, const float* w, const float* b,
                                      const FeatureNormState& state, FeatureStatistics mode, int n, int d) {
    parallel_ranges(m_pool, feature_tile_count(d), static_cast<int64_t>(n) * d * 4, 1, [&](int, Range tiles) {
        for (int64_t tile = tiles.begin; tile < tiles.end; ++tile)
            feature_norm_forward_tile(type, y, x, w, b, state, mode, n, d, static_cast<int>(tile));
    });
}

void CpuBackend::feature_norm_backward(NormType type, float* dx, float* dw, float* db, const float* dy,
                                       const float* x, const float* w, const FeatureNormState& state,
                                       FeatureStatistics mode, int n, int d, bool accumulate_dx) {
    parallel_ranges(m_pool, feature_tile_count(d), static_cast<int64_t>(n) * d * 8, 1, [&](int, Range tiles) {
        for (int64_t tile = tiles.begin; tile < tiles.end; ++tile)
            feature_norm_backward_tile(type, dx, dw, db, dy, x, w, state, mode, n, d, accumulate_dx,
                                       static_cast<int>(tile));
    });
}

}  // namespace normlab
