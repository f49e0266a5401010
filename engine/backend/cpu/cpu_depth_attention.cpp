// Attention over depth on the CPU (model.residual=attn_res): the softmax over sources of each token's
// scores and the weighted sum of the sources' rows, forward and backward, one token's row at a time
// (cpu_kernels.h), so the result does not depend on the thread count. The reference splits the rows with
// OpenMP, the fast backend with its task pool (no allocation in a step).
#include "engine/backend/cpu/cpu_backend.h"
#include "engine/backend/cpu/cpu_kernels.h"
#include "engine/backend/cpu/cpu_parallel.h"
#include "engine/backend/cpu/cpu_reference_backend.h"

namespace normlab {

void CpuReferenceBackend::depth_softmax_forward(float* p, const float* logits, int sources, int n) {
#pragma omp parallel for schedule(static)
    for (int r = 0; r < n; ++r) depth_softmax_row(p, logits, sources, n, r);
}

void CpuReferenceBackend::depth_softmax_backward(float* dlogits, const float* dp, const float* p, int sources,
                                                 int n) {
#pragma omp parallel for schedule(static)
    for (int r = 0; r < n; ++r) depth_softmax_backward_row(dlogits, dp, p, sources, n, r);
}

void CpuReferenceBackend::depth_mix_forward(float* h, const float* p, const float* v, int sources, int n,
                                            int d) {
#pragma omp parallel for schedule(static)
    for (int r = 0; r < n; ++r) depth_mix_row(h, p, v, sources, n, d, r);
}

void CpuReferenceBackend::depth_mix_backward(float* dv, float* dp, const float* dh, const float* p,
                                             const float* v, int sources, int n, int d) {
#pragma omp parallel for schedule(static)
    for (int r = 0; r < n; ++r) depth_mix_backward_row(dv, dp, dh, p, v, sources, n, d, r);
}

void CpuBackend::depth_softmax_forward(float* p, const float* logits, int sources, int n) {
    parallel_ranges(m_pool, n, static_cast<int64_t>(n) * sources * 8, 1, [&](int, Range rows) {
        for (int64_t r = rows.begin; r < rows.end; ++r) depth_softmax_row(p, logits, sources, n, r);
    });
}

void CpuBackend::depth_softmax_backward(float* dlogits, const float* dp, const float* p, int sources, int n) {
    parallel_ranges(m_pool, n, static_cast<int64_t>(n) * sources * 4, 1, [&](int, Range rows) {
        for (int64_t r = rows.begin; r < rows.end; ++r)
            depth_softmax_backward_row(dlogits, dp, p, sources, n, r);
    });
}

void CpuBackend::depth_mix_forward(float* h, const float* p, const float* v, int sources, int n, int d) {
    parallel_ranges(m_pool, n, static_cast<int64_t>(n) * sources * d, 1, [&](int, Range rows) {
        for (int64_t r = rows.begin; r < rows.end; ++r) depth_mix_row(h, p, v, sources, n, d, r);
    });
}

void CpuBackend::depth_mix_backward(float* dv, float* dp, const float* dh, const float* p, const float* v,
                                    int sources, int n, int d) {
    parallel_ranges(m_pool, n, static_cast<int64_t>(n) * sources * d * 2, 1, [&](int, Range rows) {
        for (int64_t r = rows.begin; r < rows.end; ++r)
            depth_mix_backward_row(dv, dp, dh, p, v, sources, n, d, r);
    });
}

}  // namespace normlab
