// Fast row-wise and element-wise ops: the reference's per-row and per-element maths (cpu_kernels.h) on
// chunks the threads claim; reductions keep one partial per chunk in the workspace and add them in
// chunk order (deterministic for a given thread count), and small ops stay on one thread.
#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/backend/cpu/cpu_kernels.h"
#include "engine/backend/cpu/cpu_parallel.h"

namespace normlab {

namespace {
constexpr int64_t kElementAlign = 16;  // element ranges start on 64-byte boundaries

// Calls body(kind) with the activation as a compile-time constant, so the loop inside vectorises.
template <class Body>
void with_activation(Activation kind, Body&& body) {
    if (kind == Activation::Relu) {
        body(std::integral_constant<Activation, Activation::Relu>{});
    } else if (kind == Activation::GeluTanh) {
        body(std::integral_constant<Activation, Activation::GeluTanh>{});
    } else {
        body(std::integral_constant<Activation, Activation::Gelu>{});
    }
}

// The same for the optimizer kind.
template <class Body>
void with_optimizer(OptimizerKind kind, Body&& body) {
    switch (kind) {
        case OptimizerKind::Sgd:
            return body(std::integral_constant<OptimizerKind, OptimizerKind::Sgd>{});
        case OptimizerKind::Adam:
            return body(std::integral_constant<OptimizerKind, OptimizerKind::Adam>{});
        case OptimizerKind::AdamW:
            return body(std::integral_constant<OptimizerKind, OptimizerKind::AdamW>{});
        case OptimizerKind::RAdam:
            return body(std::integral_constant<OptimizerKind, OptimizerKind::RAdam>{});
    }
}

// One optimizer's update of `count` elements; the five arrays are distinct, and saying so lets the
// loop vectorise without alias checks.
template <OptimizerKind Kind>
void update_elements(const OptimizerStep& step, float* __restrict param, const float* __restrict grad,
                     float* __restrict m, float* __restrict v, float* __restrict update, int64_t count) {
    for (int64_t i = 0; i < count; ++i) {
        update[i] = optimizer_delta<Kind>(step, param[i], grad[i], m[i], v[i]);
        param[i] += update[i];
    }
}

// sum of term(values[i]) over [0, count) in lane_sum's fixed order.
template <class Term>
double lane_sum_of(const float* values, int64_t count, Term term) {
    return lane_sum(count, [&](int64_t i) { return term(static_cast<double>(values[i])); });
}

// The slices' elements laid end to end.
int64_t total_count(const std::vector<Slice>& slices) {
    int64_t total = 0;
    for (const Slice& slice : slices) total += static_cast<int64_t>(slice.count);
    return total;
}

// Calls part(s, offset, size) for the piece of each slice s that falls inside `chunk` of the slices laid
// end to end (offset into the buffer the slices describe).
template <class Part>
void for_slice_parts(const std::vector<Slice>& slices, Range chunk, Part&& part) {
    int64_t start = 0;
    for (size_t s = 0; s < slices.size() && start < chunk.end; ++s) {
        const int64_t end = start + static_cast<int64_t>(slices[s].count);
        const int64_t from = std::max(start, chunk.begin);
        const int64_t to = std::min(end, chunk.end);
        if (from < to) part(s, static_cast<int64_t>(slices[s].offset) + (from - start), to - from);
        start = end;
    }
}

// out[k][s] = the sum over chunks, in chunk order, of partials[chunk][k][s] (outputs that are null are
// skipped).
template <size_t K>
void add_partials(const double* partials, int chunks, size_t count, std::array<double*, K> out) {
    for (size_t k = 0; k < K; ++k) {
        if (!out[k]) continue;
        for (size_t s = 0; s < count; ++s) {
            double sum = 0.0;
            for (int chunk = 0; chunk < chunks; ++chunk) sum += partials[(chunk * K + k) * count + s];
            out[k][s] = sum;
        }
    }
}
}  // namespace

double* CpuBackend::scratch_doubles(size_t count) {
    if (m_doubles.size() < count) m_doubles.resize(count);
    std::fill(m_doubles.begin(), m_doubles.begin() + static_cast<std::ptrdiff_t>(count), 0.0);
    return m_doubles.data();
}

float* CpuBackend::scratch_floats(size_t count) {
    if (m_floats.size() < count) m_floats.resize(count);
    return m_floats.data();
}

void CpuBackend::norm_rows_forward(NormType type, float* y, float* stats, const float* x, const float* w,
                                   const float* b, float dyt_alpha, int n, int d, float eps,
                                   float frozen_rstd) {
    parallel_ranges(m_pool, n, static_cast<int64_t>(n) * d * 4, 1, [&](int, Range rows) {
        for (int64_t row = rows.begin; row < rows.end; ++row)
            norm_forward_row(type, y + row * d, stats + 2 * row, x + row * d, w, b, dyt_alpha, d, eps,
                             frozen_rstd);
    });
}

void CpuBackend::norm_rows_backward(NormType type, float* dx, float* dw, float* db, float* dalpha,
                                    const float* dy, const float* x, const float* stats, const float* w,
                                    float dyt_alpha, int n, int d, bool accumulate_dx, bool frozen_scale) {
    const bool has_bias = type != NormType::RmsNorm && db;
    const size_t width = has_bias ? 2 * static_cast<size_t>(d) + 1 : static_cast<size_t>(d) + 1;
    const int chunks = chunk_count(m_threads, n, static_cast<int64_t>(n) * d * 8, 1);
    double* partials = scratch_doubles(width * chunks);  // per chunk: [dw | db | dalpha]
    parallel_chunks(m_pool, chunks, n, 1, [&](int chunk, Range rows) {
        double* partial = partials + chunk * width;
        for (int64_t row = rows.begin; row < rows.end; ++row) {
            partial[width - 1] +=
                norm_backward_row(type, dx + row * d, partial, dy + row * d, x + row * d, stats + 2 * row, w,
                                  dyt_alpha, d, has_bias, accumulate_dx, frozen_scale);
        }
    });
    for (int chunk = 0; chunk < chunks; ++chunk) {
        const double* partial = partials + chunk * width;
        for (int i = 0; i < d; ++i) dw[i] += static_cast<float>(partial[i]);
        if (has_bias) {
            for (int i = 0; i < d; ++i) db[i] += static_cast<float>(partial[d + i]);
        }
        if (dalpha) *dalpha += static_cast<float>(partial[width - 1]);
    }
}

void CpuBackend::norm_forward(NormType type, float* y, float* stats, const float* x, const float* w,
                              const float* b, ScaleRef alpha, int n, int d, float eps) {
    norm_rows_forward(type, y, stats, x, w, b, type == NormType::DyT ? resolve(alpha) : 0.0f, n, d, eps,
                      0.0f);
}

void CpuBackend::norm_backward(NormType type, float* dx, float* dw, float* db, float* dalpha, const float* dy,
                               const float* x, const float* stats, const float* w, ScaleRef alpha, int n,
                               int d, bool accumulate_dx) {
    norm_rows_backward(type, dx, dw, db, dalpha, dy, x, stats, w,
                       type == NormType::DyT ? resolve(alpha) : 0.0f, n, d, accumulate_dx, false);
}

void CpuBackend::frozen_norm_forward(NormType type, float* y, float* stats, const float* x, const float* w,
                                     const float* b, float rstd, int n, int d) {
    check_frozen_norm(type, rstd);
    norm_rows_forward(type, y, stats, x, w, b, 0.0f, n, d, 0.0f, rstd);
}

void CpuBackend::frozen_norm_backward(NormType type, float* dx, float* dw, float* db, const float* dy,
                                      const float* x, const float* stats, const float* w, int n, int d,
                                      bool accumulate_dx) {
    check_frozen_norm(type, 1.0f);
    norm_rows_backward(type, dx, dw, db, nullptr, dy, x, stats, w, 0.0f, n, d, accumulate_dx, true);
}

Backend::CrossEntropyResult CpuBackend::cross_entropy(float* dlogits, const float* logits,
                                                      const int32_t* targets, int n, int vocab,
                                                      bool want_gradient, float z_loss) {
    int64_t scored = 0;
    for (int row = 0; row < n; ++row) scored += targets[row] >= 0 ? 1 : 0;
    const float inverse_scored = scored > 0 ? 1.0f / static_cast<float>(scored) : 0.0f;
    const int chunks = chunk_count(m_threads, n, static_cast<int64_t>(n) * vocab * 8, 1);
    m_loss_partials.assign(static_cast<size_t>(chunks),
                           CrossEntropyTotals{});  // capacity kept: no allocation
    parallel_chunks(m_pool, chunks, n, 1, [&](int chunk, Range rows) {
        for (int64_t row = rows.begin; row < rows.end; ++row) {
            float* grad = want_gradient ? dlogits + row * vocab : nullptr;
            if (targets[row] < 0) {
                if (grad) std::fill(grad, grad + vocab, 0.0f);
                continue;
            }
            m_loss_partials[chunk].add(
                cross_entropy_row(grad, logits + row * vocab, targets[row], vocab, inverse_scored, z_loss),
                z_loss);
        }
    });
    CrossEntropyTotals totals;
    for (const CrossEntropyTotals& partial : m_loss_partials) totals.add(partial);
    return totals.result(scored);
}

void CpuBackend::activation_forward(Activation kind, float* y, const float* x, size_t count) {
    const int64_t work = static_cast<int64_t>(count) * (kind == Activation::Relu ? 1 : 16);
    with_activation(kind, [&](auto constant) {
        parallel_ranges(m_pool, static_cast<int64_t>(count), work, kElementAlign, [&](int, Range r) {
            for (int64_t i = r.begin; i < r.end; ++i) y[i] = activation_value(constant, x[i]);
        });
    });
}

void CpuBackend::activation_backward(Activation kind, float* dx, const float* dy, const float* x,
                                     size_t count) {
    const int64_t work = static_cast<int64_t>(count) * (kind == Activation::Relu ? 1 : 16);
    with_activation(kind, [&](auto constant) {
        parallel_ranges(m_pool, static_cast<int64_t>(count), work, kElementAlign, [&](int, Range r) {
            for (int64_t i = r.begin; i < r.end; ++i) dx[i] = dy[i] * activation_slope(constant, x[i]);
        });
    });
}

void CpuBackend::residual_forward(float* s, const float* x, const float* f, ScaleRef c, ScaleRef a,
                                  size_t count) {
    const float shortcut = resolve(c);
    const float branch = resolve(a);
    parallel_ranges(m_pool, static_cast<int64_t>(count), static_cast<int64_t>(count), kElementAlign,
                    [&](int, Range r) {
                        for (int64_t i = r.begin; i < r.end; ++i) s[i] = shortcut * x[i] + branch * f[i];
                    });
}

// Each chunk adds its part of s and takes that part's sums while it is still in cache; the chunks'
// sums are added in chunk order.
void CpuBackend::residual_forward_with_sums(float* s, const float* x, const float* f, ScaleRef c, ScaleRef a,
                                            size_t count, ResidualSums sums) {
    const float shortcut = resolve(c);
    const float branch = resolve(a);
    const int64_t total = static_cast<int64_t>(count);
    const int chunks = chunk_count(m_threads, total, total * 3, kElementAlign);
    double* partials = scratch_doubles(4 * static_cast<size_t>(chunks));  // per chunk: s, s^2, f, f^2
    parallel_chunks(m_pool, chunks, total, kElementAlign, [&](int chunk, Range r) {
        for (int64_t i = r.begin; i < r.end; ++i) s[i] = shortcut * x[i] + branch * f[i];
        const std::array<double, 2> of_sum = lane_sum_and_squares(s + r.begin, r.size());
        const std::array<double, 2> of_branch = lane_sum_and_squares(f + r.begin, r.size());
        std::copy(of_sum.begin(), of_sum.end(), partials + 4 * chunk);
        std::copy(of_branch.begin(), of_branch.end(), partials + 4 * chunk + 2);
    });
    add_partials<4>(partials, chunks, 1,
                    {sums.values, sums.squares, sums.branch_values, sums.branch_squares});
}

void CpuBackend::residual_backward(float* dx, float* df, float* dc, float* da, const float* ds,
                                   const float* x, const float* f, ScaleRef c, ScaleRef a, size_t count) {
    const float shortcut = resolve(c);
    const float branch = resolve(a);
    const bool want_sums = dc || da;
    const int64_t work = static_cast<int64_t>(count) * (want_sums ? 4 : 1);
    const int chunks = chunk_count(m_threads, static_cast<int64_t>(count), work, kElementAlign);
    double* partials = scratch_doubles(2 * static_cast<size_t>(chunks));  // per chunk: <ds,x>, <ds,f>
    parallel_chunks(m_pool, chunks, static_cast<int64_t>(count), kElementAlign, [&](int chunk, Range r) {
        double shortcut_sum = 0.0;
        double branch_sum = 0.0;
        for (int64_t i = r.begin; i < r.end; ++i) {
            const float grad = ds[i];
            if (want_sums) {
                shortcut_sum += static_cast<double>(grad) * x[i];
                branch_sum += static_cast<double>(grad) * f[i];
            }
            df[i] = branch * grad;
            dx[i] = shortcut * grad;
        }
        partials[2 * chunk] = shortcut_sum;
        partials[2 * chunk + 1] = branch_sum;
    });
    double shortcut_total = 0.0;
    double branch_total = 0.0;
    for (int chunk = 0; chunk < chunks; ++chunk) {
        shortcut_total += partials[2 * chunk];
        branch_total += partials[2 * chunk + 1];
    }
    if (dc) *dc += static_cast<float>(shortcut_total);
    if (da) *da += static_cast<float>(branch_total);
}

void CpuBackend::optimizer_update(const OptimizerStep& step, float* param, const float* grad, float* m,
                                  float* v, float* update, size_t count) {
    with_optimizer(step.kind, [&](auto kind) {
        OptimizerStep constant_step = step;
        parallel_ranges(m_pool, static_cast<int64_t>(count), static_cast<int64_t>(count) * 8, kElementAlign,
                        [&](int, Range r) {
                            update_elements<decltype(kind)::value>(constant_step, param + r.begin,
                                                                   grad + r.begin, m + r.begin, v + r.begin,
                                                                   update + r.begin, r.size());
                        });
    });
}

// One parallel region for the whole model (not one per tensor): the slices, laid end to end, are cut
// into chunks; each chunk updates its part of every slice it meets in blocks small enough to stay in
// L1, then (with telemetry) adds the block's squares to its partials, added in chunk order at the end.
void CpuBackend::optimizer_update_slices(OptimizerStep step, const std::vector<Slice>& slices,
                                         const float* weight_decays, float* params, const float* grads,
                                         float* m, float* v, float* update, UpdateSquares squares) {
    constexpr int64_t kBlock = 2048;
    const int64_t total = total_count(slices);
    const size_t count = slices.size();
    const bool telemetry = squares.params || squares.updates;
    const int chunks = chunk_count(m_threads, total, total * 8, kElementAlign);
    double* partials =
        scratch_doubles(2 * count * static_cast<size_t>(chunks));  // [chunk][params|updates][s]
    auto square = [](double value) { return value * value; };
    with_optimizer(step.kind, [&](auto kind) {
        parallel_chunks(m_pool, chunks, total, kElementAlign, [&](int chunk, Range r) {
            double* partial = partials + 2 * count * chunk;
            OptimizerStep slice_step = step;
            for_slice_parts(slices, r, [&](size_t s, int64_t offset, int64_t size) {
                slice_step.weight_decay = weight_decays[s];
                for (int64_t at = offset; at < offset + size; at += kBlock) {
                    const int64_t block = std::min(kBlock, offset + size - at);
                    update_elements<decltype(kind)::value>(slice_step, params + at, grads + at, m + at,
                                                           v + at, update + at, block);
                    if (!telemetry) continue;
                    partial[s] += lane_sum_of(params + at, block, square);
                    partial[count + s] += lane_sum_of(update + at, block, square);
                }
            });
        });
    });
    if (telemetry) add_partials<2>(partials, chunks, count, {squares.params, squares.updates});
}

void CpuBackend::scale(float* x, float factor, size_t count) {
    parallel_ranges(m_pool, static_cast<int64_t>(count), static_cast<int64_t>(count), kElementAlign,
                    [&](int, Range r) {
                        for (int64_t i = r.begin; i < r.end; ++i) x[i] *= factor;
                    });
}

void CpuBackend::add(float* dst, const float* src, size_t count) {
    parallel_ranges(m_pool, static_cast<int64_t>(count), static_cast<int64_t>(count), kElementAlign,
                    [&](int, Range r) {
                        for (int64_t i = r.begin; i < r.end; ++i) dst[i] += src[i];
                    });
}

void CpuBackend::round_to_format(float* dst, const float* src, size_t count, FormatLimits format,
                                 float* tally) {
    const int64_t total = static_cast<int64_t>(count);
    const int chunks = chunk_count(m_threads, total, total * 4, kElementAlign);
    double* partials =
        scratch_doubles(3 * static_cast<size_t>(chunks));  // [chunk][overflowed|underflowed|max]
    parallel_chunks(m_pool, chunks, total, kElementAlign, [&](int chunk, Range r) {
        RoundingTally partial;
        partial.round(dst ? dst + r.begin : nullptr, src + r.begin, static_cast<size_t>(r.size()), format);
        double* out = partials + 3 * chunk;
        out[0] = static_cast<double>(partial.overflowed);
        out[1] = static_cast<double>(partial.underflowed);
        out[2] = partial.max_magnitude_bits;
    });
    if (!tally) return;
    RoundingTally sum;
    for (int chunk = 0; chunk < chunks; ++chunk) {
        const double* part = partials + 3 * chunk;
        sum.add(
            {static_cast<uint64_t>(part[0]), static_cast<uint64_t>(part[1]), static_cast<uint32_t>(part[2])});
    }
    sum.add_to(tally);
}

// The slices, laid end to end, are cut by element into chunks; each chunk keeps one partial per
// slice, and the partials are added in chunk order.
template <size_t K, class RangeSums>
void CpuBackend::reduce_slices(const float* base, const std::vector<Slice>& slices,
                               std::array<double*, K> host_out, RangeSums range_sums) {
    const int64_t total = total_count(slices);
    const size_t count = slices.size();
    const int chunks = chunk_count(m_threads, total, total, kElementAlign);
    double* partials = scratch_doubles(K * count * chunks);  // [chunk][k][slice]
    parallel_chunks(m_pool, chunks, total, kElementAlign, [&](int chunk, Range r) {
        double* partial = partials + chunk * K * count;
        for_slice_parts(slices, r, [&](size_t s, int64_t offset, int64_t size) {
            const std::array<double, K> sums = range_sums(base + offset, size);
            for (size_t k = 0; k < K; ++k) partial[k * count + s] += sums[k];
        });
    });
    add_partials<K>(partials, chunks, count, host_out);
}

void CpuBackend::sum_squares(const float* base, const std::vector<Slice>& slices, double* host_out) {
    reduce_slices<1>(base, slices, {host_out}, [](const float* x, int64_t n) {
        return std::array<double, 1>{lane_sum_of(x, n, [](double value) { return value * value; })};
    });
}

void CpuBackend::sum_values(const float* base, const std::vector<Slice>& slices, double* host_out) {
    reduce_slices<1>(base, slices, {host_out}, [](const float* x, int64_t n) {
        return std::array<double, 1>{lane_sum_of(x, n, [](double value) { return value; })};
    });
}

void CpuBackend::count_below(const float* base, const std::vector<Slice>& slices, float threshold,
                             double* host_out) {
    reduce_slices<1>(base, slices, {host_out}, [threshold](const float* x, int64_t n) {
        return std::array<double, 1>{
            lane_sum_of(x, n, [threshold](double value) { return value < threshold ? 1.0 : 0.0; })};
    });
}

void CpuBackend::sum_values_and_squares(const float* base, const std::vector<Slice>& slices, double* sums,
                                        double* squares) {
    reduce_slices<2>(base, slices, {sums, squares},
                     [](const float* x, int64_t n) { return lane_sum_and_squares(x, n); });
}

}  // namespace normlab
