// The claim protocol: O_EXCL creation for a free point; for a claim judged stale (its process gone on
// this host, or its heartbeat unchanged while watched), an O_EXCL takeover marker per (hold, attempt)
// so one worker wins, then our claim renamed over the stale one; the holder's fence and heartbeat
// re-read the claim's token. Test-only pauses between the steps: NORMLAB_TEST_CLAIM_PAUSE.
#include "engine/sweep/point_claim.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include "engine/core/atomic_file.h"
#include "engine/core/errors.h"
#include "engine/sweep/sweep_paths.h"

namespace normlab {

namespace {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// NORMLAB_TEST_CLAIM_PAUSE=STEP:SECONDS (test-only) sleeps at one step of a takeover: "judged" (a claim
// judged stale, before its marker), "marker" (before the claim is replaced), "replaced" (before
// acquire returns), so tests can stop a worker exactly there.
void test_pause(const char* step) {
    const char* value = std::getenv("NORMLAB_TEST_CLAIM_PAUSE");
    if (!value) return;
    const std::string text = value;
    const size_t colon = text.find(':');
    if (colon == std::string::npos || text.compare(0, colon, step) != 0) return;
    std::this_thread::sleep_for(std::chrono::duration<double>(std::atof(text.c_str() + colon + 1)));
}

bool present(const std::string& path) {
    struct stat info {};
    return ::lstat(path.c_str(), &info) == 0;
}

// What a watcher sees of the hold on a point: the claim's key, its beat and its takeover markers.
struct Observed {
    std::string key;
    std::optional<std::string> beat;
    int takeovers = 0;
    bool operator==(const Observed&) const = default;
};

std::optional<Observed> observe(const std::string& dir, const std::string& id) {
    const std::optional<ClaimInfo> claim = read_claim_file(claim_path(dir, id));
    if (!claim) return std::nullopt;
    Observed seen{claim->key, read_beat(beat_path(dir, id, claim->key)), 0};
    while (seen.takeovers < 1000 && present(takeover_path(dir, id, claim->key, seen.takeovers + 1)))
        ++seen.takeovers;
    return seen;
}

// Watches the hold for `seconds` of this host's own clock: true when it stayed exactly `first`.
bool unchanged_for(const std::string& dir, const std::string& id, const Observed& first, double seconds) {
    const auto start = Clock::now();
    const auto poll = std::chrono::duration<double>(std::clamp(seconds / 10, 0.01, 0.5));
    while (std::chrono::duration<double>(Clock::now() - start).count() < seconds) {
        std::this_thread::sleep_for(poll);
        if (observe(dir, id) != first) return false;
    }
    return true;
}

// Creates `path` with `text` unless something (a file, a link) is there: false then.
bool create_exclusive(const std::string& path, const std::string& text) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        if (errno == EEXIST) return false;
        throw InputError("cannot claim a sweep point: creating " + path + " failed (" + std::strerror(errno) +
                         "); check that the sweep folder is writable");
    }
    const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    if (::close(fd) != 0 || !written) {
        ::unlink(path.c_str());
        throw ResourceError("cannot write the sweep claim " + path + "; check free disk space");
    }
    return true;
}

bool names_token(const std::string& path, const std::string& token) {
    const std::optional<ClaimInfo> claim = read_claim_file(path);
    return claim && claim->token == token;
}
}  // namespace

ClaimTiming ClaimTiming::from_environment() {
    ClaimTiming timing;
    if (const char* value = std::getenv("NORMLAB_TEST_CLAIM_STALE_SECONDS"); value && std::atof(value) > 0) {
        timing.stale_after = std::atof(value);
        timing.beat_every = timing.stale_after / 12;
    }
    return timing;
}

PointClaim::PointClaim(std::string sweep_dir, std::string id, std::string token, ClaimTiming timing)
    : m_sweep_dir(std::move(sweep_dir)), m_id(std::move(id)), m_token(std::move(token)), m_timing(timing) {}

std::optional<ClaimInfo> PointClaim::read(const std::string& sweep_dir, const std::string& id) {
    return read_claim_file(claim_path(sweep_dir, id));
}

bool PointClaim::looks_live(const std::string& sweep_dir, const std::string& id, const ClaimInfo& claim,
                            double stale_after) {
    if (claim.process_gone()) return false;
    std::error_code error;
    auto written = fs::last_write_time(beat_path(sweep_dir, id, claim.key), error);
    if (error) written = fs::last_write_time(claim_path(sweep_dir, id), error);
    if (error) return false;
    return std::chrono::duration<double>(fs::file_time_type::clock::now() - written).count() <= stale_after;
}

std::optional<PointClaim> PointClaim::acquire(const std::string& sweep_dir, const std::string& id,
                                              const ClaimTiming& timing) {
    real_sweep_folder(sweep_dir, "claims");
    if (const std::optional<std::string> problem = claim_file_problem(sweep_dir, id))
        throw InputError(*problem);
    const std::string path = claim_path(sweep_dir, id), token = new_claim_token();
    PointClaim ours(sweep_dir, id, token, timing);  // releases (removes our beat) unless returned
    write_file_atomically(beat_path(sweep_dir, id, token), "0\n");  // never a claim of ours without one
    for (int attempt = 0; attempt < 3; ++attempt) {
        if (create_exclusive(path, claim_text(token))) return ours;
        const std::optional<Observed> seen = observe(sweep_dir, id);
        const std::optional<ClaimInfo> current = read_claim_file(path);
        if (!seen || !current || current->key != seen->key) continue;  // released or replaced meanwhile
        if (!current->process_gone() && !unchanged_for(sweep_dir, id, *seen, timing.stale_after))
            return std::nullopt;  // alive
        test_pause("judged");
        const std::string marker = takeover_path(sweep_dir, id, seen->key, seen->takeovers + 1);
        if (!create_exclusive(marker, claim_text(token))) return std::nullopt;  // another worker won it
        test_pause("marker");
        const std::optional<ClaimInfo> still = read_claim_file(path);
        if (!still || still->key != seen->key) {
            ::unlink(marker.c_str());
            if (!still) continue;  // released meanwhile: create it afresh
            return std::nullopt;
        }
        write_file_atomically(path, claim_text(token));
        for (int n = 1; n <= seen->takeovers + 1; ++n)
            ::unlink(takeover_path(sweep_dir, id, seen->key, n).c_str());
        ::unlink(beat_path(sweep_dir, id, seen->key).c_str());
        test_pause("replaced");
        return ours;
    }
    return std::nullopt;
}

PointClaim::PointClaim(PointClaim&& other) noexcept
    : m_sweep_dir(std::move(other.m_sweep_dir)),
      m_id(std::move(other.m_id)),
      m_token(std::move(other.m_token)),
      m_timing(other.m_timing),
      m_beats(other.m_beats) {
    other.m_token.clear();
}

PointClaim::~PointClaim() {
    if (m_token.empty()) return;
    if (holds()) ::unlink(claim_path(m_sweep_dir, m_id).c_str());
    ::unlink(beat_path(m_sweep_dir, m_id, m_token).c_str());
}

bool PointClaim::holds() const {
    return names_token(claim_path(m_sweep_dir, m_id), m_token);
}

void PointClaim::check() const {
    if (!holds())
        throw WriteFenceLost("this worker lost its claim on sweep point " + m_id +
                             " (it was stopped or silent for " +
                             std::to_string(static_cast<int>(m_timing.stale_after)) +
                             " s and another worker took the point over); it stops without writing more");
}

WriteFence PointClaim::fence() const {
    return [this] { check(); };
}

void PointClaim::heartbeat() {
    check();
    write_file_atomically(beat_path(m_sweep_dir, m_id, m_token), std::to_string(++m_beats) + "\n", fence());
}

}  // namespace normlab
