// The compute devices this build can train on, for pickers such as the GUI's device box: the CPU
// (always there) and CUDA (listed always; available only when compiled in and a GPU answers).
#pragma once
#include <string>
#include <vector>

namespace normlab {

struct DeviceInfo {
    std::string id;     // "cpu" or "cuda": the config's `device` value
    std::string label;  // "CPU (2 cores)" / "NVIDIA H100 80GB HBM3 (sm_90, 80 GiB)"
    bool available = false;
    std::string reason;  // why not, when unavailable
};

// cpu first (always available), then cuda.
std::vector<DeviceInfo> list_devices();

}  // namespace normlab
