// Claims: O_EXCL creation for a free point; for a stale claim, our claim renamed over it from a file
// of our own, then read back after a pause, so of two workers taking over at once only one keeps it.
#include "engine/sweep/point_claim.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "engine/core/errors.h"
#include "engine/io/json_read.h"
#include "engine/io/small_file.h"

namespace normlab {

namespace {
namespace fs = std::filesystem;

std::string this_host() {
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) != 0) return "unknown";
    return name;
}

double unix_now() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string claim_text() {
    return nlohmann::json{
               {"host", this_host()}, {"pid", static_cast<long>(getpid())}, {"heartbeat", unix_now()}}
               .dump() +
           "\n";
}

std::string claim_path(const std::string& sweep_dir, const std::string& id) {
    return (fs::path(sweep_dir) / "claims" / (id + ".json")).string();
}

bool is_ours(const std::optional<ClaimInfo>& claim) {
    return claim && claim->host == this_host() && claim->pid == static_cast<long>(getpid());
}

// A claim's fields, each left at its default when missing or of another type (a torn or foreign claim
// must not stop `sweep status`); a pid outside pid_t's positive range reads as none.
ClaimInfo claim_from_json(const nlohmann::json& json) {
    ClaimInfo claim;
    const auto host = json.find("host"), pid = json.find("pid"), heartbeat = json.find("heartbeat");
    if (host != json.end() && host->is_string()) claim.host = host->get<std::string>();
    if (pid != json.end() && pid->is_number_integer() && *pid > 0 && *pid <= INT_MAX)
        claim.pid = pid->get<long>();
    if (heartbeat != json.end() && heartbeat->is_number()) claim.heartbeat = heartbeat->get<double>();
    return claim;
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
    if (!json || !json->is_object()) {
        // Being written, torn by a crash or not a claim file: as old as the file itself.
        std::error_code error;
        const auto written = fs::last_write_time(path, error);
        if (error) return std::nullopt;
        const auto age = fs::file_time_type::clock::now() - written;
        return ClaimInfo{"", 0, unix_now() - std::chrono::duration<double>(age).count()};
    }
    return claim_from_json(*json);
}

// Writes our claim to a file of our own and renames it over `path` (atomic on one file system).
void replace_with_ours(const std::string& path) {
    const std::string own = path + "." + this_host() + "." + std::to_string(getpid()) + ".tmp";
    {
        std::ofstream file(own, std::ios::trunc);
        file << claim_text();
        if (!file.flush())
            throw ResourceError("cannot write the sweep claim " + own + "; check free disk space");
    }
    std::error_code error;
    fs::rename(own, path, error);
    if (error) throw ResourceError("cannot claim " + path + ": " + error.message());
}
}  // namespace

bool ClaimInfo::live(double stale_after_seconds) const {
    if (unix_now() - heartbeat > stale_after_seconds) return false;
    if (host != this_host() || pid <= 0) return true;
    if (kill(static_cast<pid_t>(pid), 0) != 0 && errno != EPERM) return false;
    // A killed worker whose parent died too can linger as a zombie (containers whose first process
    // reaps nothing): it still answers kill(), but /proc says it is dead.
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text;
    std::getline(stat, text);
    const size_t end_of_name = text.rfind(')');
    return end_of_name == std::string::npos || end_of_name + 2 >= text.size() ||
           (text[end_of_name + 2] != 'Z' && text[end_of_name + 2] != 'X');
}

std::optional<ClaimInfo> PointClaim::read(const std::string& sweep_dir, const std::string& id) {
    return read_claim_file(claim_path(sweep_dir, id));
}

std::optional<PointClaim> PointClaim::acquire(const std::string& sweep_dir, const std::string& id,
                                              double stale_after_seconds) {
    const std::string path = claim_path(sweep_dir, id);
    std::error_code error;
    fs::create_directories(fs::path(path).parent_path(), error);
    if (error)
        throw InputError("cannot create " + fs::path(path).parent_path().string() + ": " + error.message());
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd >= 0) {
        const std::string text = claim_text();
        const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
        ::close(fd);
        if (!written) throw ResourceError("cannot write the sweep claim " + path + "; check free disk space");
        return PointClaim(path);
    }
    if (errno != EEXIST) throw InputError("cannot claim " + path + ": " + std::strerror(errno));
    const std::optional<ClaimInfo> current = read_claim_file(path);
    if (current && current->live(stale_after_seconds)) return std::nullopt;
    replace_with_ours(path);
    // Another worker may have taken the stale claim over at the same moment: the last rename wins.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    if (!is_ours(read_claim_file(path))) return std::nullopt;
    return PointClaim(path);
}

PointClaim::PointClaim(PointClaim&& other) noexcept : m_path(std::move(other.m_path)) {
    other.m_path.clear();
}

PointClaim::~PointClaim() {
    if (m_path.empty() || !is_ours(read_claim_file(m_path))) return;
    std::error_code ignored;
    fs::remove(m_path, ignored);
}

void PointClaim::heartbeat() {
    // A claim taken over meanwhile (this worker looked dead) is left to its new owner.
    if (!m_path.empty() && is_ours(read_claim_file(m_path))) replace_with_ours(m_path);
}

}  // namespace normlab
