// Claim files: writing a claim's text, and reading claims, beats and their names, tolerating anything.
#include "engine/sweep/claim_file.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <filesystem>
#include <fstream>
#include <random>

#include <nlohmann/json.hpp>

#include "engine/core/errors.h"
#include "engine/core/json_read.h"
#include "engine/core/small_file.h"

namespace normlab {

namespace {
namespace fs = std::filesystem;

// A claim's fields, each left at its default when missing or of another type (a torn or foreign claim
// must not stop `sweep status`); a pid outside pid_t's positive range reads as none, a token that is
// not 16 hex digits as none (it names files).
ClaimInfo claim_from_json(const nlohmann::json& json) {
    ClaimInfo claim;
    const auto host = json.find("host"), pid = json.find("pid"), token = json.find("token");
    if (host != json.end() && host->is_string()) claim.host = host->get<std::string>();
    if (pid != json.end() && pid->is_number_integer() && *pid > 0 && *pid <= INT_MAX)
        claim.pid = pid->get<long>();
    if (token != json.end() && token->is_string()) {
        const std::string text = token->get<std::string>();
        if (text.size() == 16 && text.find_first_not_of("0123456789abcdef") == std::string::npos)
            claim.token = text;
    }
    return claim;
}

// A claim without a token of its own is named by the file's identity (inode, size, change time).
std::string file_key(const std::string& path) {
    struct stat info {};
    if (::lstat(path.c_str(), &info) != 0) return "gone";
    return "file" + std::to_string(info.st_ino) + "-" + std::to_string(info.st_size) + "-" +
           std::to_string(info.st_ctim.tv_sec) + "-" + std::to_string(info.st_ctim.tv_nsec);
}
}  // namespace

std::string this_host() {
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) != 0) return "unknown";
    return name;
}

std::string new_claim_token() {
    std::random_device device;
    const uint64_t value = (static_cast<uint64_t>(device()) << 32) ^ device();
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
    return text;
}

std::string claim_text(const std::string& token) {
    return nlohmann::json{{"host", this_host()}, {"pid", static_cast<long>(getpid())}, {"token", token}}
               .dump() +
           "\n";
}

std::string claim_path(const std::string& sweep_dir, const std::string& id) {
    return (fs::path(sweep_dir) / "claims" / (id + ".json")).string();
}

std::optional<std::string> claim_file_problem(const std::string& sweep_dir, const std::string& id) {
    const std::string path = claim_path(sweep_dir, id);
    struct stat info {};
    if (::lstat(path.c_str(), &info) != 0 || S_ISREG(info.st_mode)) return std::nullopt;
    return path + " is " +
           (S_ISDIR(info.st_mode)   ? "a folder"
            : S_ISLNK(info.st_mode) ? "a link"
                                    : "not a file") +
           ", not a claim: no worker can claim the point while it is there; remove it";
}

std::string beat_path(const std::string& sweep_dir, const std::string& id, const std::string& key) {
    return (fs::path(sweep_dir) / "claims" / (id + "." + key + ".beat")).string();
}

std::string takeover_path(const std::string& sweep_dir, const std::string& id, const std::string& key,
                          int n) {
    return (fs::path(sweep_dir) / "claims" / (id + "." + key + ".takeover" + std::to_string(n))).string();
}

bool ClaimInfo::process_gone() const {
    if (host != this_host() || pid <= 0) return false;
    if (kill(static_cast<pid_t>(pid), 0) != 0 && errno != EPERM) return true;
    // A killed worker whose parent died too can linger as a zombie (containers whose first process
    // reaps nothing): it still answers kill(), but /proc says it is dead.
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text;
    std::getline(stat, text);
    const size_t end_of_name = text.rfind(')');
    return end_of_name != std::string::npos && end_of_name + 2 < text.size() &&
           (text[end_of_name + 2] == 'Z' || text[end_of_name + 2] == 'X');
}

std::optional<ClaimInfo> read_claim_file(const std::string& path) {
    std::optional<nlohmann::json> json;
    try {
        const std::optional<std::string> text = read_small_file_if_present(path, kMaxClaimFileBytes, "claim");
        if (!text) return std::nullopt;
        json = parse_json_or_nothing(*text);
    } catch (const InputError&) {
        // Not a regular file (a FIFO), too large or unreadable: a claim nobody keeps alive.
    }
    ClaimInfo claim = json && json->is_object() ? claim_from_json(*json) : ClaimInfo{};
    claim.key = claim.token.empty() ? file_key(path) : claim.token;
    return claim;
}

std::optional<std::string> read_beat(const std::string& path) {
    try {
        return read_small_file_if_present(path, 64, "claim heartbeat");
    } catch (const InputError&) {
        return std::nullopt;
    }
}

}  // namespace normlab
