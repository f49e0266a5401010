// CpuBackend construction, identity and memory: 64-byte aligned host buffers, plain copies and fills.
// An allocation the machine refuses becomes a ResourceError that names the size asked for.
#include <omp.h>

#include <cstdlib>
#include <cstring>
#include <new>

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/core/errors.h"

namespace normlab {

CpuBackend::CpuBackend(int threads) : m_threads(threads > 0 ? threads : omp_get_num_procs()) {
    omp_set_num_threads(m_threads);
}

std::string CpuBackend::name() const {
    return "cpu (Eigen + OpenMP, " + std::to_string(m_threads) + (m_threads == 1 ? " thread)" : " threads)");
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

float* CpuBackend::allocate(size_t count) {
    auto* pointer = static_cast<float*>(aligned_bytes(count * sizeof(float)));
    std::memset(pointer, 0, count * sizeof(float));
    return pointer;
}

int32_t* CpuBackend::allocate_ints(size_t count) {
    auto* pointer = static_cast<int32_t*>(aligned_bytes(count * sizeof(int32_t)));
    std::memset(pointer, 0, count * sizeof(int32_t));
    return pointer;
}

void CpuBackend::release(void* pointer) {
    std::free(pointer);
}

void CpuBackend::upload(float* dst, const float* host_src, size_t count) {
    std::memcpy(dst, host_src, count * sizeof(float));
}

void CpuBackend::upload_ints(int32_t* dst, const int32_t* host_src, size_t count) {
    std::memcpy(dst, host_src, count * sizeof(int32_t));
}

void CpuBackend::download(float* host_dst, const float* src, size_t count) {
    std::memcpy(host_dst, src, count * sizeof(float));
}

void CpuBackend::fill(float* dst, float value, size_t count) {
    for (size_t i = 0; i < count; ++i) dst[i] = value;
}

void CpuBackend::copy(float* dst, const float* src, size_t count) {
    if (dst != src) std::memmove(dst, src, count * sizeof(float));
}

}  // namespace normlab
