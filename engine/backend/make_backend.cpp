// Device selection: "auto" takes CUDA only when it was compiled in and a GPU answers, else the CPU, and
// says why; "cpu" always works; "cuda" without a usable GPU is an error the user can act on.
#include "engine/backend/backend.h"
#include "engine/backend/cpu/cpu_backend.h"
#include "engine/core/errors.h"

namespace normlab {

std::unique_ptr<Backend> make_backend(const std::string& device, int threads, std::string* reason) {
    const std::string no_cuda = "this build of NormLab has no CUDA backend";
    if (device == "cuda") {
        throw ResourceError("device=cuda was asked for, but " + no_cuda + "; use device=cpu or device=auto");
    }
    if (device != "auto" && device != "cpu") {
        throw InputError("unknown device '" + device + "'; use auto, cpu or cuda");
    }
    if (reason) *reason = device == "cpu" ? "cpu: asked for" : "cpu: " + no_cuda;
    return std::make_unique<CpuBackend>(threads);
}

}  // namespace normlab
