// Device selection: "auto" takes CUDA only when it was compiled in, a GPU answers and it passes the
// installed check (NormLab's self-check: engine/selfcheck/gpu_selftest.h), else the CPU, and says why;
// "cpu" always works; "cuda" without a usable GPU is an error the user can act on.
#include <mutex>

#include "engine/backend/backend.h"
#include "engine/backend/cpu/cpu_backend.h"
#include "engine/core/errors.h"
#ifdef NORMLAB_HAVE_CUDA
#include "engine/backend/cuda/cuda_factory.h"
#endif

namespace normlab {

namespace {

// GPU 0's backend, or null with `problem` saying why there is none.
std::unique_ptr<Backend> set_up_gpu(std::string& problem) {
#ifdef NORMLAB_HAVE_CUDA
    // Either no GPU answers (ResourceError), or one answers but cannot run this build (a CUDA or
    // cuBLAS error while setting up, e.g. no kernels for its architecture): both leave the CPU.
    try {
        return make_cuda_backend();
    } catch (const ResourceError& error) {
        problem = std::string("no CUDA GPU answered (") + error.what() + ")";
    } catch (const std::exception& error) {
        problem = std::string("the CUDA GPU could not be set up (") + error.what() + ")";
    }
#else
    problem = "this build of NormLab has no CUDA backend";
#endif
    return nullptr;
}

// set_gpu_check's check (empty until a program installs one) and its lock; function-local so that a
// check installed during static initialisation (a test program's) is never overwritten afterwards.
std::mutex& check_mutex() {
    static std::mutex mutex;
    return mutex;
}
GpuCheck& installed_check() {
    static GpuCheck check;
    return check;
}

// GPU 0's backend when it passes the installed check, or null with `problem` saying why not.
std::unique_ptr<Backend> checked_gpu(std::string& problem) {
    std::unique_ptr<Backend> gpu = set_up_gpu(problem);
    if (!gpu) return nullptr;
    GpuCheck check;
    {
        std::lock_guard lock(check_mutex());
        check = installed_check();
    }
    problem = check ? check(*gpu)
                    : "this program installs no GPU self-check (normlab::install_gpu_selfcheck), so no GPU "
                      "is used unchecked";
    if (!problem.empty()) return nullptr;
    return gpu;
}

#ifdef NORMLAB_HAVE_CUDA
constexpr const char* kCpuInstead = "cpu: CUDA is compiled in but ";
#else
constexpr const char* kCpuInstead = "cpu: ";
#endif

}  // namespace

void set_gpu_check(GpuCheck check) {
    std::lock_guard lock(check_mutex());
    installed_check() = std::move(check);
}

std::unique_ptr<Backend> make_unchecked_gpu_backend() {
    std::string problem;
    std::unique_ptr<Backend> gpu = set_up_gpu(problem);
    if (!gpu) throw ResourceError(problem);
    return gpu;
}

std::unique_ptr<Backend> make_backend(const std::string& device, int threads, std::string* reason) {
    if (device != "auto" && device != "cpu" && device != "cuda") {
        throw InputError("unknown device '" + device + "'; use auto, cpu or cuda");
    }
    if (device == "cpu") {
        if (reason) *reason = "cpu: asked for";
        return std::make_unique<CpuBackend>(threads);
    }
    std::string problem;
    if (std::unique_ptr<Backend> gpu = checked_gpu(problem)) {
        if (reason)
            *reason = device == "cuda" ? "cuda: asked for (self-check passed)"
                                       : "cuda: a GPU answered (self-check passed)";
        return gpu;
    }
    if (device == "cuda") {
        throw ResourceError("device=cuda was asked for, but " + problem + "; use device=cpu or device=auto");
    }
    if (reason) *reason = kCpuInstead + problem;
    return std::make_unique<CpuBackend>(threads);
}

}  // namespace normlab
