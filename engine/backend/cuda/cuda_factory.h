// The CUDA backend as plain C++ sees it (no CUDA headers): whether a GPU answers, and a factory.
// Compiled only when the CUDA backend is built (NORMLAB_HAVE_CUDA); make_backend and list_devices use it.
#pragma once
#include <memory>
#include <string>

#include "engine/backend/backend.h"

namespace normlab {

struct CudaDeviceProbe {
    bool available = false;
    std::string label;       // "NVIDIA H100 80GB HBM3 (sm_90, 80 GiB)" when available
    std::string reason;      // why not, when unavailable: the CUDA call and its error
    int driver_version = 0;  // cudaDriverGetVersion when available: 12040 = CUDA 12.4
};

// Asks the CUDA runtime for device 0 (cheap; no context beyond the runtime's own is kept).
CudaDeviceProbe probe_cuda_device();

// A CUDA backend on device 0; throws ResourceError naming the reason when no usable GPU answers.
std::unique_ptr<Backend> make_cuda_backend();

}  // namespace normlab
