// Device selection: "auto" takes CUDA only when it was compiled in and a GPU answers, else the CPU, and
// says why; "cpu" always works; "cuda" without a usable GPU is an error the user can act on.
#include "engine/backend/backend.h"
#include "engine/backend/cpu/cpu_backend.h"
#include "engine/core/errors.h"
#ifdef NORMLAB_HAVE_CUDA
#include "engine/backend/cuda/cuda_factory.h"
#endif

namespace normlab {

std::unique_ptr<Backend> make_backend(const std::string& device, int threads, std::string* reason) {
    if (device != "auto" && device != "cpu" && device != "cuda") {
        throw InputError("unknown device '" + device + "'; use auto, cpu or cuda");
    }
#ifdef NORMLAB_HAVE_CUDA
    if (device != "cpu") {
        // Either no GPU answers (ResourceError), or one answers but cannot run this build (a CUDA or
        // cuBLAS error while setting up, e.g. no kernels for its architecture): both leave the CPU.
        std::string problem;
        try {
            auto backend = make_cuda_backend();
            if (reason) *reason = device == "cuda" ? "cuda: asked for" : "cuda: a GPU answered";
            return backend;
        } catch (const ResourceError& error) {
            problem = std::string("no CUDA GPU answered (") + error.what() + ")";
        } catch (const std::exception& error) {
            problem = std::string("the CUDA GPU could not be set up (") + error.what() + ")";
        }
        if (device == "cuda") {
            throw ResourceError("device=cuda was asked for, but " + problem +
                                "; use device=cpu or device=auto");
        }
        if (reason) *reason = "cpu: CUDA is compiled in but " + problem;
        return std::make_unique<CpuBackend>(threads);
    }
#else
    const std::string no_cuda = "this build of NormLab has no CUDA backend";
    if (device == "cuda") {
        throw ResourceError("device=cuda was asked for, but " + no_cuda + "; use device=cpu or device=auto");
    }
    if (device == "auto") {
        if (reason) *reason = "cpu: " + no_cuda;
        return std::make_unique<CpuBackend>(threads);
    }
#endif
    if (reason) *reason = "cpu: asked for";
    return std::make_unique<CpuBackend>(threads);
}

}  // namespace normlab
