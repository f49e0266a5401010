// The GPU self-check on first use and on demand: GPU 0's identity (model, driver, build) as the cache's
// key, the refusal message device selection passes on, and the check re-run for `normlab-cli selftest`.
#include "engine/selfcheck/gpu_selftest.h"

#include <fstream>
#include <iterator>
#include <sstream>

#include "engine/core/version.h"
#ifdef NORMLAB_HAVE_CUDA
#include "engine/backend/cuda/cuda_factory.h"
#endif

namespace normlab {

namespace {

std::string refusal_text(const GpuIdentity& identity, const SelfTestVerdict& verdict,
                         const std::string& cached_in) {
    std::string text = "the GPU (" + identity.gpu +
                       ") failed NormLab's self-check against the CPU reference: " + verdict.reason;
    if (!cached_in.empty()) text += " (checked " + verdict.checked_at + ", cached in " + cached_in + ")";
    return text + "; `normlab-cli selftest --device cuda` runs it again and prints the report";
}

}  // namespace

std::string gpu_driver_text(const std::string& nvidia_proc_version, int cuda_driver_version) {
    // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024"
    std::string module;
    const std::string marker = "Kernel Module";
    const size_t at = nvidia_proc_version.find(marker);
    if (at != std::string::npos) std::istringstream(nvidia_proc_version.substr(at + marker.size())) >> module;
    const std::string cuda = "CUDA " + std::to_string(cuda_driver_version / 1000) + "." +
                             std::to_string(cuda_driver_version % 1000 / 10);
    return module.empty() ? cuda : module + ", " + cuda;
}

std::string selftest_build_text() {
    return std::string(version()) + " (commit " + build_commit() + ")";
}

GpuIdentity gpu0_identity() {
    GpuIdentity identity{"", "", selftest_build_text()};
#ifdef NORMLAB_HAVE_CUDA
    const CudaDeviceProbe probe = probe_cuda_device();
    if (probe.available) {
        std::ifstream module_version("/proc/driver/nvidia/version");
        const std::string proc_text{std::istreambuf_iterator<char>(module_version),
                                    std::istreambuf_iterator<char>()};
        identity.gpu = probe.label;
        identity.driver = gpu_driver_text(proc_text, probe.driver_version);
    }
#endif
    return identity;
}

std::string gpu_selftest_refusal(Backend& gpu, const GpuIdentity& identity, const std::string& cache_path) {
    bool cached = false;
    SelfTestVerdict verdict;
    try {
        verdict = first_use_verdict(
            cache_path, identity, [&gpu] { return run_backend_selftest(gpu); }, &cached);
    } catch (const std::exception& error) {
        return "NormLab's self-check could not run on the GPU (" + std::string(error.what()) + ")";
    }
    if (verdict.passed) return "";
    return refusal_text(identity, verdict, cached ? cache_path : "");
}

void install_gpu_selfcheck() {
    set_gpu_check([](Backend& gpu) {
        return gpu_selftest_refusal(gpu, gpu0_identity(), default_selftest_cache_path());
    });
}

SelfTestReport run_gpu_selftest_now(std::string* cached_in) {
    std::unique_ptr<Backend> gpu = make_unchecked_gpu_backend();
    SelfTestReport report = run_backend_selftest(*gpu);
    const std::string path = default_selftest_cache_path();
    if (cached_in) cached_in->clear();
    if (path.empty()) return report;
    try {
        write_cached_verdict(path, gpu0_identity(), verdict_of(report));
        if (cached_in) *cached_in = path;
    } catch (const std::exception&) {
        // the report stands; first use will simply check again
    }
    return report;
}

}  // namespace normlab
