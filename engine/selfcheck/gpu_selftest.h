// The self-check as device selection applies it to a GPU (make_backend: first use only, the verdict
// cached) and as `normlab-cli selftest --device cuda` runs it on demand (docs/cuda.md).
#pragma once
#include <memory>
#include <string>

#include "engine/backend/backend.h"
#include "engine/selfcheck/selftest.h"
#include "engine/selfcheck/selftest_cache.h"

namespace normlab {

// Why `gpu` must not be used, or empty when it passed: the verdict cached for `identity` in cache_path,
// else the check run now on `gpu` (and cached). A check that cannot finish (an exception, e.g. out of
// GPU memory) refuses this time without caching anything. Never throws.
std::string gpu_selftest_refusal(Backend& gpu, const GpuIdentity& identity, const std::string& cache_path);

// "550.54.15, CUDA 12.4": the kernel module's version from the text of /proc/driver/nvidia/version (left
// out when absent) and the CUDA driver API version (cudaDriverGetVersion's 12040).
std::string gpu_driver_text(const std::string& nvidia_proc_version, int cuda_driver_version);

// This build's key for the cache: "0.1.0 (commit 1a2b3c4d5e6f)".
std::string selftest_build_text();

// GPU 0's identity (model, driver, this build); the GPU and driver are empty when no GPU answers or this
// build has no CUDA backend.
GpuIdentity gpu0_identity();

// Makes this check the one make_backend applies to a GPU (set_gpu_check): the verdict cached for GPU 0's
// identity in the default cache, else the check run on first use. Every program that trains calls it
// when it starts (normlab-cli's and the window's main, the test programs).
void install_gpu_selfcheck();

// Runs the check now on GPU 0 whatever the cache says, and caches its verdict; `cached_in` receives the
// cache file, or empty when it could not be written. Throws ResourceError when no usable GPU answers or
// this build has no CUDA backend.
SelfTestReport run_gpu_selftest_now(std::string* cached_in);

}  // namespace normlab
