// A worker's claim on one sweep point, so that any number of workers (this machine's jobs, Slurm
// array tasks, GNU parallel, ...) run each point once: S/claims/<id>.json names the host, the process
// and a heartbeat the worker refreshes while it trains. A claim whose heartbeat is older than a
// minute, or whose process on this host is gone, is stale and taken over.
#pragma once
#include <optional>
#include <string>

namespace normlab {

struct ClaimInfo {
    std::string host;
    long pid = 0;
    double heartbeat = 0.0;  // unix seconds
    // Alive: a recent heartbeat, and (on this host) a process that still exists.
    bool live(double stale_after_seconds) const;
};

class PointClaim {
  public:
    static constexpr double kStaleAfterSeconds = 60.0;

    // Claims the point for this process; nothing when a live claim of another worker holds it.
    static std::optional<PointClaim> acquire(const std::string& sweep_dir, const std::string& id,
                                             double stale_after_seconds = kStaleAfterSeconds);
    // The current claim on a point, if any (readable).
    static std::optional<ClaimInfo> read(const std::string& sweep_dir, const std::string& id);

    PointClaim(PointClaim&& other) noexcept;
    PointClaim& operator=(PointClaim&&) = delete;
    ~PointClaim();  // releases the claim (if it is still this process's)

    void heartbeat();  // refreshes the heartbeat time

  private:
    explicit PointClaim(std::string path) : m_path(std::move(path)) {}
    std::string m_path;
};

}  // namespace normlab
