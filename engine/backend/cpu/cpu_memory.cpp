// CpuReferenceBackend construction, identity and memory: aligned host buffers (large ones on transparent
// huge pages), plain copies and fills. An allocation the machine refuses becomes a ResourceError that
// names the size asked for.
#include <omp.h>
#include <sys/mman.h>

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
// Buffers of at least this size start on a huge-page boundary and ask the kernel for transparent huge
// pages: the products walk activations many rows apart, and with 4 KiB pages every row is a TLB miss.
constexpr size_t kHugePage = size_t{2} << 20;

void* aligned_bytes(size_t bytes) {
    const size_t alignment = bytes >= kHugePage ? kHugePage : 64;
    const size_t rounded = ((bytes + alignment - 1) / alignment) * alignment;
    void* pointer = std::aligned_alloc(alignment, rounded == 0 ? alignment : rounded);
    if (!pointer) {
        throw ResourceError("out of host memory: could not allocate " + std::to_string(bytes >> 20) +
                            " MiB; make the model, batch or sequence smaller");
    }
#ifdef MADV_HUGEPAGE
    if (alignment == kHugePage) madvise(pointer, rounded, MADV_HUGEPAGE);  // a hint: failure is harmless
#endif
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
