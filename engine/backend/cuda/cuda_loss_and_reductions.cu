// Softmax cross-entropy and sums over slices on the GPU, reduced on the device: per-row (or per-chunk)
// results go to the workspace and are summed there in a fixed order, and only the final numbers come
// back to the host (3 for cross-entropy, one double per slice for the sums).
#include <cstdint>
#include <vector>

#include "engine/backend/cuda/cuda_backend.h"
#include "engine/backend/cuda/cuda_check.h"
#include "engine/backend/cuda/cuda_device.cuh"
#include "engine/backend/kernel_maths.h"

namespace normlab {

namespace {
using cuda::kFullMask;
using cuda::kRowsPerBlock;
using cuda::kThreads;
using cuda::kWarp;
using cuda::row_blocks;
using cuda::warp_sum;

constexpr size_t kSliceChunk = 16384;  // elements per partial of a slice sum (as on the CPU)

// What cross_entropy hands back to the host (Backend::CrossEntropyResult's sums).
struct LossTotals {
    double loss_sum;
    long long scored;
    long long correct;
    double z_loss_sum, log_z_sum, log_z_max_abs, logit_sum, logit_max;
};

// Per row of logits (0 on unscored rows): the loss, log Z, the logits' sum and largest value, and the
// argmax hit.
struct RowLosses {
    double* loss;
    double* log_z;
    double* logit_sum;
    float* logit_max;
    int* correct;
};

// *scored = number of targets >= 0; one block.
__global__ void count_scored_kernel(long long* scored, const int32_t* targets, int n) {
    __shared__ long long shared[kWarp];
    long long count = 0;
    for (int row = threadIdx.x; row < n; row += blockDim.x) count += targets[row] >= 0 ? 1 : 0;
    count = cuda::block_sum(count, shared);
    if (threadIdx.x == 0) *scored = count;
}

// One warp per row of logits[n, vocab]: the row's figures (RowLosses) and (want_gradient) the row of
// (softmax (1 + 2 z_loss log Z) - onehot) / scored, 0 on unscored rows. grad may alias logits: every
// logit a lane needs is read before the warp synchronises, and after it each lane writes only the
// columns it read.
__global__ void cross_entropy_kernel(float* grad, RowLosses rows, const float* logits, const int32_t* targets,
                                     const long long* scored, int n, int vocab, bool want_gradient,
                                     float z_loss) {
    const int row = blockIdx.x * kRowsPerBlock + threadIdx.x / kWarp;
    const int lane = threadIdx.x % kWarp;
    if (row >= n) return;
    const float* in = logits + static_cast<size_t>(row) * vocab;
    float* out = want_gradient ? grad + static_cast<size_t>(row) * vocab : nullptr;
    const int target = targets[row];
    if (target < 0) {
        if (out)
            for (int j = lane; j < vocab; j += kWarp) out[j] = 0.0f;
        if (lane == 0) {
            rows.loss[row] = rows.log_z[row] = rows.logit_sum[row] = 0.0;
            rows.logit_max[row] = -INFINITY;
            rows.correct[row] = 0;
        }
        return;
    }
    // argmax: the first index of the largest logit, as the CPU's scan finds it
    int best = -1;
    float best_value = 0.0f;
    for (int j = lane; j < vocab; j += kWarp) {
        if (best < 0 || in[j] > best_value) {
            best = j;
            best_value = in[j];
        }
    }
    for (int offset = kWarp / 2; offset > 0; offset >>= 1) {
        const int other = __shfl_xor_sync(kFullMask, best, offset);
        const float other_value = __shfl_xor_sync(kFullMask, best_value, offset);
        const bool take = other >= 0 && (best < 0 || other_value > best_value ||
                                         (other_value == best_value && other < best));
        if (take) {
            best = other;
            best_value = other_value;
        }
    }
    best = __shfl_sync(kFullMask, best, 0);
    const float row_max = __shfl_sync(kFullMask, best_value, 0);
    const float target_logit = in[target];
    double total = 0.0, logit_sum = 0.0;
    for (int j = lane; j < vocab; j += kWarp) {
        total += std::exp(static_cast<double>(in[j] - row_max));
        logit_sum += in[j];
    }
    total = warp_sum(total);  // every lane has read all it needs past this point
    logit_sum = warp_sum(logit_sum);
    __syncwarp();
    const double log_total = std::log(total);
    const double log_z = row_max + log_total;
    if (lane == 0) {
        rows.loss[row] = log_total - (target_logit - row_max);
        rows.log_z[row] = log_z;
        rows.logit_sum[row] = logit_sum;
        rows.logit_max[row] = row_max;
        rows.correct[row] = best == target ? 1 : 0;
    }
    if (!out) return;
    const float inverse_scored = *scored > 0 ? 1.0f / static_cast<float>(*scored) : 0.0f;
    const float softmax_scale = z_loss_softmax_scale(z_loss, log_z);
    for (int j = lane; j < vocab; j += kWarp)
        out[j] = cross_entropy_grad(in[j], row_max, log_total, j == target, inverse_scored, softmax_scale);
}

// totals = the scored rows' sums and extremes (LossTotals); one block, fixed order.
__global__ void cross_entropy_totals_kernel(LossTotals* totals, RowLosses rows, const int32_t* targets,
                                            const long long* scored, int n, float z_loss) {
    __shared__ double shared_sum[kWarp];
    __shared__ long long shared_count[kWarp];
    __shared__ float shared_max[kWarp];
    double loss = 0.0, z_term = 0.0, log_z = 0.0, logit_sum = 0.0;
    float log_z_max_abs = 0.0f, logit_max = -INFINITY;
    long long correct = 0;
    for (int row = threadIdx.x; row < n; row += blockDim.x) {
        loss += rows.loss[row];
        correct += rows.correct[row];
        if (targets[row] < 0) continue;
        z_term += static_cast<double>(z_loss) * rows.log_z[row] * rows.log_z[row];
        log_z += rows.log_z[row];
        log_z_max_abs = fmaxf(log_z_max_abs, static_cast<float>(fabs(rows.log_z[row])));
        logit_sum += rows.logit_sum[row];
        logit_max = fmaxf(logit_max, rows.logit_max[row]);
    }
    loss = cuda::block_sum(loss, shared_sum);
    z_term = cuda::block_sum(z_term, shared_sum);
    log_z = cuda::block_sum(log_z, shared_sum);
    logit_sum = cuda::block_sum(logit_sum, shared_sum);
    correct = cuda::block_sum(correct, shared_count);
    log_z_max_abs = cuda::block_max(log_z_max_abs, shared_max);
    logit_max = cuda::block_max(logit_max, shared_max);
    if (threadIdx.x == 0) {
        *totals = {loss,  *scored,       correct,   z_term,
                   log_z, log_z_max_abs, logit_sum, *scored > 0 ? logit_max : 0.0};
    }
}

// partials[c] = sum of term(base[i]) over chunk c = [chunks[2c], chunks[2c + 1]); one block per chunk.
__global__ void slice_chunks_kernel(double* partials, const float* base, const unsigned long long* chunks,
                                    SliceTerm term) {
    __shared__ double shared[kWarp];
    const unsigned long long begin = chunks[2 * static_cast<size_t>(blockIdx.x)];
    const unsigned long long end = chunks[2 * static_cast<size_t>(blockIdx.x) + 1];
    double total = 0.0;
    for (unsigned long long i = begin + threadIdx.x; i < end; i += blockDim.x) total += term.of(base[i]);
    total = cuda::block_sum(total, shared);
    if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

// sums[s] = partials of slice s (chunks first[s] .. first[s + 1]) added in order; one thread per slice.
__global__ void slice_totals_kernel(double* sums, const double* partials, const unsigned long long* first,
                                    size_t slices) {
    for (size_t s = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; s < slices;
         s += static_cast<size_t>(gridDim.x) * blockDim.x) {
        double total = 0.0;
        for (unsigned long long chunk = first[s]; chunk < first[s + 1]; ++chunk) total += partials[chunk];
        sums[s] = total;
    }
}
}  // namespace

Backend::CrossEntropyResult CudaBackend::cross_entropy(float* dlogits, const float* logits,
                                                       const int32_t* targets, int n, int vocab,
                                                       bool want_gradient, float z_loss) {
    CrossEntropyResult result;
    if (n == 0) return result;
    cuda::WorkspaceLayout layout;
    const size_t totals_at = layout.reserve<LossTotals>(1);
    const size_t scored_at = layout.reserve<long long>(1);
    const size_t loss_at = layout.reserve<double>(3 * static_cast<size_t>(n));  // loss, log Z, logit sum
    const size_t max_at = layout.reserve<float>(n);
    const size_t correct_at = layout.reserve<int>(n);
    void* base = workspace(layout.bytes());
    LossTotals* totals = layout.at<LossTotals>(base, totals_at);
    long long* scored = layout.at<long long>(base, scored_at);
    double* row_doubles = layout.at<double>(base, loss_at);
    const RowLosses rows{row_doubles, row_doubles + n, row_doubles + 2 * static_cast<size_t>(n),
                         layout.at<float>(base, max_at), layout.at<int>(base, correct_at)};

    count_scored_kernel<<<1, kThreads, 0, m_stream>>>(scored, targets, n);
    NORMLAB_CUDA_CHECK_LAUNCH("count_scored_kernel");
    cross_entropy_kernel<<<row_blocks(n), kRowsPerBlock * kWarp, 0, m_stream>>>(
        dlogits, rows, logits, targets, scored, n, vocab, want_gradient, z_loss);
    NORMLAB_CUDA_CHECK_LAUNCH("cross_entropy_kernel");
    cross_entropy_totals_kernel<<<1, kThreads, 0, m_stream>>>(totals, rows, targets, scored, n, z_loss);
    NORMLAB_CUDA_CHECK_LAUNCH("cross_entropy_totals_kernel");
    LossTotals host{};
    copy_to_host(&host, totals, sizeof(host));
    synchronize("cross_entropy");
    return {host.loss_sum,  host.scored,        host.correct,   host.z_loss_sum,
            host.log_z_sum, host.log_z_max_abs, host.logit_sum, host.logit_max};
}

// Cuts every slice into 16384-element chunks on the host (the tables are reused, so steady-state steps
// allocate nothing), sums the chunks on the device, then each slice's chunks in order.
void CudaBackend::reduce_slices(const float* base, const std::vector<Slice>& slices, double* host_out,
                                SliceTerm term, const char* what) {
    if (slices.empty()) return;
    std::vector<unsigned long long>& chunks = m_slice_chunks;  // [begin, end) pairs
    std::vector<unsigned long long>& first = m_slice_first;    // slice s: chunks first[s] .. first[s + 1]
    chunks.clear();
    first.assign(slices.size() + 1, 0);
    for (size_t s = 0; s < slices.size(); ++s) {
        first[s] = chunks.size() / 2;
        for (size_t begin = 0; begin < slices[s].count; begin += kSliceChunk) {
            const size_t end = begin + kSliceChunk < slices[s].count ? begin + kSliceChunk : slices[s].count;
            chunks.push_back(slices[s].offset + begin);
            chunks.push_back(slices[s].offset + end);
        }
    }
    const size_t chunk_count = chunks.size() / 2;
    first[slices.size()] = chunk_count;

    cuda::WorkspaceLayout layout;
    const size_t chunks_at = layout.reserve<unsigned long long>(chunks.size());
    const size_t first_at = layout.reserve<unsigned long long>(first.size());
    const size_t partials_at = layout.reserve<double>(chunk_count);
    const size_t sums_at = layout.reserve<double>(slices.size());
    void* space = workspace(layout.bytes());
    unsigned long long* device_chunks = layout.at<unsigned long long>(space, chunks_at);
    unsigned long long* device_first = layout.at<unsigned long long>(space, first_at);
    double* partials = layout.at<double>(space, partials_at);
    double* sums = layout.at<double>(space, sums_at);

    if (chunk_count > 0) {
        NORMLAB_CUDA_CHECK(cudaMemcpyAsync(device_chunks, chunks.data(),
                                           chunks.size() * sizeof(unsigned long long), cudaMemcpyHostToDevice,
                                           m_stream));
    }
    NORMLAB_CUDA_CHECK(cudaMemcpyAsync(device_first, first.data(), first.size() * sizeof(unsigned long long),
                                       cudaMemcpyHostToDevice, m_stream));
    if (chunk_count > 0) {
        slice_chunks_kernel<<<static_cast<unsigned>(chunk_count), kThreads, 0, m_stream>>>(
            partials, base, device_chunks, term);
        NORMLAB_CUDA_CHECK_LAUNCH("slice_chunks_kernel");
    }
    slice_totals_kernel<<<cuda::grid_for(slices.size()), kThreads, 0, m_stream>>>(
        sums, partials, device_first, slices.size());
    NORMLAB_CUDA_CHECK_LAUNCH("slice_totals_kernel");
    copy_to_host(host_out, sums, slices.size() * sizeof(double));
    synchronize(what);  // the host tables stay untouched until here
}

void CudaBackend::sum_squares(const float* base, const std::vector<Slice>& slices, double* host_out) {
    reduce_slices(base, slices, host_out, {SliceTerm::Kind::Square}, "sum_squares");
}

void CudaBackend::sum_values(const float* base, const std::vector<Slice>& slices, double* host_out) {
    reduce_slices(base, slices, host_out, {SliceTerm::Kind::Value}, "sum_values");
}

void CudaBackend::count_below(const float* base, const std::vector<Slice>& slices, float threshold,
                              double* host_out) {
    reduce_slices(base, slices, host_out, {SliceTerm::Kind::Below, threshold}, "count_below");
}

}  // namespace normlab
