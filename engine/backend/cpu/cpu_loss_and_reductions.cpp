// Softmax cross-entropy and sums of squares over slices on the CPU. Both reduce per row or per fixed
// chunk in parallel, then add the partials in order, so results do not depend on the thread count.
#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/backend/cpu/cpu_kernels.h"
#include "engine/backend/cpu/cpu_reference_backend.h"

namespace normlab {

Backend::CrossEntropyResult CpuReferenceBackend::cross_entropy(float* dlogits, const float* logits,
                                                               const int32_t* targets, int n, int vocab,
                                                               bool want_gradient, float z_loss) {
    int64_t scored = 0;
    for (int row = 0; row < n; ++row) scored += targets[row] >= 0 ? 1 : 0;
    const float inverse_scored = scored > 0 ? 1.0f / static_cast<float>(scored) : 0.0f;
    std::vector<CrossEntropyRow> rows(n);

#pragma omp parallel for schedule(static)
    for (int row = 0; row < n; ++row) {
        float* grad = want_gradient ? dlogits + static_cast<size_t>(row) * vocab : nullptr;
        if (targets[row] < 0) {
            if (grad) std::fill(grad, grad + vocab, 0.0f);
            continue;
        }
        rows[row] = cross_entropy_row(grad, logits + static_cast<size_t>(row) * vocab, targets[row], vocab,
                                      inverse_scored, z_loss);
    }
    CrossEntropyTotals totals;
    for (int row = 0; row < n; ++row) {
        if (targets[row] >= 0) totals.add(rows[row], z_loss);
    }
    return totals.result(scored);
}

namespace {
// Sums f(value) over each slice: fixed 16384-element chunks in parallel, then added in order.
template <class Term>
void reduce_slices(const float* base, const std::vector<Slice>& slices, double* host_out, Term term) {
    constexpr size_t kChunk = 16384;
    struct WorkItem {
        size_t slice;
        size_t begin;
        size_t end;
    };
    std::vector<WorkItem> items;
    for (size_t s = 0; s < slices.size(); ++s) {
        const Slice& slice = slices[s];
        for (size_t begin = 0; begin < slice.count; begin += kChunk) {
            items.push_back({s, slice.offset + begin, slice.offset + std::min(slice.count, begin + kChunk)});
        }
    }
    std::vector<double> partials(items.size(), 0.0);
#pragma omp parallel for schedule(static)
    for (size_t item = 0; item < items.size(); ++item) {
        double total = 0.0;
        for (size_t i = items[item].begin; i < items[item].end; ++i)
            total += term(static_cast<double>(base[i]));
        partials[item] = total;
    }
    for (size_t s = 0; s < slices.size(); ++s) host_out[s] = 0.0;
    for (size_t item = 0; item < items.size(); ++item) host_out[items[item].slice] += partials[item];
}
}  // namespace

void CpuReferenceBackend::sum_squares(const float* base, const std::vector<Slice>& slices, double* host_out) {
    reduce_slices(base, slices, host_out, [](double value) { return value * value; });
}

void CpuReferenceBackend::sum_values(const float* base, const std::vector<Slice>& slices, double* host_out) {
    reduce_slices(base, slices, host_out, [](double value) { return value; });
}

void CpuReferenceBackend::count_below(const float* base, const std::vector<Slice>& slices, float threshold,
                                      double* host_out) {
    reduce_slices(base, slices, host_out,
                  [threshold](double value) { return value < threshold ? 1.0 : 0.0; });
}

}  // namespace normlab
