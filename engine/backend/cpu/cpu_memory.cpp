// CpuReferenceBackend construction, identity and memory: 64-byte aligned host buffers, plain copies and
// fills. An allocation the machine refuses becomes a ResourceError that names the size asked for.
#include <omp.h>

#include <cstdlib>
#include <cstring>
#include <new>

#include <Eigen/Core>

#include "engine/backend/cpu/cpu_reference_backend.h"
#include "engine/core/errors.h"

namespace normlab {

CpuReferenceBackend::CpuReferenceBackend(int threads)
    : m_threads(threads > 0 ? threads : omp_get_num_procs()) {
    omp_set_num_threads(m_threads);
    // Eigen's own parallel GEMM spin-waits on its team: with one more busy thread than cores a step
    // gets 20-35x slower. Products run single-threaded; the ops split rows across OpenMP threads.
    Eigen::setNbThreads(1);
}

std::string CpuReferenceBackend::thread_count_text() const {
    return std::to_string(m_threads) + (m_threads == 1 ? " thread" : " threads");
}

std::string CpuReferenceBackend::name() const {
    return "cpu reference (Eigen + OpenMP, " + thread_count_text() + ")";
}

namespace {
void* aligned_bytes(size_t bytes) {
    const size_t rounded = ((bytes + 63) / 64) * 64;
    void* pointer = std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
    if (!pointer) {
        throw ResourceError("out of host memory: could not allocate " + std::to_string(bytes >> 20) +
                            " MiB; make the model, batch or sequence smaller");
    }
    return pointer;
}
}  // namespace

float* CpuReferenceBackend::allocate(size_t count) {
    auto* pointer = static_cast<float*>(aligned_bytes(count * sizeof(float)));
    std::memset(pointer, 0, count * sizeof(float));
    return pointer;
}

int32_t* CpuReferenceBackend::allocate_ints(size_t count) {
    auto* pointer = static_cast<int32_t*>(aligned_bytes(count * sizeof(int32_t)));
    std::memset(pointer, 0, count * sizeof(int32_t));
    return pointer;
}

void CpuReferenceBackend::release(void* pointer) {
    std::free(pointer);
}

void CpuReferenceBackend::upload(float* dst, const float* host_src, size_t count) {
    std::memcpy(dst, host_src, count * sizeof(float));
}

void CpuReferenceBackend::upload_ints(int32_t* dst, const int32_t* host_src, size_t count) {
    std::memcpy(dst, host_src, count * sizeof(int32_t));
}

void CpuReferenceBackend::download(float* host_dst, const float* src, size_t count) {
    std::memcpy(host_dst, src, count * sizeof(float));
}

void CpuReferenceBackend::fill(float* dst, float value, size_t count) {
    for (size_t i = 0; i < count; ++i) dst[i] = value;
}

void CpuReferenceBackend::copy(float* dst, const float* src, size_t count) {
    if (dst != src) std::memmove(dst, src, count * sizeof(float));
}

}  // namespace normlab
