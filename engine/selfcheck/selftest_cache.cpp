// The GPU self-check's cache: one JSON file of verdicts keyed by GPU, driver and build, read leniently
// (anything unreadable is a miss, so the check runs again) and replaced atomically
// (engine/core/atomic_file.h).
#include "engine/selfcheck/selftest_cache.h"

#include <chrono>
#include <ctime>
#include <filesystem>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/atomic_file.h"
#include "engine/core/cache_dir.h"
#include "engine/core/errors.h"
#include "engine/core/json_read.h"
#include "engine/core/small_file.h"

namespace normlab {

namespace {

constexpr const char* kFormat = "normlab-gpu-selftest-1";
constexpr size_t kMaxVerdicts = 32;

std::string utc_now() {
    const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm utc{};
    gmtime_r(&now, &utc);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return text;
}

bool same_identity(const nlohmann::json& entry, const GpuIdentity& identity) {
    return entry.value("gpu", "") == identity.gpu && entry.value("driver", "") == identity.driver &&
           entry.value("build", "") == identity.build;
}

// The cache's verdicts, oldest first; empty for a missing or malformed file.
std::vector<nlohmann::json> read_verdicts(const std::string& path) {
    std::optional<nlohmann::json> parsed;
    try {
        parsed = parse_json_or_nothing(read_small_file(path, kMaxJsonFileBytes, "self-check cache"));
    } catch (const InputError&) {
        return {};
    }
    const nlohmann::json document = parsed.value_or(nlohmann::json());
    if (!document.is_object() || document.value("format", "") != kFormat) return {};
    const auto found = document.find("verdicts");
    if (found == document.end() || !found->is_array()) return {};
    std::vector<nlohmann::json> verdicts;
    for (const nlohmann::json& entry : *found) {
        if (entry.is_object()) verdicts.push_back(entry);
    }
    return verdicts;
}

nlohmann::json verdict_entry(const GpuIdentity& identity, const SelfTestVerdict& verdict) {
    return {{"gpu", identity.gpu},      {"driver", identity.driver}, {"build", identity.build},
            {"passed", verdict.passed}, {"reason", verdict.reason},  {"checked_at", verdict.checked_at}};
}

}  // namespace

SelfTestVerdict verdict_of(const SelfTestReport& report) {
    return {report.passed(), report.first_difference, utc_now()};
}

std::string default_selftest_cache_path() {
    const std::string folder = normlab_cache_dir();
    return folder.empty() ? "" : (std::filesystem::path(folder) / "gpu_selftest.json").string();
}

std::optional<SelfTestVerdict> read_cached_verdict(const std::string& path, const GpuIdentity& identity) {
    for (const nlohmann::json& entry : read_verdicts(path)) {
        const auto passed = entry.find("passed");
        if (!same_identity(entry, identity) || passed == entry.end() || !passed->is_boolean()) continue;
        return SelfTestVerdict{passed->get<bool>(), entry.value("reason", ""), entry.value("checked_at", "")};
    }
    return std::nullopt;
}

void write_cached_verdict(const std::string& path, const GpuIdentity& identity,
                          const SelfTestVerdict& verdict) {
    std::vector<nlohmann::json> verdicts;
    for (nlohmann::json& entry : read_verdicts(path)) {
        if (!same_identity(entry, identity)) verdicts.push_back(std::move(entry));
    }
    verdicts.push_back(verdict_entry(identity, verdict));
    if (verdicts.size() > kMaxVerdicts) verdicts.erase(verdicts.begin(), verdicts.end() - kMaxVerdicts);
    const std::filesystem::path folder = std::filesystem::path(path).parent_path();
    std::error_code error;
    if (!folder.empty()) std::filesystem::create_directories(folder, error);
    const nlohmann::json document = {{"format", kFormat}, {"verdicts", verdicts}};
    write_file_atomically(path, document.dump(2) + "\n");
}

SelfTestVerdict first_use_verdict(const std::string& cache_path, const GpuIdentity& identity,
                                  const std::function<SelfTestReport()>& run_check, bool* cached) {
    if (cached) *cached = false;
    if (!cache_path.empty()) {
        if (std::optional<SelfTestVerdict> known = read_cached_verdict(cache_path, identity)) {
            if (cached) *cached = true;
            return *known;
        }
    }
    const SelfTestVerdict verdict = verdict_of(run_check());
    if (!cache_path.empty()) {
        try {
            write_cached_verdict(cache_path, identity, verdict);
        } catch (const std::exception&) {
            // a read-only or full cache folder: the verdict still holds for this use
        }
    }
    return verdict;
}

}  // namespace normlab
