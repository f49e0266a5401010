// The self-check's verdicts per GPU model, driver and NormLab build, kept in the user's cache folder so
// that a GPU is checked on its first use only (docs/cuda.md#self-check-on-first-use). Plain files and
// JSON: no GPU needed, so it is tested on any machine (tests/engine/test_selftest.cpp).
#pragma once
#include <functional>
#include <optional>
#include <string>

#include "engine/selfcheck/selftest.h"

namespace normlab {

// What a verdict is keyed by: all three must match for a cached verdict to count.
struct GpuIdentity {
    std::string gpu;     // "NVIDIA H100 80GB HBM3 (sm_90, 80 GiB)"
    std::string driver;  // "550.54.15, CUDA 12.4"
    std::string build;   // "0.1.0 (commit 1a2b3c4d5e6f)"
};

struct SelfTestVerdict {
    bool passed = false;
    std::string reason;      // the report's first difference (empty when it passed)
    std::string checked_at;  // UTC, "2026-11-23T10:00:00Z"
};

// The verdict a report gives, stamped now.
SelfTestVerdict verdict_of(const SelfTestReport& report);

// $XDG_CACHE_HOME/normlab/gpu_selftest.json (an absolute XDG_CACHE_HOME), else
// $HOME/.cache/normlab/gpu_selftest.json; empty when neither is set (nothing is cached then).
std::string default_selftest_cache_path();

// The cached verdict for `identity`; nothing when the file is missing, unreadable or not a cache, or
// holds no verdict for this GPU, driver and build.
std::optional<SelfTestVerdict> read_cached_verdict(const std::string& path, const GpuIdentity& identity);

// Adds (or replaces) the verdict for `identity`, keeping the most recent 32, written atomically (a
// temporary file renamed over the cache); creates the folder. Throws InputError / ResourceError.
void write_cached_verdict(const std::string& path, const GpuIdentity& identity,
                          const SelfTestVerdict& verdict);

// A GPU's verdict on its first use: the cached one when this GPU, driver and build were checked before
// (`cached` says so), else `run_check` now, its verdict cached when it completes (an exception from
// run_check propagates and caches nothing; a cache that cannot be written only means the check runs
// again next time). An empty cache_path caches nothing.
SelfTestVerdict first_use_verdict(const std::string& cache_path, const GpuIdentity& identity,
                                  const std::function<SelfTestReport()>& run_check, bool* cached = nullptr);

}  // namespace normlab
