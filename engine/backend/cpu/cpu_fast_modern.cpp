// The fast CPU backend's ops of current LLM blocks: the gated FFN's product (SwiGLU, GeGLU), RoPE and
// grouped-query attention's repeated heads, the reference's per-element and per-row maths (kernel_maths.h,
// cpu_kernels.h) on chunks the task pool's threads claim.
#include "engine/backend/cpu/cpu_backend.h"
#include "engine/backend/cpu/cpu_kernels.h"
#include "engine/backend/cpu/cpu_parallel.h"

namespace normlab {

namespace {
constexpr int64_t kElementAlign = 16;  // element ranges start on 64-byte boundaries
constexpr int64_t kGatedWork = 24;     // an exp or an erf per element
}  // namespace

void CpuBackend::gated_forward(FeedForward kind, float* h, const float* gate, const float* up, size_t count) {
    const auto total = static_cast<int64_t>(count);
    parallel_ranges(m_pool, total, total * kGatedWork, kElementAlign, [&](int, Range r) {
        for (int64_t i = r.begin; i < r.end; ++i) h[i] = gate_value(kind, gate[i]) * up[i];
    });
}

void CpuBackend::gated_backward(FeedForward kind, float* dgate, float* dup, const float* dh,
                                const float* gate, const float* up, size_t count) {
    const auto total = static_cast<int64_t>(count);
    parallel_ranges(m_pool, total, total * kGatedWork, kElementAlign, [&](int, Range r) {
        for (int64_t i = r.begin; i < r.end; ++i) gated_grads(kind, dh[i], gate[i], up[i], dgate[i], dup[i]);
    });
}

void CpuBackend::rope(float* x, int stride, int rows, int seq, int heads, int head_dim, float theta,
                      bool inverse) {
    const int64_t work = static_cast<int64_t>(rows) * heads * head_dim * 4;
    parallel_ranges(m_pool, rows, work, 1, [&](int, Range r) {
        for (int64_t row = r.begin; row < r.end; ++row)
            rope_row(x + row * stride, heads, head_dim, static_cast<int>(row % seq), theta, inverse);
    });
}

void CpuBackend::repeat_heads(float* dst, const float* src, int stride, HeadGroups heads) {
    const int64_t width = static_cast<int64_t>(heads.kv_heads) * heads.group * heads.head_dim;
    parallel_ranges(m_pool, heads.rows, heads.rows * width, 1, [&](int, Range r) {
        for (int64_t row = r.begin; row < r.end; ++row)
            repeat_heads_row(dst + row * width, src + row * stride, heads);
    });
}

void CpuBackend::sum_head_groups(float* dst, int stride, const float* src, HeadGroups heads) {
    const int64_t width = static_cast<int64_t>(heads.kv_heads) * heads.group * heads.head_dim;
    parallel_ranges(m_pool, heads.rows, heads.rows * width, 1, [&](int, Range r) {
        for (int64_t row = r.begin; row < r.end; ++row)
            sum_head_groups_row(dst + row * stride, src + row * width, heads);
    });
}

}  // namespace normlab
