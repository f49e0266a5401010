// Element-wise CPU ops: activations (ReLU, exact-erf GELU), the gated FFN's product, RoPE, grouped-query
// attention's repeated heads, residual sums with
// constant or learnable scales, scale and add. Scalar-gradient reductions are summed in fixed chunks, in
// order.
#include <cmath>
#include <vector>

#include "engine/backend/cpu/cpu_kernels.h"
#include "engine/backend/cpu/cpu_reference_backend.h"

namespace normlab {

namespace {
constexpr size_t kElementsPerChunk = 8192;
}  // namespace

void CpuReferenceBackend::activation_forward(Activation kind, float* y, const float* x, size_t count) {
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < count; ++i) y[i] = activation_value(kind, x[i]);
}

void CpuReferenceBackend::activation_backward(Activation kind, float* dx, const float* dy, const float* x,
                                              size_t count) {
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < count; ++i) dx[i] = dy[i] * activation_slope(kind, x[i]);
}

void CpuReferenceBackend::gated_forward(FeedForward kind, float* h, const float* gate, const float* up,
                                        size_t count) {
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < count; ++i) h[i] = gate_value(kind, gate[i]) * up[i];
}

void CpuReferenceBackend::gated_backward(FeedForward kind, float* dgate, float* dup, const float* dh,
                                         const float* gate, const float* up, size_t count) {
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < count; ++i) gated_grads(kind, dh[i], gate[i], up[i], dgate[i], dup[i]);
}

void CpuReferenceBackend::rope(float* x, int stride, int rows, int seq, int heads, int head_dim, float theta,
                               bool inverse) {
#pragma omp parallel for schedule(static)
    for (int row = 0; row < rows; ++row)
        rope_row(x + static_cast<size_t>(row) * stride, heads, head_dim, row % seq, theta, inverse);
}

void CpuReferenceBackend::repeat_heads(float* dst, const float* src, int stride, HeadGroups heads) {
    const size_t width = static_cast<size_t>(heads.kv_heads) * heads.group * heads.head_dim;
#pragma omp parallel for schedule(static)
    for (int row = 0; row < heads.rows; ++row)
        repeat_heads_row(dst + row * width, src + static_cast<size_t>(row) * stride, heads);
}

void CpuReferenceBackend::sum_head_groups(float* dst, int stride, const float* src, HeadGroups heads) {
    const size_t width = static_cast<size_t>(heads.kv_heads) * heads.group * heads.head_dim;
#pragma omp parallel for schedule(static)
    for (int row = 0; row < heads.rows; ++row)
        sum_head_groups_row(dst + static_cast<size_t>(row) * stride, src + row * width, heads);
}

void CpuReferenceBackend::residual_forward(float* s, const float* x, const float* f, ScaleRef c, ScaleRef a,
                                           size_t count) {
    const float shortcut = resolve(c);
    const float branch = resolve(a);
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < count; ++i) s[i] = shortcut * x[i] + branch * f[i];
}

void CpuReferenceBackend::residual_backward(float* dx, float* df, float* dc, float* da, const float* ds,
                                            const float* x, const float* f, ScaleRef c, ScaleRef a,
                                            size_t count) {
    const float shortcut = resolve(c);
    const float branch = resolve(a);
    const size_t chunks = (count + kElementsPerChunk - 1) / kElementsPerChunk;
    std::vector<double> shortcut_partials(chunks, 0.0);
    std::vector<double> branch_partials(chunks, 0.0);
#pragma omp parallel for schedule(static)
    for (size_t chunk = 0; chunk < chunks; ++chunk) {
        const size_t end = std::min(count, (chunk + 1) * kElementsPerChunk);
        double shortcut_sum = 0.0;
        double branch_sum = 0.0;
        for (size_t i = chunk * kElementsPerChunk; i < end; ++i) {
            const float grad = ds[i];
            shortcut_sum += static_cast<double>(grad) * x[i];
            branch_sum += static_cast<double>(grad) * f[i];
            df[i] = branch * grad;
            dx[i] = shortcut * grad;
        }
        shortcut_partials[chunk] = shortcut_sum;
        branch_partials[chunk] = branch_sum;
    }
    double shortcut_total = 0.0;
    double branch_total = 0.0;
    for (size_t chunk = 0; chunk < chunks; ++chunk) {
        shortcut_total += shortcut_partials[chunk];
        branch_total += branch_partials[chunk];
    }
    if (dc) *dc += static_cast<float>(shortcut_total);
    if (da) *da += static_cast<float>(branch_total);
}

void CpuReferenceBackend::scale(float* x, float factor, size_t count) {
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < count; ++i) x[i] *= factor;
}

void CpuReferenceBackend::add(float* dst, const float* src, size_t count) {
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < count; ++i) dst[i] += src[i];
}

void CpuReferenceBackend::round_to_format(float* dst, const float* src, size_t count, FormatLimits format,
                                          float* tally) {
    RoundingTally total;
    total.round(dst, src, count, format);
    if (tally) total.add_to(tally);
}

}  // namespace normlab
