// list_devices(): the CPU with its core count, and CUDA as the runtime reports it (or why it cannot).
#include "engine/backend/devices.h"

#include <omp.h>

#ifdef NORMLAB_HAVE_CUDA
#include "engine/backend/cuda/cuda_factory.h"
#endif

namespace normlab {

std::vector<DeviceInfo> list_devices() {
    const int cores = omp_get_num_procs();
    std::vector<DeviceInfo> devices;
    devices.push_back(
        {"cpu", "CPU (" + std::to_string(cores) + (cores == 1 ? " core)" : " cores)"), true, ""});
#ifdef NORMLAB_HAVE_CUDA
    const CudaDeviceProbe probe = probe_cuda_device();
    devices.push_back({"cuda", probe.available ? probe.label : "CUDA GPU", probe.available,
                       probe.available ? "" : "no CUDA GPU answered (" + probe.reason + ")"});
#else
    devices.push_back({"cuda", "CUDA GPU", false, "this build of NormLab has no CUDA backend"});
#endif
    return devices;
}

}  // namespace normlab
