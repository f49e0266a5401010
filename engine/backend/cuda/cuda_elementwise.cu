// Element-wise ops on the GPU: activations, the gated FFN's product, RoPE, grouped-query attention's
// repeated heads, residual sums with constant or
// learnable scales (read on the device), scale and add, and rounding to a narrow format with its tally. The
// residual backward's two dot products are summed per block and then across blocks in order (deterministic);
// the maths per element is kernel_maths.h's, as on the CPU.
#include "engine/backend/cuda/cuda_backend.h"
#include "engine/backend/cuda/cuda_check.h"
#include "engine/backend/cuda/cuda_device.cuh"
#include "engine/backend/kernel_maths.h"

namespace normlab {

namespace {
using cuda::grid_for;
using cuda::kThreads;
using cuda::kWarp;
using cuda::scale_value;

constexpr unsigned kMaxPartials = 1024;  // residual backward: blocks (one partial each) at most

// Grid-stride loop over [0, count).
#define NORMLAB_FOR_EACH(i, count)                                                           \
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < (count); \
         i += static_cast<size_t>(gridDim.x) * blockDim.x)

template <Activation Kind>
__global__ void activation_forward_kernel(float* y, const float* x, size_t count) {
    NORMLAB_FOR_EACH(i, count) y[i] = activation_value(Kind, x[i]);
}

// dx may alias dy.
template <Activation Kind>
__global__ void activation_backward_kernel(float* dx, const float* dy, const float* x, size_t count) {
    NORMLAB_FOR_EACH(i, count) dx[i] = dy[i] * activation_slope(Kind, x[i]);
}

__global__ void gated_forward_kernel(FeedForward kind, float* h, const float* gate, const float* up,
                                     size_t count) {
    NORMLAB_FOR_EACH(i, count) h[i] = gate_value(kind, gate[i]) * up[i];
}

// dup may alias dh.
__global__ void gated_backward_kernel(FeedForward kind, float* dgate, float* dup, const float* dh,
                                      const float* gate, const float* up, size_t count) {
    NORMLAB_FOR_EACH(i, count) gated_grads(kind, dh[i], gate[i], up[i], dgate[i], dup[i]);
}

// One thread per (row, head, pair): no two threads touch the same element, so in place is safe.
__global__ void rope_kernel(float* x, int stride, int rows, int seq, int heads, int head_dim, float theta,
                            bool inverse) {
    const int half = head_dim / 2;
    const size_t count = static_cast<size_t>(rows) * heads * half;
    NORMLAB_FOR_EACH(i, count) {
        const int pair = static_cast<int>(i % half);
        const size_t head_row = i / half;  // row * heads + head
        const size_t row = head_row / heads;
        float* head = x + row * stride + (head_row % heads) * head_dim;
        rope_turn(head, pair, half, rope_angle(static_cast<int>(row % seq), pair, head_dim, theta, inverse));
    }
}

// dst [rows, heads x head_dim], heads = kv_heads x group: head h of a row is src's head h / group.
__global__ void repeat_heads_kernel(float* dst, const float* src, int stride, int rows, int heads, int group,
                                    int head_dim) {
    const size_t width = static_cast<size_t>(heads) * head_dim;
    NORMLAB_FOR_EACH(i, rows * width) {
        const size_t row = i / width;
        const size_t column = i % width;
        const size_t head = column / head_dim;
        dst[i] = src[row * stride + (head / group) * head_dim + column % head_dim];
    }
}

// One thread per element of dst: the sum of its group's heads, in head order (the CPU's order).
__global__ void sum_head_groups_kernel(float* dst, int stride, const float* src, int rows, int kv_heads,
                                       int group, int head_dim) {
    const size_t kv_width = static_cast<size_t>(kv_heads) * head_dim;
    NORMLAB_FOR_EACH(i, rows * kv_width) {
        const size_t row = i / kv_width;
        const size_t column = i % kv_width;
        const float* first =
            src + row * kv_width * group + (column / head_dim) * group * head_dim + column % head_dim;
        float total = first[0];
        for (int j = 1; j < group; ++j) total += first[static_cast<size_t>(j) * head_dim];
        dst[row * stride + column] = total;
    }
}

__global__ void residual_forward_kernel(float* s, const float* x, const float* f, ScaleRef c, ScaleRef a,
                                        size_t count) {
    const float shortcut = scale_value(c);
    const float branch = scale_value(a);
    NORMLAB_FOR_EACH(i, count) s[i] = shortcut * x[i] + branch * f[i];
}

// dx = c ds, df = a ds (ds may alias dx: each element is read before it is written); partials[block] =
// (sum ds x, sum ds f) of the block's elements.
__global__ void residual_backward_kernel(float* dx, float* df, double* partials, const float* ds,
                                         const float* x, const float* f, ScaleRef c, ScaleRef a,
                                         size_t count) {
    __shared__ double shared[kWarp];
    const float shortcut = scale_value(c);
    const float branch = scale_value(a);
    double shortcut_sum = 0.0;
    double branch_sum = 0.0;
    NORMLAB_FOR_EACH(i, count) {
        const float grad = ds[i];
        shortcut_sum += static_cast<double>(grad) * x[i];
        branch_sum += static_cast<double>(grad) * f[i];
        df[i] = branch * grad;
        dx[i] = shortcut * grad;
    }
    shortcut_sum = cuda::block_sum(shortcut_sum, shared);
    branch_sum = cuda::block_sum(branch_sum, shared);
    if (threadIdx.x == 0) {
        partials[2 * blockIdx.x] = shortcut_sum;
        partials[2 * blockIdx.x + 1] = branch_sum;
    }
}

// *dc += sum of the shortcut partials, *da += sum of the branch partials (when not null); one block.
__global__ void residual_scale_grads_kernel(float* dc, float* da, const double* partials, unsigned blocks) {
    __shared__ double shared[kWarp];
    double shortcut_sum = 0.0;
    double branch_sum = 0.0;
    for (unsigned block = threadIdx.x; block < blocks; block += blockDim.x) {
        shortcut_sum += partials[2 * block];
        branch_sum += partials[2 * block + 1];
    }
    shortcut_sum = cuda::block_sum(shortcut_sum, shared);
    branch_sum = cuda::block_sum(branch_sum, shared);
    if (threadIdx.x == 0) {
        if (dc) *dc += static_cast<float>(shortcut_sum);
        if (da) *da += static_cast<float>(branch_sum);
    }
}

__global__ void scale_kernel(float* x, float factor, size_t count) {
    NORMLAB_FOR_EACH(i, count) x[i] *= factor;
}

__global__ void add_kernel(float* dst, const float* src, size_t count) {
    NORMLAB_FOR_EACH(i, count) dst[i] += src[i];
}

// Each block sums its counts (integers, exact in float up to 2^24 per block) and adds them to the tally;
// the largest |x| goes in by its bits (non-negative floats order as their bits do).
__global__ void round_to_format_kernel(float* dst, const float* src, size_t count, FormatLimits format,
                                       float* tally) {
    __shared__ float shared[kWarp];
    const RoundingRule rule = rounding_rule(format);
    float overflowed = 0.0f, underflowed = 0.0f, max_abs = 0.0f;
    NORMLAB_FOR_EACH(i, count) {
        const float x = src[i];  // read before dst[i] is written: dst may be src
        const RoundedValue rounded = round_with(rule, x);
        if (dst) dst[i] = rounded.value;
        overflowed += static_cast<float>(rounded.overflowed);
        underflowed += static_cast<float>(rounded.underflowed);
        max_abs = fmaxf(max_abs, bits_float(finite_magnitude_bits(x)));
    }
    if (!tally) return;  // the same for every thread of the launch
    overflowed = cuda::block_sum(overflowed, shared);
    underflowed = cuda::block_sum(underflowed, shared);
    max_abs = cuda::block_max(max_abs, shared);
    if (threadIdx.x != 0) return;
    if (overflowed > 0.0f) atomicAdd(tally, overflowed);
    if (underflowed > 0.0f) atomicAdd(tally + 1, underflowed);
    atomicMax(reinterpret_cast<int*>(tally + 2), __float_as_int(max_abs));
}

template <OptimizerKind Kind>
__global__ void optimizer_kernel(OptimizerStep step, float* param, const float* grad, float* m, float* v,
                                 float* update, size_t count) {
    NORMLAB_FOR_EACH(i, count) {
        update[i] = optimizer_delta<Kind>(step, param[i], grad[i], m[i], v[i]);
        param[i] += update[i];
    }
}
}  // namespace

void CudaBackend::activation_forward(Activation kind, float* y, const float* x, size_t count) {
    if (count == 0) return;
    if (kind == Activation::Relu) {
        activation_forward_kernel<Activation::Relu><<<grid_for(count), kThreads, 0, m_stream>>>(y, x, count);
    } else if (kind == Activation::GeluTanh) {
        activation_forward_kernel<Activation::GeluTanh>
            <<<grid_for(count), kThreads, 0, m_stream>>>(y, x, count);
    } else {
        activation_forward_kernel<Activation::Gelu><<<grid_for(count), kThreads, 0, m_stream>>>(y, x, count);
    }
    NORMLAB_CUDA_CHECK_LAUNCH("activation_forward_kernel");
}

void CudaBackend::activation_backward(Activation kind, float* dx, const float* dy, const float* x,
                                      size_t count) {
    if (count == 0) return;
    if (kind == Activation::Relu) {
        activation_backward_kernel<Activation::Relu>
            <<<grid_for(count), kThreads, 0, m_stream>>>(dx, dy, x, count);
    } else if (kind == Activation::GeluTanh) {
        activation_backward_kernel<Activation::GeluTanh>
            <<<grid_for(count), kThreads, 0, m_stream>>>(dx, dy, x, count);
    } else {
        activation_backward_kernel<Activation::Gelu>
            <<<grid_for(count), kThreads, 0, m_stream>>>(dx, dy, x, count);
    }
    NORMLAB_CUDA_CHECK_LAUNCH("activation_backward_kernel");
}

void CudaBackend::gated_forward(FeedForward kind, float* h, const float* gate, const float* up,
                                size_t count) {
    if (count == 0) return;
    gated_forward_kernel<<<grid_for(count), kThreads, 0, m_stream>>>(kind, h, gate, up, count);
    NORMLAB_CUDA_CHECK_LAUNCH("gated_forward_kernel");
}

void CudaBackend::gated_backward(FeedForward kind, float* dgate, float* dup, const float* dh,
                                 const float* gate, const float* up, size_t count) {
    if (count == 0) return;
    gated_backward_kernel<<<grid_for(count), kThreads, 0, m_stream>>>(kind, dgate, dup, dh, gate, up, count);
    NORMLAB_CUDA_CHECK_LAUNCH("gated_backward_kernel");
}

void CudaBackend::rope(float* x, int stride, int rows, int seq, int heads, int head_dim, float theta,
                       bool inverse) {
    const size_t count = static_cast<size_t>(rows) * heads * (head_dim / 2);
    if (count == 0) return;
    rope_kernel<<<grid_for(count), kThreads, 0, m_stream>>>(x, stride, rows, seq, heads, head_dim, theta,
                                                            inverse);
    NORMLAB_CUDA_CHECK_LAUNCH("rope_kernel");
}

void CudaBackend::repeat_heads(float* dst, const float* src, int stride, HeadGroups heads) {
    const size_t count = static_cast<size_t>(heads.rows) * heads.kv_heads * heads.group * heads.head_dim;
    if (count == 0) return;
    repeat_heads_kernel<<<grid_for(count), kThreads, 0, m_stream>>>(
        dst, src, stride, heads.rows, heads.kv_heads * heads.group, heads.group, heads.head_dim);
    NORMLAB_CUDA_CHECK_LAUNCH("repeat_heads_kernel");
}

void CudaBackend::sum_head_groups(float* dst, int stride, const float* src, HeadGroups heads) {
    const size_t count = static_cast<size_t>(heads.rows) * heads.kv_heads * heads.head_dim;
    if (count == 0) return;
    sum_head_groups_kernel<<<grid_for(count), kThreads, 0, m_stream>>>(
        dst, stride, src, heads.rows, heads.kv_heads, heads.group, heads.head_dim);
    NORMLAB_CUDA_CHECK_LAUNCH("sum_head_groups_kernel");
}

void CudaBackend::residual_forward(float* s, const float* x, const float* f, ScaleRef c, ScaleRef a,
                                   size_t count) {
    if (count == 0) return;
    residual_forward_kernel<<<grid_for(count), kThreads, 0, m_stream>>>(s, x, f, c, a, count);
    NORMLAB_CUDA_CHECK_LAUNCH("residual_forward_kernel");
}

void CudaBackend::residual_backward(float* dx, float* df, float* dc, float* da, const float* ds,
                                    const float* x, const float* f, ScaleRef c, ScaleRef a, size_t count) {
    if (count == 0) return;
    const unsigned blocks = grid_for(count, kMaxPartials);
    double* partials = static_cast<double*>(workspace(2 * blocks * sizeof(double)));
    residual_backward_kernel<<<blocks, kThreads, 0, m_stream>>>(dx, df, partials, ds, x, f, c, a, count);
    NORMLAB_CUDA_CHECK_LAUNCH("residual_backward_kernel");
    if (dc || da) {
        residual_scale_grads_kernel<<<1, kThreads, 0, m_stream>>>(dc, da, partials, blocks);
        NORMLAB_CUDA_CHECK_LAUNCH("residual_scale_grads_kernel");
    }
}

void CudaBackend::scale(float* x, float factor, size_t count) {
    if (count == 0) return;
    scale_kernel<<<grid_for(count), kThreads, 0, m_stream>>>(x, factor, count);
    NORMLAB_CUDA_CHECK_LAUNCH("scale_kernel");
}

void CudaBackend::add(float* dst, const float* src, size_t count) {
    if (count == 0) return;
    add_kernel<<<grid_for(count), kThreads, 0, m_stream>>>(dst, src, count);
    NORMLAB_CUDA_CHECK_LAUNCH("add_kernel");
}

void CudaBackend::round_to_format(float* dst, const float* src, size_t count, FormatLimits format,
                                  float* tally) {
    if (count == 0) return;
    round_to_format_kernel<<<grid_for(count), kThreads, 0, m_stream>>>(dst, src, count, format, tally);
    NORMLAB_CUDA_CHECK_LAUNCH("round_to_format_kernel");
}

// update = the optimizer's step from (grad * grad_scale, moments), param += update; the formula is
// kernel_maths.h's optimizer_delta, as on the CPU.
void CudaBackend::optimizer_update(const OptimizerStep& step, float* param, const float* grad, float* m,
                                   float* v, float* update, size_t count) {
    if (count == 0) return;
    const unsigned blocks = grid_for(count);
    switch (step.kind) {
        case OptimizerKind::Sgd:
            optimizer_kernel<OptimizerKind::Sgd>
                <<<blocks, kThreads, 0, m_stream>>>(step, param, grad, m, v, update, count);
            break;
        case OptimizerKind::Adam:
            optimizer_kernel<OptimizerKind::Adam>
                <<<blocks, kThreads, 0, m_stream>>>(step, param, grad, m, v, update, count);
            break;
        case OptimizerKind::AdamW:
            optimizer_kernel<OptimizerKind::AdamW>
                <<<blocks, kThreads, 0, m_stream>>>(step, param, grad, m, v, update, count);
            break;
        case OptimizerKind::RAdam:
            optimizer_kernel<OptimizerKind::RAdam>
                <<<blocks, kThreads, 0, m_stream>>>(step, param, grad, m, v, update, count);
            break;
    }
    NORMLAB_CUDA_CHECK_LAUNCH("optimizer_kernel");
}

}  // namespace normlab
