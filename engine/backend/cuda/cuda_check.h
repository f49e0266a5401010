// Turns CUDA runtime and cuBLAS status codes into exceptions naming the call and the reason, so a failed
// call surfaces as an error message (CLI exit code 1), never as a process shutdown or a silent wrong result.
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace normlab {

// A CUDA runtime or cuBLAS call that failed (not the user's to fix, unlike ResourceError).
class CudaError : public std::runtime_error {
  public:
    explicit CudaError(const std::string& message) : std::runtime_error(message) {}
};

inline void check_cuda(cudaError_t status, const std::string& call) {
    if (status != cudaSuccess) {
        throw CudaError("CUDA error in " + call + ": " + cudaGetErrorString(status) + " (" +
                        cudaGetErrorName(status) + ")");
    }
}

inline void check_cublas(cublasStatus_t status, const std::string& call) {
    if (status != CUBLAS_STATUS_SUCCESS) {
        throw CudaError("cuBLAS error in " + call + ": " + cublasGetStatusName(status) + " (" +
                        cublasGetStatusString(status) + ")");
    }
}

}  // namespace normlab

// Checks a runtime or cuBLAS call, naming it in the message.
#define NORMLAB_CUDA_CHECK(call) ::normlab::check_cuda((call), #call)
#define NORMLAB_CUBLAS_CHECK(call) ::normlab::check_cublas((call), #call)
// Checks the launch of the kernel just queued (configuration errors; faults show at the next sync).
#define NORMLAB_CUDA_CHECK_LAUNCH(kernel) ::normlab::check_cuda(cudaGetLastError(), "launch of " kernel)
