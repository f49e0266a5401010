// CudaBackend construction, identity and memory: device probing, one cudaMalloc per allocation (zeroed,
// like the CPU's), tracked until released or the backend is destroyed, the growing workspace, copies and
// fills on the backend's stream. Out of memory is a ResourceError naming the request and what is free.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include "engine/backend/cuda/cuda_backend.h"
#include "engine/backend/cuda/cuda_check.h"
#include "engine/backend/cuda/cuda_device.cuh"
#include "engine/backend/cuda/cuda_factory.h"
#include "engine/core/errors.h"

#ifndef NORMLAB_CUDA_ARCHITECTURES
#define NORMLAB_CUDA_ARCHITECTURES "unknown"
#endif

namespace normlab {

namespace {
using cuda::grid_for;
using cuda::kThreads;

std::string mib(size_t bytes) {
    return std::to_string(bytes >> 20) + " MiB";
}

std::string gib(size_t bytes) {
    return std::to_string(static_cast<long long>(std::llround(static_cast<double>(bytes) / (1ull << 30)))) +
           " GiB";
}

std::string architecture(const cudaDeviceProp& props) {
    return "sm_" + std::to_string(props.major) + std::to_string(props.minor);
}

// "NVIDIA H100 80GB HBM3 (sm_90, 80 GiB)"
std::string device_label(const cudaDeviceProp& props) {
    return std::string(props.name) + " (" + architecture(props) + ", " + gib(props.totalGlobalMem) + ")";
}

std::string runtime_reason(const char* call, cudaError_t status) {
    cudaGetLastError();  // clear a non-sticky error so later calls do not report it again
    return std::string(call) + ": " + cudaGetErrorString(status);
}

__global__ void probe_kernel() {}

__global__ void fill_kernel(float* dst, float value, size_t count) {
    for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<size_t>(gridDim.x) * blockDim.x) {
        dst[i] = value;
    }
}
}  // namespace

CudaDeviceProbe probe_cuda_device() {
    CudaDeviceProbe probe;
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
        // Without an NVIDIA driver the runtime reports an "insufficient" driver: say what that means.
        const bool no_driver = status == cudaErrorInsufficientDriver || status == cudaErrorNoDevice;
        probe.reason = (no_driver ? std::string("no NVIDIA GPU driver or device on this machine; ") : "") +
                       runtime_reason("cudaGetDeviceCount", status);
        return probe;
    }
    if (count == 0) {
        probe.reason = "cudaGetDeviceCount: no CUDA device";
        return probe;
    }
    cudaDeviceProp props{};
    const cudaError_t query = cudaGetDeviceProperties(&props, 0);
    if (query != cudaSuccess) {
        probe.reason = runtime_reason("cudaGetDeviceProperties", query);
        return probe;
    }
    probe.available = true;
    probe.label = device_label(props);
    if (cudaDriverGetVersion(&probe.driver_version) != cudaSuccess) {
        cudaGetLastError();  // not sticky: later calls must not report it
        probe.driver_version = 0;
    }
    return probe;
}

std::unique_ptr<Backend> make_cuda_backend() {
    return std::make_unique<CudaBackend>();
}

CudaBackend::CudaBackend() {
    const CudaDeviceProbe probe = probe_cuda_device();
    if (!probe.available) throw ResourceError(probe.reason);
    try {
        cudaError_t status = cudaSetDevice(m_device);
        if (status != cudaSuccess) throw ResourceError(runtime_reason("cudaSetDevice", status));
        cudaDeviceProp props{};
        NORMLAB_CUDA_CHECK(cudaGetDeviceProperties(&props, m_device));
        m_name = "cuda (" + std::string(props.name) + ", " + architecture(props) + ", " +
                 gib(props.totalGlobalMem) + ")";
        status = cudaStreamCreateWithFlags(&m_stream, cudaStreamNonBlocking);
        if (status != cudaSuccess) throw ResourceError(runtime_reason("cudaStreamCreate", status));
        // A kernel this build cannot run on the GPU (no image for its architecture) fails here, once.
        probe_kernel<<<1, 1, 0, m_stream>>>();
        status = cudaGetLastError();
        if (status == cudaSuccess) status = cudaStreamSynchronize(m_stream);
        if (status != cudaSuccess) {
            throw ResourceError(runtime_reason("a test kernel", status) + " (this build has kernels for " +
                                "CMAKE_CUDA_ARCHITECTURES " NORMLAB_CUDA_ARCHITECTURES ", the GPU is " +
                                architecture(props) + "; rebuild with -DCMAKE_CUDA_ARCHITECTURES=" +
                                std::to_string(props.major) + std::to_string(props.minor) + ")");
        }
        const cublasStatus_t blas = cublasCreate(&m_cublas);
        if (blas != CUBLAS_STATUS_SUCCESS)
            throw ResourceError(std::string("cublasCreate: ") + cublasGetStatusString(blas));
        NORMLAB_CUBLAS_CHECK(cublasSetStream(m_cublas, m_stream));
        const char* fp32_products = std::getenv("NORMLAB_CUDA_FP32_PRODUCTS");
        m_native_products = !(fp32_products && std::string(fp32_products) == "1");
        // Plain fp32 products: no TF32 tensor-core rounding (parity with the CPU to 1e-4 needs it).
        NORMLAB_CUBLAS_CHECK(cublasSetMathMode(m_cublas, CUBLAS_DEFAULT_MATH));
    } catch (...) {
        if (m_cublas) cublasDestroy(m_cublas);
        if (m_stream) cudaStreamDestroy(m_stream);
        throw;
    }
}

// Frees whatever is still allocated, so nothing leaks across runs; never throws.
CudaBackend::~CudaBackend() {
    cudaStreamSynchronize(m_stream);
    for (const auto& [pointer, bytes] : m_live) cudaFree(pointer);
    cudaFree(m_workspace);
    cudaFree(m_ones);
    cublasDestroy(m_cublas);
    cudaStreamDestroy(m_stream);
}

void CudaBackend::synchronize(const char* after) {
    check_cuda(cudaStreamSynchronize(m_stream), std::string("cudaStreamSynchronize after ") + after);
}

void* CudaBackend::device_bytes(size_t bytes, const char* what) {
    void* pointer = nullptr;
    const cudaError_t status = cudaMalloc(&pointer, bytes);
    if (status == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        size_t free_bytes = 0;
        size_t total_bytes = 0;
        cudaMemGetInfo(&free_bytes, &total_bytes);
        throw ResourceError("out of GPU memory: " + std::string(what) + " asked for " + mib(bytes) + " but " +
                            m_name + " has " + mib(free_bytes) + " free of " + mib(total_bytes) +
                            "; reduce model.d_model, model.layers, model.d_ff, model.seq_len or "
                            "train.batch_size, or use device=cpu");
    }
    check_cuda(status, std::string("cudaMalloc of ") + mib(bytes) + " for " + what);
    m_bytes_held += bytes;
    m_traffic.peak_device_bytes = std::max(m_traffic.peak_device_bytes, m_bytes_held);
    return pointer;
}

void CudaBackend::free_device_bytes(void* pointer, size_t bytes) {
    if (pointer == nullptr) return;
    cudaFree(pointer);  // waits for work still using it
    m_bytes_held -= bytes;
}

void CudaBackend::copy_to_host(void* host_dst, const void* src, size_t bytes) {
    NORMLAB_CUDA_CHECK(cudaMemcpyAsync(host_dst, src, bytes, cudaMemcpyDeviceToHost, m_stream));
    m_traffic.bytes_to_host += bytes;
}

float* CudaBackend::allocate(size_t count) {
    const size_t bytes = (count > 0 ? count : 1) * sizeof(float);
    void* pointer = device_bytes(bytes, "a buffer");
    m_live.emplace(pointer, bytes);
    NORMLAB_CUDA_CHECK(cudaMemsetAsync(pointer, 0, bytes, m_stream));
    return static_cast<float*>(pointer);
}

int32_t* CudaBackend::allocate_ints(size_t count) {
    const size_t bytes = (count > 0 ? count : 1) * sizeof(int32_t);
    void* pointer = device_bytes(bytes, "a buffer of ints");
    m_live.emplace(pointer, bytes);
    NORMLAB_CUDA_CHECK(cudaMemsetAsync(pointer, 0, bytes, m_stream));
    return static_cast<int32_t*>(pointer);
}

// Called from destructors: pointers this backend did not hand out (or null) are ignored, and a failed
// cudaFree is not an exception.
void CudaBackend::release(void* pointer) {
    const auto found = m_live.find(pointer);
    if (found == m_live.end()) return;
    const size_t bytes = found->second;
    m_live.erase(found);
    free_device_bytes(pointer, bytes);
}

void* CudaBackend::workspace(size_t bytes) {
    if (bytes <= m_workspace_bytes) return m_workspace;
    const size_t rounded = (bytes + (1u << 20) - 1) / (1u << 20) * (1u << 20);
    synchronize("the last op before the workspace grows");
    free_device_bytes(m_workspace, m_workspace_bytes);
    m_workspace = nullptr;
    m_workspace_bytes = 0;
    m_workspace = device_bytes(rounded, "the backend's workspace");
    m_workspace_bytes = rounded;
    return m_workspace;
}

const float* CudaBackend::ones(size_t count) {
    if (count <= m_ones_count) return m_ones;
    synchronize("the last op before the ones vector grows");
    free_device_bytes(m_ones, m_ones_count * sizeof(float));
    m_ones = nullptr;
    m_ones_count = 0;
    m_ones = static_cast<float*>(device_bytes(count * sizeof(float), "a vector of ones"));
    m_ones_count = count;
    fill_kernel<<<grid_for(count), kThreads, 0, m_stream>>>(m_ones, 1.0f, count);
    NORMLAB_CUDA_CHECK_LAUNCH("fill_kernel");
    return m_ones;
}

void CudaBackend::upload(float* dst, const float* host_src, size_t count) {
    if (count == 0) return;
    NORMLAB_CUDA_CHECK(
        cudaMemcpyAsync(dst, host_src, count * sizeof(float), cudaMemcpyHostToDevice, m_stream));
}

void CudaBackend::upload_ints(int32_t* dst, const int32_t* host_src, size_t count) {
    if (count == 0) return;
    NORMLAB_CUDA_CHECK(
        cudaMemcpyAsync(dst, host_src, count * sizeof(int32_t), cudaMemcpyHostToDevice, m_stream));
}

void CudaBackend::download(float* host_dst, const float* src, size_t count) {
    if (count == 0) return;
    copy_to_host(host_dst, src, count * sizeof(float));
    synchronize("download");
}

void CudaBackend::fill(float* dst, float value, size_t count) {
    if (count == 0) return;
    if (value == 0.0f && !std::signbit(value)) {
        NORMLAB_CUDA_CHECK(cudaMemsetAsync(dst, 0, count * sizeof(float), m_stream));
        return;
    }
    fill_kernel<<<grid_for(count), kThreads, 0, m_stream>>>(dst, value, count);
    NORMLAB_CUDA_CHECK_LAUNCH("fill_kernel");
}

// memmove semantics like the CPU's: overlapping ranges go through the workspace.
void CudaBackend::copy(float* dst, const float* src, size_t count) {
    if (dst == src || count == 0) return;
    const size_t bytes = count * sizeof(float);
    const bool overlap = dst < src + count && src < dst + count;
    if (!overlap) {
        NORMLAB_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, m_stream));
        return;
    }
    void* staging = workspace(bytes);
    NORMLAB_CUDA_CHECK(cudaMemcpyAsync(staging, src, bytes, cudaMemcpyDeviceToDevice, m_stream));
    NORMLAB_CUDA_CHECK(cudaMemcpyAsync(dst, staging, bytes, cudaMemcpyDeviceToDevice, m_stream));
}

}  // namespace normlab
